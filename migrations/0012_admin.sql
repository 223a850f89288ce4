-- The admin API (issue 16, part A): app secret keys that rotate with an overlap, the audit log,
-- roles/claims/metadata on users, per-app default metadata, and what introspection reads.

-- App secret keys: SHA-256 hashes only (the key is 256 random bits, shown once). Several may be
-- valid at once while a rotation overlaps: the old key keeps working until `expires_at`.
CREATE TABLE app_secret_keys (
    app_id     text NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    id         text NOT NULL,                         -- skid_…: names the key in the audit log
    key_hash   bytea NOT NULL UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz,                           -- NULL: no end set (the newest key)
    PRIMARY KEY (app_id, id)
);
INSERT INTO app_secret_keys (app_id, id, key_hash, created_at)
SELECT id, 'skid_' || substr(md5(id), 1, 26), secret_key_hash, created_at FROM apps;

-- The gateway resolves a presented secret key without reading any hash: it passes the hash of
-- what it was given and learns only the app, key id and end of a live key (or nothing).
CREATE FUNCTION secret_key_owner(p_hash bytea)
RETURNS TABLE (app_id text, key_id text, expires_at timestamptz)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
    SELECT k.app_id, k.id, k.expires_at FROM app_secret_keys k
    WHERE k.key_hash = p_hash AND (k.expires_at IS NULL OR k.expires_at > now())
$$;

-- Introspection of a refresh token (RFC 7662) by the gateway, which may not read refresh
-- token hashes: a row only for an unspent, unexpired token of this app whose session lives and
-- whose user is not disabled.
CREATE FUNCTION refresh_token_introspect(p_app text, p_hash bytea)
RETURNS TABLE (session_id text, uid text, amr text[], issued_at timestamptz, expires_at timestamptz)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
    SELECT s.id, s.uid, s.amr, t.created_at, least(t.expires_at, s.expires_at)
    FROM refresh_tokens t
    JOIN sessions s ON s.app_id = t.app_id AND s.id = t.session_id
    JOIN users u ON u.app_id = s.app_id AND u.uid = s.uid
    WHERE t.app_id = p_app AND t.token_hash = p_hash AND t.spent_at IS NULL AND t.expires_at > now()
      AND s.ended_at IS NULL AND s.expires_at > now() AND NOT u.disabled
$$;

-- Every admin call and security event: who (actor), what (action), on whom (target), when,
-- from where (ip) and which request. Append-only for every process: no role may change a row.
CREATE TABLE audit_log (
    app_id     text NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    id         bigserial,
    at         timestamptz NOT NULL DEFAULT now(),
    actor      text NOT NULL,                         -- secret_key:<key id>, user:<uid>, system
    action     text NOT NULL,                         -- e.g. admin.users.disable, user.disabled
    target     text,                                  -- user:<uid>, session:<id>, app
    ip         text,
    request_id text,
    detail     jsonb NOT NULL DEFAULT '{}',
    PRIMARY KEY (app_id, id)
);
CREATE INDEX audit_log_by_target ON audit_log (app_id, target, id);

-- Roles are in 0001; claims and metadata are JSON objects (the gateway bounds their size).
ALTER TABLE users ADD COLUMN custom_claims jsonb NOT NULL DEFAULT '{}';
ALTER TABLE users ADD COLUMN app_metadata jsonb NOT NULL DEFAULT '{}';
ALTER TABLE users ADD COLUMN user_metadata jsonb NOT NULL DEFAULT '{}';

-- Metadata a new user of the app starts with ({"app_metadata": {…}, "user_metadata": {…}}).
ALTER TABLE apps ADD COLUMN default_metadata jsonb NOT NULL DEFAULT '{}';

-- The gateway's read model gains the new columns (appended: CREATE OR REPLACE keeps the rest).
CREATE OR REPLACE VIEW user_profiles AS
SELECT u.app_id, u.uid, u.email, u.email_verified, u.phone, u.username, u.first_name, u.last_name,
       u.photo_url, u.password_hash IS NOT NULL AS has_password, u.is_guest, u.disabled, u.roles,
       u.created_at, u.updated_at,
       ARRAY(SELECT i.provider FROM user_identities i WHERE i.app_id = u.app_id AND i.uid = u.uid
             ORDER BY i.provider) AS identity_providers,
       u.custom_claims, u.app_metadata, u.user_metadata
FROM users u;

-- identity_gateway: resolves secret keys and introspects refresh tokens through the functions
-- above, appends audit rows (never updates or deletes them) and reads them for GET /v1/admin/audit.
GRANT EXECUTE ON FUNCTION secret_key_owner(bytea), refresh_token_introspect(text, bytea) TO identity_gateway;
GRANT SELECT, INSERT ON audit_log TO identity_gateway;
GRANT USAGE ON SEQUENCE audit_log_id_seq TO identity_gateway;
GRANT SELECT (default_metadata) ON apps TO identity_gateway;

-- identity_token_worker: rotates secret keys (hashing is its job), writes users' new columns
-- (table-wide already), reads default metadata for new users, and audits security events.
GRANT SELECT (app_id, id, created_at, expires_at), INSERT, UPDATE (expires_at) ON app_secret_keys TO identity_token_worker;
GRANT SELECT (default_metadata), UPDATE (default_metadata) ON apps TO identity_token_worker;
GRANT INSERT ON audit_log TO identity_token_worker;
GRANT USAGE ON SEQUENCE audit_log_id_seq TO identity_token_worker;

-- identityctl: a new app's first secret key, and rotation; it never reads a hash back.
GRANT SELECT (app_id, id, created_at, expires_at), INSERT, UPDATE (expires_at) ON app_secret_keys TO identityctl;
GRANT SELECT (default_metadata), UPDATE (default_metadata) ON apps TO identityctl;
