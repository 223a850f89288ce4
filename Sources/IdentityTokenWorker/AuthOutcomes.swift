import Foundation
import IdentityKit

/// Counts failed sign-ins, sign-ups and refreshes from a command and its reply. A sign-in that
/// succeeds or opens an MFA challenge is counted where that is decided (`SignInOutcome.answer`,
/// and the MFA step in `MfaVerification`); one that fails ends before any decision, with an
/// error reply, and is counted here.
enum AuthOutcomes {
    /// The sign-in method of each command that signs in.
    static let signInMethods: [String: String] = [
        TokenV1.SignIn.protoName: "password",
        TokenV1.GuestSignIn.protoName: "guest",
        TokenV1.VerifyEmailCode.protoName: "email_code",
        TokenV1.ProviderSignIn.protoName: "provider",
        TokenV1.VerifyPhoneCode.protoName: "phone",
        TokenV1.VerifyPasskey.protoName: "passkey",
        TokenV1.VerifyMfa.protoName: "mfa",
    ]

    /// Records what `reply` says about `message`, and hands the reply back unchanged.
    static func record(_ message: BusMessage, _ reply: CommandConsumer.Reply) -> CommandConsumer.Reply {
        let app = Metrics.shared.appLabel(message.appId)
        let outcome = ServiceMetrics.outcome(replyType: reply.type, body: reply.body)
        if let method = signInMethods[message.type] {
            if outcome != "ok" { ServiceMetrics.signIns.inc(method, signInOutcome(outcome), app) }
        } else if message.type == TokenV1.SignUp.protoName {
            ServiceMetrics.signUps.inc(outcome == "ok" ? "success" : outcome, app)
        } else if message.type == TokenV1.Refresh.protoName {
            ServiceMetrics.refreshes.inc(outcome == "ok" ? "success" : outcome, app)
        }
        return reply
    }

    /// A failed sign-in's outcome: invalid_credential, disabled, rate_limited or error.
    static func signInOutcome(_ outcome: String) -> String {
        switch outcome {
        case "auth/invalid-credential", "auth/invalid-code", "auth/code-expired", "auth/invalid-token": "invalid_credential"
        case "auth/user-disabled": "disabled"
        case "auth/rate-limited": "rate_limited"
        default: "error"
        }
    }
}
