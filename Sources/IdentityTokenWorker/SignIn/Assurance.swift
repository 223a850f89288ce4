/// What a sign-in proved (docs/api-contract.md, "Tokens and sessions"): the methods used, as the
/// access token's `amr` (RFC 8176 values where one fits: `pwd`, `otp`, `hwk`, `mfa`; provider names
/// otherwise), and the authenticator assurance level they reach, as its `aal`. Stored on the
/// session, so refreshed tokens keep what the sign-in proved.
struct Assurance: Sendable, Equatable {
    let amr: [String]
    /// 1: one factor. 2: two factors, or one that is two by itself (a passkey with user verification).
    let aal: Int

    static let password = Assurance(amr: ["pwd"], aal: 1)
    /// A code mailed to the address: something the user has (the mailbox), not a second factor.
    static let emailCode = Assurance(amr: ["otp"], aal: 1)
    static let guest = Assurance(amr: ["guest"], aal: 1)
    /// A code texted to the number (RFC 8176 `sms`): something the user has, one factor.
    static let phoneCode = Assurance(amr: ["sms"], aal: 1)

    /// A passkey: something the user has (`hwk`); with user verification (PIN or biometric on
    /// the authenticator) also something they know or are, two factors by itself: `mfa`, `aal` 2.
    static func passkey(userVerified: Bool) -> Assurance {
        userVerified ? Assurance(amr: ["hwk", "mfa"], aal: 2) : Assurance(amr: ["hwk"], aal: 1)
    }

    /// A sign-in through Apple, Google or Firebase, named after the provider.
    static func provider(_ name: String) -> Assurance { Assurance(amr: [name], aal: 1) }

    /// The `method` label of `identity_sign_ins_total` for this first factor.
    var metricMethod: String {
        switch amr.first {
        case "pwd": "password"
        case "otp": "email_code"
        case "sms": "phone"
        case "guest": "guest"
        case "hwk": "passkey"
        default: "provider"
        }
    }

    /// This first factor completed by a second: its method joins `amr` with `mfa`, at `aal` 2.
    func completed(by secondFactorAMR: String) -> Assurance {
        var methods = amr
        for method in [secondFactorAMR, "mfa"] where !methods.contains(method) { methods.append(method) }
        return Assurance(amr: methods, aal: 2)
    }
}
