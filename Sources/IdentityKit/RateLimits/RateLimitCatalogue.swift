/// Every limit the service applies, with its default (docs/api-contract.md, "Operating the
/// service": rate limits, where it names one; our choice otherwise, said in docs/flows.md).
public enum RateLimitCatalogue {
    // Password sign-in and provider sign-ins.
    public static let signInPerIP = RateLimitPolicy(name: "sign_in_per_ip", count: 100, window: 60)
    public static let signInPerIdentifier = RateLimitPolicy(name: "sign_in_per_identifier", count: 10, window: 900)
    /// A device that signed in before (its device token, `SignInDeviceStore`), once the
    /// identifier's budget is spent: the owner keeps this budget whoever spent the other.
    public static let signInPerDevice = RateLimitPolicy(name: "sign_in_per_device", count: 10, window: 900)
    public static let signUpPerIP = RateLimitPolicy(name: "sign_up_per_ip", count: 20, window: 3600)
    public static let guestPerIP = RateLimitPolicy(name: "guest_per_ip", count: 30, window: 3600)
    public static let noncePerIP = RateLimitPolicy(name: "nonce_per_ip", count: 60, window: 60)
    public static let refreshPerIP = RateLimitPolicy(name: "refresh_per_ip", count: 600, window: 60)
    // Mailed codes (sign-in codes, password reset, email verification) share one budget per
    // address: a reset is as good a way into an account as a sign-in code.
    public static let codeSendPerIP = RateLimitPolicy(name: "code_send_per_ip", count: 30, window: 3600)
    public static let codeSendPerAddress = RateLimitPolicy(name: "code_send_per_address", count: 5, window: 3600)
    public static let codeResendPerAddress = RateLimitPolicy(name: "code_resend_per_address", count: 1, window: 60)
    public static let codeVerifyPerIP = RateLimitPolicy(name: "code_verify_per_ip", count: 100, window: 3600)
    /// Wrong guesses per address, whatever the number of codes sent (counted by the token
    /// worker in the transaction that checks the code; a right guess is given back).
    public static let codeGuessPerAddress = RateLimitPolicy(name: "code_guess_per_address", count: 20, window: 3600)
    /// Current-password checks of a signed-in user (password change, account deletion): a
    /// stolen access token must not become a password oracle.
    public static let passwordCheckPerUser = RateLimitPolicy(name: "password_check_per_user", count: 10, window: 900)
    /// Admin API calls of one app (its backend, with the secret key): a leaked key or a runaway
    /// script cannot flood the workers or the audit log. Introspection is not counted here.
    public static let adminPerApp = RateLimitPolicy(name: "admin_per_app", count: 3000, window: 60)
    /// Wrong second-factor codes per user across every MFA challenge (counted by the token
    /// worker; a right code is given back): opening new challenges buys no new guesses. Kept
    /// apart from the password limits, so neither can lock the other.
    public static let mfaGuessPerUser = RateLimitPolicy(name: "mfa_guess_per_user", count: 20, window: 3600)
    /// Second-factor verifications per IP, before any work.
    public static let mfaVerifyPerIP = RateLimitPolicy(name: "mfa_verify_per_ip", count: 100, window: 3600)

    /// Passkey sign-in options: each writes a flow row, and an identifier's answer is the same
    /// whether or not it has an account, so this per-IP budget is the only brake on probing.
    public static let passkeyOptionsPerIP = RateLimitPolicy(name: "passkey_options_per_ip", count: 100, window: 60)

    /// SMS-pumping caps, applied by the token worker before an SMS is queued (`SmsPolicy`). A
    /// refusal answers like a sent code (no oracle); it is logged and counted
    /// (`identity_sms_refusals_total`). Per number: the email-code budget (5 an hour, 1 a
    /// minute); per IP; per app, for all its numbers.
    public static let smsSendPerNumber = RateLimitPolicy(name: "sms_send_per_number", count: 5, window: 3600)
    public static let smsResendPerNumber = RateLimitPolicy(name: "sms_resend_per_number", count: 1, window: 60)
    public static let smsSendPerIP = RateLimitPolicy(name: "sms_send_per_ip", count: 10, window: 3600)
    public static let smsSendPerApp = RateLimitPolicy(name: "sms_send_per_app", count: 1000, window: 3600)

    /// GraphQL requests per IP, before parsing: what a request costs there (parse, validate,
    /// introspection) is capped by the document limits, this caps how many. The core calls a
    /// request makes keep their own route limits besides.
    public static let graphqlPerIP = RateLimitPolicy(name: "graphql_per_ip", count: 600, window: 60)

    /// Apple's server-to-server notifications of one app (the path names it; Apple sends no
    /// key): each costs a signature check in the provider worker. Apple retries a refused one,
    /// so a flood of forgeries delays the real ones without losing them.
    public static let appleNotificationsPerApp = RateLimitPolicy(name: "apple_notifications_per_app", count: 1000, window: 60)

    /// The web console (`/console`), counted against the console app before any other work.
    /// Sign-in forms (password and code) per IP: the console app's own sign-in limits
    /// (`sign_in_per_ip`, `sign_in_per_identifier` per console account, `mfa_verify_per_ip`)
    /// apply besides, since the console signs in through them. Every other form per IP and per
    /// signed-in console account: a stolen console session cannot flood the workers or the
    /// audit log.
    public static let consoleSignInPerIP = RateLimitPolicy(name: "console_sign_in_per_ip", count: 30, window: 900)
    public static let consolePostPerIP = RateLimitPolicy(name: "console_post_per_ip", count: 120, window: 60)
    public static let consolePostPerAccount = RateLimitPolicy(name: "console_post_per_account", count: 60, window: 60)
    /// Invitations sent from the console's Members page per console account: each is a mail to
    /// an address the owner typed, so a stolen owner session cannot turn the service into a
    /// mailer.
    public static let consoleInvitePerAccount = RateLimitPolicy(name: "console_invite_per_account", count: 20, window: 3600)

    public static let all: [RateLimitPolicy] = [
        signInPerIP, signInPerIdentifier, signUpPerIP, guestPerIP, noncePerIP, refreshPerIP,
        codeSendPerIP, codeSendPerAddress, codeResendPerAddress, codeVerifyPerIP, codeGuessPerAddress,
        passwordCheckPerUser, adminPerApp, mfaGuessPerUser, mfaVerifyPerIP, passkeyOptionsPerIP,
        smsSendPerNumber, smsResendPerNumber, smsSendPerIP, smsSendPerApp, graphqlPerIP, signInPerDevice,
        appleNotificationsPerApp, consoleSignInPerIP, consolePostPerIP, consolePostPerAccount,
        consoleInvitePerAccount,
    ]

    public static func named(_ name: String) -> RateLimitPolicy? { all.first { $0.name == name } }
}
