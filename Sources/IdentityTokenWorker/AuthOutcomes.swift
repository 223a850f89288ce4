import Foundation
import IdentityKit

/// Counts sign-ins, sign-ups and refreshes from a command and its reply, beside the flows
/// rather than inside them: the reply already says how each ended.
enum AuthOutcomes {
    /// The sign-in method of each first-factor command.
    static let signInMethods: [String: String] = [
        TokenV1.SignIn.protoName: "password",
        TokenV1.GuestSignIn.protoName: "guest",
        TokenV1.VerifyEmailCode.protoName: "email_code",
        TokenV1.ProviderSignIn.protoName: "provider",
    ]

    /// Records what `reply` says about `message`, and hands the reply back unchanged.
    static func record(_ message: BusMessage, _ reply: CommandConsumer.Reply) -> CommandConsumer.Reply {
        let app = Metrics.shared.appLabel(message.appId)
        let outcome = ServiceMetrics.outcome(replyType: reply.type, body: reply.body)
        if let method = signInMethods[message.type] {
            ServiceMetrics.signIns.inc(method, signInOutcome(outcome, replyType: reply.type), app)
        } else if message.type == TokenV1.SignUp.protoName {
            ServiceMetrics.signUps.inc(outcome == "ok" ? "success" : outcome, app)
        } else if message.type == TokenV1.Refresh.protoName {
            ServiceMetrics.refreshes.inc(outcome == "ok" ? "success" : outcome, app)
        }
        return reply
    }

    /// success, invalid_credential, disabled, mfa_challenge, rate_limited or error.
    static func signInOutcome(_ outcome: String, replyType: String) -> String {
        switch outcome {
        case "ok": replyType.hasSuffix("Challenge") ? "mfa_challenge" : "success"
        case "auth/invalid-credential", "auth/invalid-code", "auth/code-expired", "auth/invalid-token": "invalid_credential"
        case "auth/user-disabled": "disabled"
        case "auth/rate-limited": "rate_limited"
        default: "error"
        }
    }
}
