/// Ways in (docs/api-contract.md, "Account"): what can sign an account in without one of its
/// sessions. Every removal of a way in (unlinking a provider, deleting a passkey) asks the same
/// question of this one count, so no removal forgets a kind the others count and leaves an account
/// with no way back, or refuses a removal another way in makes safe.
public struct WaysIn: Sendable, Equatable {
    public var password: Bool
    /// Linked provider identities (one per provider).
    public var providers: Int
    public var passkeys: Int
    /// A verified phone the app sends sign-in codes to.
    public var phone: Bool
    /// A verified email: every app signs in by mailed code, so a verified address is a way in.
    public var email: Bool

    public init(password: Bool = false, providers: Int = 0, passkeys: Int = 0, phone: Bool = false,
                email: Bool = false) {
        self.password = password
        self.providers = providers
        self.passkeys = passkeys
        self.phone = phone
        self.email = email
    }

    public var count: Int {
        (password ? 1 : 0) + providers + passkeys + (phone ? 1 : 0) + (email ? 1 : 0)
    }

    /// Whether one of them may go: another must stay. The caller has checked that the one it
    /// removes is among them (else 404 comes first).
    public var oneMayGo: Bool { count > 1 }

    /// Whether a phone counts: verified, and its calling code one the app lets SMS go to (a
    /// number the app no longer texts cannot receive a sign-in code).
    public static func phoneCounts(verified phone: String?, allowedCallingCodes: [Int]) -> Bool {
        guard let phone, let code = PhoneNumber.callingCode(ofE164: phone) else { return false }
        return allowedCallingCodes.contains(code)
    }
}
