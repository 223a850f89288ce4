-- A live session's bytes (the session row, its refresh tokens, their indexes), narrowed where
-- nothing that reads them changes:
--
-- 1. The command that started a session (redelivery answers from it) was kept as its text key
--    (a 26-character message id, a dot and 64 hex digits) in the row and again in a unique
--    index with the app id. It is now kept as the SHA-256 of `app_id:key` (32 bytes), unique
--    alone: the app id is inside the hash, so the index keeps one command per app as before
--    without repeating the app id in every entry. The token worker finds a session by it the
--    same way (SessionStore.startedBy hashes the same text).
--    Additive, for a rolling upgrade: the previous release still writes and reads `command_id`,
--    so it stays (NULL in the rows this release makes; its partial index covers only rows that
--    have one, and empties as they end and are purged). This release looks a command up by
--    either, so a command redelivered across the upgrade still finds its session.
ALTER TABLE sessions ADD COLUMN command_key bytea;
CREATE UNIQUE INDEX sessions_by_command_key ON sessions (command_key) WHERE command_key IS NOT NULL;

-- 2. A refresh token is found by its hash, the SHA-256 of 256 random bits (or of an HMAC, for a
--    session's first): unique across apps already, so the key needs no app id in front of it.
--    Every lookup still names the app (`app_id = $1 AND token_hash = $2`), now checked on the row.
ALTER TABLE refresh_tokens DROP CONSTRAINT refresh_tokens_pkey;
ALTER TABLE refresh_tokens ADD PRIMARY KEY (token_hash);

-- 3. Tokens by session serve the cascade when a session row is purged; session ids are ULIDs,
--    unique across apps, so the session id alone finds them.
DROP INDEX refresh_tokens_by_session;
CREATE INDEX refresh_tokens_by_session ON refresh_tokens (session_id);

-- 4. Two tables that grew with traffic and had no purge: the mail ledger's sent messages
--    (after IDENTITY_RETENTION_SECONDS) and finished webhook deliveries with their attempts
--    (after IDENTITY_WEBHOOK_DELIVERY_RETENTION_SECONDS). The revocation worker's purge deletes
--    them by key, reading only what it selects on.
GRANT SELECT (message_id, status, updated_at), DELETE ON mail_deliveries TO identity_revocation_worker;
GRANT SELECT (id, state, finished_at), DELETE ON webhook_deliveries TO identity_revocation_worker;
CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (finished_at) WHERE state <> 'pending';
