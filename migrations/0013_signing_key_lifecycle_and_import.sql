-- Signing-key lifecycle (next → current → previous → retired) and user import (issue 16).
--
-- A rotation adds a key as 'next' that starts signing at activates_at, one JWKS cache period
-- (apps.jwks_cache_seconds, also the JWKS max-age) after it is first published; the key it
-- replaces gets retires_at, when every token it signed has expired. Which key signs and which
-- are published follows from these times, so no process has to flip a status at the right
-- moment; a rotation writes the statuses that time has made true since the one before.
ALTER TABLE signing_keys DROP CONSTRAINT signing_keys_status_check;
ALTER TABLE signing_keys ADD CONSTRAINT signing_keys_status_check
    CHECK (status IN ('next', 'current', 'previous', 'retired'));
ALTER TABLE signing_keys ADD COLUMN activates_at timestamptz;
UPDATE signing_keys SET activates_at = created_at;
ALTER TABLE signing_keys ALTER COLUMN activates_at SET NOT NULL, ALTER COLUMN activates_at SET DEFAULT now();
ALTER TABLE signing_keys ADD COLUMN retires_at timestamptz;
-- Keys rotated out before this migration had no retirement time: they retire now.
UPDATE signing_keys SET status = 'retired', retires_at = now() WHERE status = 'previous';
ALTER TABLE signing_keys ADD CONSTRAINT signing_keys_alg_check CHECK (alg IN ('RS256', 'ES256', 'EdDSA'));

-- How long clients may cache the app's JWKS: a new key is published this long before it signs.
ALTER TABLE apps ADD COLUMN jwks_cache_seconds integer NOT NULL DEFAULT 300
    CHECK (jwks_cache_seconds BETWEEN 1 AND 86400);

-- Each key's state as of now, from its times: the one definition every reader uses. The
-- current key is the latest one whose activation has come; no private key here.
CREATE VIEW signing_key_states AS
SELECT s.app_id, s.kid, s.alg, s.public_pem, s.activates_at, s.retires_at, s.created_at,
       CASE WHEN s.status = 'retired' OR s.retires_at <= now() THEN 'retired'
            WHEN s.activates_at > now() THEN 'next'
            WHEN s.activates_at = (SELECT max(k.activates_at) FROM signing_keys k
                                   WHERE k.app_id = s.app_id AND k.status <> 'retired' AND k.activates_at <= now()
                                     AND (k.retires_at IS NULL OR k.retires_at > now())) THEN 'current'
            ELSE 'previous' END AS state
FROM signing_keys s;

-- Every process that verifies access tokens reads the published keys and the cache period
-- (the revocation worker too, which checks a caller's token on main: migration 0015).
GRANT SELECT ON signing_key_states TO identity_gateway, identity_token_worker, identity_revocation_worker, identityctl;
GRANT SELECT (activates_at, retires_at) ON signing_keys
    TO identity_gateway, identity_token_worker, identity_revocation_worker;
GRANT SELECT (jwks_cache_seconds) ON apps TO identity_gateway, identity_token_worker, identity_revocation_worker;

-- The token worker rotates keys for POST /v1/admin/keys/rotate (it holds the master key).
GRANT INSERT (app_id, kid, alg, public_pem, private_key_enc, status, activates_at), UPDATE (status, retires_at)
    ON signing_keys TO identity_token_worker;

-- identityctl rotates keys (reads times and statuses, never a sealed key) and sets the cache period.
GRANT SELECT (activates_at, retires_at), INSERT (activates_at), UPDATE (status, retires_at)
    ON signing_keys TO identityctl;
GRANT SELECT (jwks_cache_seconds), UPDATE (jwks_cache_seconds) ON apps TO identityctl;

-- identityctl imports users (`users import`): it writes users, their provider identities and
-- their user.created events, and reads none of them back (no SELECT on password_hash).
GRANT INSERT (app_id, uid, email, email_verified, phone, username, first_name, last_name, photo_url, password_hash)
    ON users TO identityctl;
GRANT INSERT (app_id, provider, subject, uid, email) ON user_identities TO identityctl;
GRANT INSERT ON outbox TO identityctl;
GRANT USAGE ON SEQUENCE outbox_id_seq TO identityctl;
