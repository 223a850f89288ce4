import IdentityKit

/// A lane's SMS breaker opening: the app's texts of that lane stop for `openSeconds`. Someone
/// is pumping SMS, or the threshold is too low for real traffic: either way a person must look,
/// so the trip is an `sms_breakers` row (what stops the sends), an audit row the app's team
/// sees, a counter to alert on and a warning line. None of them holds the number; the calling
/// code is kept, as it tells which destination is being pumped.
struct SmsBreakerTrip {
    let appId: String
    let lane: SmsLane
    let threshold: Int
    let openSeconds: Int
    /// The number whose send tripped it (E.164): only its calling code is recorded.
    let phone: String

    /// In the send's transaction, which commits even though the send is refused: the breaker
    /// and its audit row stay, or neither does.
    func record(on connection: PGConnection) throws {
        try connection.query("""
            INSERT INTO sms_breakers (app_id, lane, opened_at, open_until)
            VALUES ($1, $2, now(), now() + make_interval(secs => $3))
            ON CONFLICT (app_id, lane) DO UPDATE SET opened_at = now(), open_until = EXCLUDED.open_until
            """, [appId, lane.rawValue, String(openSeconds)])
        let callingCode = PhoneNumber.callingCode(ofE164: phone).map { "+\($0)" } ?? "unknown"
        try AuditLog.append(appId: appId, AuditLog.Entry(
            actor: "system", action: "sms.breaker_opened", target: "sms_breaker:" + lane.rawValue,
            detail: .object(["lane": .string(lane.rawValue), "breaker_hourly": JSONValue(threshold),
                             "open_seconds": JSONValue(openSeconds), "calling_code": .string(callingCode)])),
            on: connection)
        ServiceMetrics.smsBreakerTrips.inc(lane.rawValue, Metrics.shared.appLabel(appId))
        Log.warning("sms breaker opened: the lane's SMS attempts passed the app's hourly threshold; its texts stop",
                    ["app_id": appId, "lane": lane.rawValue, "breaker_hourly": threshold,
                     "open_seconds": openSeconds, "calling_code": callingCode])
    }
}
