/// Makes mail delivery idempotent by message id: a message is claimed before sending and
/// marked sent after, so a redelivered message that was already sent is dropped. A claim left
/// by a worker that died mid-send is taken over after two minutes.
public struct DeliveryLedger: Sendable {
    let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    /// True when this worker may send the message now.
    /// Whether Apple said the address (a private-relay address) does not forward now: nothing
    /// is sent to it until Apple says it does again.
    public func isUndeliverable(appId: String, email: String) throws -> Bool {
        try pool.withConnection { connection in
            try !connection.query("SELECT 1 FROM undeliverable_emails WHERE app_id = $1 AND email_lower = lower($2)",
                                  [appId, email]).isEmpty
        }
    }

    public func claim(messageId: String, appId: String) throws -> Bool {
        try pool.withConnection { connection in
            try !connection.query("""
                INSERT INTO mail_deliveries (message_id, app_id, status) VALUES ($1, $2, 'sending')
                ON CONFLICT (message_id) DO UPDATE SET updated_at = now()
                WHERE mail_deliveries.status = 'sending' AND mail_deliveries.updated_at < now() - interval '2 minutes'
                RETURNING 1
                """, [messageId, appId]).isEmpty
        }
    }

    public func markSent(messageId: String) throws {
        try pool.withConnection { connection in
            try connection.query("UPDATE mail_deliveries SET status = 'sent', updated_at = now() WHERE message_id = $1",
                                 [messageId])
        }
    }

    /// Gives the claim back after a failed attempt, so the retry can claim it.
    public func release(messageId: String) throws {
        try pool.withConnection { connection in
            try connection.query("DELETE FROM mail_deliveries WHERE message_id = $1 AND status = 'sending'", [messageId])
        }
    }
}
