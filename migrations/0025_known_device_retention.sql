-- Known devices (security alerts' "new device") are kept while they are used: each sign-in
-- from a known device moves its last_seen_at (at most once a day, so a busy account does not
-- write on every sign-in), and the retention purge forgets devices unseen for
-- IDENTITY_KNOWN_DEVICE_RETENTION_SECONDS. Before this, the table only grew.
ALTER TABLE user_known_devices ADD COLUMN last_seen_at timestamptz NOT NULL DEFAULT now();
CREATE INDEX user_known_devices_last_seen ON user_known_devices (last_seen_at);

GRANT UPDATE (last_seen_at) ON user_known_devices TO identity_token_worker;
-- The purge deletes by key; the fingerprint is a hash of a user agent, not a secret.
GRANT SELECT (app_id, uid, fingerprint, last_seen_at), DELETE ON user_known_devices TO identity_revocation_worker;
