import IdentityCredentials
import IdentityKit

/// Who can make a text go out, which decides the budgets it is counted against (`SmsPolicy`).
///
/// Anyone on the internet can ask for a phone sign-in code; only an account holder can make the
/// other texts (a phone link code needs a session, an SMS-factor code a session or the right
/// password). Each lane has a breaker and caps of its own: with one breaker per app, a flood of
/// anonymous sends opened it and silently stopped the second-factor codes of users who had
/// passed their password, an account takeover aid (a user locked out of MFA falls back to
/// weaker recovery) and a denial of service. Separate budgets rather than an exemption: the
/// authenticated lane can be pumped too (accounts are cheap), so it keeps a breaker and an
/// app-wide cap, only not the anonymous lane's.
enum SmsLane: String, Sendable, CaseIterable {
    /// `POST /v1/auth/phone/send`.
    case anonymous
    /// Phone linking (`/v1/me/phone`), SMS-factor enrolment and sign-in challenges.
    case authenticated

    /// The prefix of the lane's rate-limit subjects. The anonymous lane keeps the subjects it
    /// always had (its counts carry over an upgrade); the authenticated lane counts apart, per
    /// number too, so an anonymous flood to a user's own number cannot use up that number's
    /// budget for the user's second-factor codes.
    var subjectPrefix: String { self == .anonymous ? "" : "authenticated:" }
}

/// SMS-pumping protection (issue 15): whether a phone code may be sent. Applied in the send's
/// transaction, in this order: the app's allowed calling codes (none until the app sets them),
/// the operator's allowance when the app texts through the operator's shared account
/// (`IDENTITY_SMS_SHARED_CALLING_CODES`), the lane's circuit breaker, then the lane's hourly
/// caps per app, per IP and per number. The caller answers a refusal exactly like a send (no
/// oracle); here it is logged and counted.
struct SmsPolicy: Sendable {
    let settings: SmsSettingsStore
    /// Calling codes the operator's shared SMS account may text (the mailer's `IDENTITY_SMS_*`
    /// account, or its .sms files); apps with an account of their own pay for their own texts.
    let sharedCallingCodes: Set<Int>
    /// How long an opened breaker stops the lane's SMS.
    static let breakerOpenSeconds = 3600

    /// The reason the send is refused, or nil when it may go.
    func refusal(appId: String, phone: String, ip: String, lane: SmsLane, on connection: PGConnection) throws -> String? {
        let app = try settings.settings(appId: appId, on: connection)
        guard let code = PhoneNumber.callingCode(ofE164: phone), app.allowedCallingCodes.contains(code) else {
            return refused("calling_code", appId: appId, lane: lane)
        }
        // Checked at send time too, not only when the app saves its codes: the operator may
        // narrow the allowance after an app saved codes that were allowed then.
        if !app.usesOwnAccount, !sharedCallingCodes.contains(code) {
            return refused("shared_calling_code", appId: appId, lane: lane)
        }
        if try breakerIsOpen(appId: appId, lane: lane, on: connection) { return refused("breaker", appId: appId, lane: lane) }
        // Every send that passed the allowed lists is an attempt the breaker counts, capped or
        // not: a wave of attempts opens it even while the caps hold the sends back. One call
        // takes the breaker's count, then the caps (`rate_limit_take` stops at the first
        // refusal, so a refused breaker charges no cap).
        let prefix = lane.subjectPrefix
        let attempts = RateLimitStore.Check(RateLimitPolicy(name: "sms_breaker", count: app.breakerHourly, window: 3600),
                                            subject: prefix + "app")
        let number = prefix + RateLimitStore.hashedSubject(phone)
        let caps = [RateLimitStore.Check(RateLimitCatalogue.smsSendPerApp, subject: prefix + "app"),
                    RateLimitStore.Check(RateLimitCatalogue.smsSendPerIP, subject: prefix + RateLimitStore.ipSubject(ip)),
                    RateLimitStore.Check(RateLimitCatalogue.smsResendPerNumber, subject: number),
                    RateLimitStore.Check(RateLimitCatalogue.smsSendPerNumber, subject: number)]
        if let last = try RateLimitStore.take(appId: appId, [attempts] + caps, on: connection).last, last.refused {
            guard last.name == attempts.policy.name else { return refused(last.name, appId: appId, lane: lane) }
            try SmsBreakerTrip(appId: appId, lane: lane, threshold: app.breakerHourly,
                               openSeconds: Self.breakerOpenSeconds, phone: phone).record(on: connection)
            return refused("breaker", appId: appId, lane: lane)
        }
        return nil
    }

    private func refused(_ reason: String, appId: String, lane: SmsLane) -> String {
        ServiceMetrics.smsRefusals.inc(reason, Metrics.shared.appLabel(appId))
        // The number is not logged: the log is not a list of who was texted.
        Log.warning("phone code not sent (SMS policy); answered as sent",
                    ["app_id": appId, "reason": reason, "lane": lane.rawValue])
        return reason
    }

    private func breakerIsOpen(appId: String, lane: SmsLane, on connection: PGConnection) throws -> Bool {
        try !connection.query("SELECT 1 FROM sms_breakers WHERE app_id = $1 AND lane = $2 AND open_until > now()",
                              [appId, lane.rawValue]).isEmpty
    }
}
