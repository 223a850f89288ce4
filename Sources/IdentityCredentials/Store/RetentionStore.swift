import Foundation
import IdentityKit

/// Deletes what nobody needs any more (docs/api-contract.md, "Operating the service": retention):
/// spent or expired nonces, codes and refresh tokens and ended sessions once `keep` has passed,
/// guests unused for `keepGuests` (with `user.deleted`, as any deleted account), known devices
/// unseen for `keepKnownDevices`, Apple notifications' records once they are too old to come again,
/// the mail ledger's sent messages after `keep`, and finished webhook deliveries after
/// `keepWebhookDeliveries`. Work goes in small batches, each its own short transaction, so a large
/// backlog never holds locks that sign-ins wait on; a try-lock (advisory) lets one purger run at a
/// time however many revocation workers there are.
public struct RetentionStore: Sendable {
    public struct Periods: Sendable {
        public var keep: Int
        public var keepGuests: Int
        /// A known device (security alerts) unseen this long is forgotten: its next sign-in is
        /// a "new device" again.
        public var keepKnownDevices: Int
        /// A webhook delivery that is over (delivered, or given up on) is kept this long for the
        /// delivery log, then goes with its attempts.
        public var keepWebhookDeliveries: Int
        public init(keep: Int, keepGuests: Int, keepKnownDevices: Int, keepWebhookDeliveries: Int = 604_800) {
            self.keep = keep
            self.keepGuests = keepGuests
            self.keepKnownDevices = keepKnownDevices
            self.keepWebhookDeliveries = keepWebhookDeliveries
        }
    }

    /// Rows deleted by one run, by kind.
    public typealias Counts = [String: Int]

    let pool: PGPool
    let batchSize: Int
    /// A stale guest goes as any deleted account does: sessions ended (with their events), then the user.
    private let sessions: SessionStore
    private let users: UserStore
    static let lockKey = 727_275

    public init(pool: PGPool, batchSize: Int = 1000) {
        self.pool = pool
        self.batchSize = batchSize
        sessions = SessionStore(pool: pool)
        users = UserStore(pool: pool)
    }

    /// One run over every kind; nil when another purger holds the lock.
    public func purge(_ periods: Periods) throws -> Counts? {
        try pool.withConnection { connection in
            guard try connection.query("SELECT pg_try_advisory_lock($1) AS locked", [String(Self.lockKey)])
                .first?.bool("locked") == true else { return nil }
            defer { _ = try? connection.query("SELECT pg_advisory_unlock($1)", [String(Self.lockKey)]) }
            let keep = String(periods.keep)
            var counts: Counts = [:]
            counts["nonces"] = try batches(on: connection, """
                DELETE FROM auth_nonces WHERE ctid IN (SELECT ctid FROM auth_nonces
                  WHERE coalesce(spent_at, expires_at) < now() - make_interval(secs => $1) LIMIT $2)
                """, keep)
            // By key, not ctid: the revocation worker's role may not read the table whole
            // (code_hmac; migrations/0010_process_roles.sql).
            counts["codes"] = try batches(on: connection, """
                DELETE FROM verification_codes WHERE (app_id, purpose, email_lower) IN (
                  SELECT app_id, purpose, email_lower FROM verification_codes
                  WHERE expires_at < now() - make_interval(secs => $1) LIMIT $2)
                """, keep)
            counts["refresh_tokens"] = try batches(on: connection, """
                DELETE FROM refresh_tokens WHERE ctid IN (SELECT ctid FROM refresh_tokens
                  WHERE least(coalesce(spent_at, expires_at), expires_at) < now() - make_interval(secs => $1) LIMIT $2)
                """, keep)
            counts["sessions"] = try batches(on: connection, """
                DELETE FROM sessions WHERE (app_id, id) IN (SELECT app_id, id FROM sessions
                  WHERE ended_at < now() - make_interval(secs => $1) LIMIT $2)
                """, keep)
            // An expired MFA challenge can answer nothing any more (by key: token_hash is not
            // the revocation worker's to read).
            counts["mfa_challenges"] = try batches(on: connection, """
                DELETE FROM mfa_challenges WHERE (app_id, id) IN (
                  SELECT app_id, id FROM mfa_challenges WHERE expires_at < now() LIMIT $1)
                """)
            counts["passkey_flows"] = try batches(on: connection, """
                DELETE FROM passkey_flows WHERE (app_id, id) IN (SELECT app_id, id FROM passkey_flows
                  WHERE coalesce(spent_at, expires_at) < now() - make_interval(secs => $1) LIMIT $2)
                """, keep)
            // A console invitation link once used or expired (by key: its hash is not the
            // revocation worker's to read).
            counts["console_invitations"] = try batches(on: connection, """
                DELETE FROM console_invitations WHERE id IN (SELECT id FROM console_invitations
                  WHERE coalesce(accepted_at, expires_at) < now() - make_interval(secs => $1) LIMIT $2)
                """, keep)
            counts["guests"] = try guests(on: connection, keepGuests: periods.keepGuests)
            counts["known_devices"] = try batches(on: connection, """
                DELETE FROM user_known_devices WHERE (app_id, uid, fingerprint) IN (
                  SELECT app_id, uid, fingerprint FROM user_known_devices
                  WHERE last_seen_at < now() - make_interval(secs => $1) LIMIT $2)
                """, String(periods.keepKnownDevices))
            // An Apple notification's record, once the notification is too old to be accepted
            // again (a day's margin over the window, which counts from Apple's `iat`).
            counts["apple_notifications"] = try batches(on: connection, """
                DELETE FROM apple_notifications WHERE (app_id, event_id) IN (
                  SELECT app_id, event_id FROM apple_notifications
                  WHERE received_at < now() - make_interval(secs => $1) LIMIT $2)
                """, String(AppleNotificationWindow.seconds + 86_400))
            // The mail ledger answers a message handed over again; a sent one is not after `keep`.
            counts["mail_deliveries"] = try batches(on: connection, """
                DELETE FROM mail_deliveries WHERE message_id IN (SELECT message_id FROM mail_deliveries
                  WHERE status = 'sent' AND updated_at < now() - make_interval(secs => $1) LIMIT $2)
                """, keep)
            // A finished webhook delivery (its attempts go with it: ON DELETE CASCADE).
            counts["webhook_deliveries"] = try batches(on: connection, """
                DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM webhook_deliveries
                  WHERE state IN ('delivered', 'dead') AND finished_at < now() - make_interval(secs => $1) LIMIT $2)
                """, String(periods.keepWebhookDeliveries))
            // A rate-limit state whose quota is whole again means the same as no row.
            counts["rate_limit_states"] = try batches(on: connection, """
                DELETE FROM rate_limit_state WHERE ctid IN (SELECT ctid FROM rate_limit_state
                  WHERE tat < extract(epoch FROM clock_timestamp()) LIMIT $1)
                """)
            return counts
        }
    }

    /// Runs a `DELETE … LIMIT $n` (the batch size is the last parameter) until it deletes less
    /// than a batch; each batch commits alone (autocommit).
    private func batches(on connection: PGConnection, _ sql: String, _ leading: String...) throws -> Int {
        var total = 0
        while true {
            let deleted = try connection.query(sql + " RETURNING 1", leading + [String(batchSize)]).count
            total += deleted
            if deleted < batchSize { return total }
        }
    }

    /// Guests neither created nor seen (on any session) within `keepGuests`: deleted like any
    /// account, sessions ended with their events, and `user.deleted`.
    private func guests(on connection: PGConnection, keepGuests: Int) throws -> Int {
        var total = 0
        while true {
            let deleted = try pool.transactionOn(connection) { connection -> Int in
                let stale = try connection.query("""
                    SELECT u.app_id, u.uid FROM users u
                    WHERE u.is_guest AND u.created_at < now() - make_interval(secs => $1)
                      AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.app_id = u.app_id AND s.uid = u.uid
                                      AND s.last_seen_at >= now() - make_interval(secs => $1))
                    LIMIT $2 FOR UPDATE OF u SKIP LOCKED
                    """, [String(keepGuests), String(batchSize)])
                for row in stale {
                    let appId = try row.string("app_id"), uid = try row.string("uid")
                    _ = try sessions.end(appId: appId, uid: uid, sessionId: nil, reason: "guest_expired", on: connection)
                    try users.delete(appId: appId, uid: uid, on: connection)
                    try Events.userDeleted(appId: appId, uid: uid, on: connection)
                }
                return stale.count
            }
            total += deleted
            if deleted < batchSize { return total }
        }
    }
}
