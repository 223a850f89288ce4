import IdentityKit

/// SMS-pumping protection (issue 15): whether a phone code may be sent. Applied in the send's
/// transaction, in this order: the app's allowed calling codes (none until the app sets them),
/// the circuit breaker, then the hourly caps per app, per IP and per number. The caller answers
/// a refusal exactly like a send (no oracle); here it is logged and counted.
struct SmsPolicy: Sendable {
    let settings: SmsSettingsStore
    /// How long an opened breaker stops the app's SMS.
    static let breakerOpenSeconds = 3600

    /// The reason the send is refused, or nil when it may go.
    func refusal(appId: String, phone: String, ip: String, on connection: PGConnection) throws -> String? {
        let app = try settings.settings(appId: appId, on: connection)
        guard let code = PhoneNumber.callingCode(ofE164: phone), app.allowedCallingCodes.contains(code) else {
            return refused("calling_code", appId: appId)
        }
        if try breakerIsOpen(appId: appId, on: connection) { return refused("breaker", appId: appId) }
        // Every send that passed the allowed list is an attempt the breaker counts, capped or not:
        // a wave of attempts opens it even while the caps hold the sends back. One call takes
        // the breaker's count, then the caps (`rate_limit_take` stops at the first refusal, so a
        // refused breaker charges no cap).
        let attempts = RateLimitStore.Check(RateLimitPolicy(name: "sms_breaker", count: app.breakerHourly, window: 3600),
                                            subject: "app")
        let number = RateLimitStore.hashedSubject(phone)
        let caps = [RateLimitStore.Check(RateLimitCatalogue.smsSendPerApp, subject: "app"),
                    RateLimitStore.Check(RateLimitCatalogue.smsSendPerIP, subject: RateLimitStore.ipSubject(ip)),
                    RateLimitStore.Check(RateLimitCatalogue.smsResendPerNumber, subject: number),
                    RateLimitStore.Check(RateLimitCatalogue.smsSendPerNumber, subject: number)]
        if let last = try RateLimitStore.take(appId: appId, [attempts] + caps, on: connection).last, last.refused {
            guard last.name == attempts.policy.name else { return refused(last.name, appId: appId) }
            try openBreaker(appId: appId, on: connection)
            Log.error("sms breaker opened: the app's SMS attempts passed its hourly threshold",
                      ["app_id": appId, "breaker_hourly": String(app.breakerHourly),
                       "open_seconds": String(Self.breakerOpenSeconds)])
            return refused("breaker", appId: appId)
        }
        return nil
    }

    private func refused(_ reason: String, appId: String) -> String {
        ServiceMetrics.smsRefusals.inc(reason, Metrics.shared.appLabel(appId))
        // The number is not logged: the log is not a list of who was texted.
        Log.warning("phone code not sent (SMS policy); answered as sent", ["app_id": appId, "reason": reason])
        return reason
    }

    private func breakerIsOpen(appId: String, on connection: PGConnection) throws -> Bool {
        try !connection.query("SELECT 1 FROM sms_breakers WHERE app_id = $1 AND open_until > now()", [appId]).isEmpty
    }

    private func openBreaker(appId: String, on connection: PGConnection) throws {
        try connection.query("""
            INSERT INTO sms_breakers (app_id, opened_at, open_until) VALUES ($1, now(), now() + make_interval(secs => $2))
            ON CONFLICT (app_id) DO UPDATE SET opened_at = now(), open_until = EXCLUDED.open_until
            """, [appId, String(Self.breakerOpenSeconds)])
    }
}
