-- One PostgreSQL role per process kind (issue 11, "Trust between processes"; ARCHITECTURE.md,
-- "Seams": least privilege). The migrating role (identity_owner in the harness) owns every
-- table, view and function; each process logs in as its own role and gets exactly the tables,
-- columns and functions its SQL uses (README, "Database roles", has the table):
--
--   identity_gateway            reads apps (no secret_key_hash), public signing keys, sessions,
--                               devices and the user_profiles view; takes rate limits
--   identity_token_worker       users, sessions, refresh tokens, codes, identities, devices;
--                               sealed signing keys; spends nonces; writes the outbox
--   identity_provider_worker    provider settings (sealed .p8), issues nonces, keeps Apple's
--                               sealed refresh token on an identity
--   identity_mailer_worker      apps (public columns), mail settings, the delivery ledger
--   identity_revocation_worker  ends sessions, relays the outbox, purges (retention)
--   identityctl                 apps and their settings (never reads a secret key hash)
--
-- Roles are cluster-wide, grants are per database. The harness (scripts/services.sh db-roles)
-- creates the roles with LOGIN and passwords before migrating; a role still missing here is
-- created NOLOGIN (an operator then sets LOGIN and a password) when the migrating role may
-- create roles, and otherwise the migration stops with a hint.
DO $$
DECLARE
    r text;
BEGIN
    FOREACH r IN ARRAY ARRAY['identity_gateway', 'identity_token_worker', 'identity_provider_worker',
                             'identity_mailer_worker', 'identity_revocation_worker', 'identityctl'] LOOP
        CONTINUE WHEN EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r);
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = current_user AND (rolsuper OR rolcreaterole)) THEN
            RAISE EXCEPTION 'database role % does not exist, and % may not create it', r, current_user
                USING HINT = 'create the process roles first: scripts/services.sh db-roles DATABASE, '
                             'or CREATE ROLE ... LOGIN PASSWORD ... as a superuser (README, "Database roles")';
        END IF;
        EXECUTE format('CREATE ROLE %I NOLOGIN', r);
    END LOOP;
END
$$;

-- Nothing for everyone: no table, sequence or function of this schema is usable by PUBLIC, and
-- that stays so for what later migrations create (PostgreSQL grants EXECUTE on new functions to
-- PUBLIC unless told otherwise). A new table is readable by no process until a migration grants it.
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
REVOKE ALL ON ALL TABLES IN SCHEMA public FROM PUBLIC;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM PUBLIC;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA public FROM PUBLIC;
ALTER DEFAULT PRIVILEGES REVOKE ALL ON TABLES FROM PUBLIC;
ALTER DEFAULT PRIVILEGES REVOKE ALL ON SEQUENCES FROM PUBLIC;
ALTER DEFAULT PRIVILEGES REVOKE EXECUTE ON FUNCTIONS FROM PUBLIC;
DO $$
BEGIN
    EXECUTE format('REVOKE CONNECT, TEMPORARY ON DATABASE %I FROM PUBLIC', current_database());
    EXECUTE format('GRANT CONNECT ON DATABASE %I TO identity_gateway, identity_token_worker, '
                   'identity_provider_worker, identity_mailer_worker, identity_revocation_worker, identityctl',
                   current_database());
END
$$;
GRANT USAGE ON SCHEMA public TO identity_gateway, identity_token_worker, identity_provider_worker,
    identity_mailer_worker, identity_revocation_worker, identityctl;

-- The gateway's read model of a user: what GET /v1/me shows, and no secret. has_password says
-- whether there is a hash without showing it. A view runs with its owner's rights, so the
-- gateway reads this without any privilege on users or user_identities.
CREATE VIEW user_profiles AS
SELECT u.app_id, u.uid, u.email, u.email_verified, u.phone, u.username, u.first_name, u.last_name,
       u.photo_url, u.password_hash IS NOT NULL AS has_password, u.is_guest, u.disabled, u.roles,
       u.created_at, u.updated_at,
       ARRAY(SELECT i.provider FROM user_identities i WHERE i.app_id = u.app_id AND i.uid = u.uid
             ORDER BY i.provider) AS identity_providers
FROM users u;

-- Rate limits: the gateway and the token worker may take (and the token worker refund) but not
-- touch rate_limit_state or read apps.rate_limits themselves, so a compromised gateway cannot
-- wipe a limit's state. SECURITY DEFINER runs the functions as their owner; the fixed
-- search_path (pg_temp last) keeps a caller's own objects from standing in for the tables.
ALTER FUNCTION rate_limit_take(text, jsonb) SECURITY DEFINER SET search_path = public, pg_temp;
ALTER FUNCTION rate_limit_refund(text, text, text, integer, double precision)
    SECURITY DEFINER SET search_path = public, pg_temp;

-- identity_gateway: reads only; every change is a command to a worker.
GRANT SELECT (id, name, app_key, issuer, access_token_ttl) ON apps TO identity_gateway;
GRANT SELECT (app_id, kid, alg, public_pem, status, created_at) ON signing_keys TO identity_gateway;
GRANT SELECT (app_id, id, uid, amr, ip, user_agent, created_at, last_seen_at, expires_at, ended_at)
    ON sessions TO identity_gateway;
GRANT SELECT (app_id, id, uid, session_id, token, platform, kind, device_name, created_at)
    ON devices TO identity_gateway;
GRANT SELECT ON user_profiles TO identity_gateway;
GRANT EXECUTE ON FUNCTION rate_limit_take(text, jsonb) TO identity_gateway;

-- identity_token_worker: credentials, sessions and tokens.
GRANT SELECT (id, name, app_key, issuer, access_token_ttl, session_lifetime) ON apps TO identity_token_worker;
GRANT SELECT (app_id, kid, alg, public_pem, private_key_enc, status, created_at)
    ON signing_keys TO identity_token_worker;
GRANT SELECT, INSERT, UPDATE, DELETE ON users, user_identities, verification_codes, devices TO identity_token_worker;
GRANT SELECT, INSERT, UPDATE ON sessions, refresh_tokens TO identity_token_worker;
GRANT SELECT (app_id, nonce_hash, expires_at, spent_at), UPDATE (spent_at) ON auth_nonces TO identity_token_worker;
GRANT INSERT ON outbox TO identity_token_worker;
GRANT USAGE ON SEQUENCE outbox_id_seq TO identity_token_worker;
GRANT EXECUTE ON FUNCTION rate_limit_take(text, jsonb),
    rate_limit_refund(text, text, text, integer, double precision) TO identity_token_worker;

-- identity_provider_worker: provider settings, nonces, Apple's sealed refresh token.
GRANT SELECT ON app_provider_settings TO identity_provider_worker;
GRANT SELECT (app_id, nonce_hash, expires_at, spent_at), INSERT (app_id, nonce_hash, expires_at)
    ON auth_nonces TO identity_provider_worker;
GRANT SELECT (app_id, provider, subject, uid), UPDATE (apple_refresh_token_enc, apple_client_id)
    ON user_identities TO identity_provider_worker;

-- identity_mailer_worker: nothing of users; the app's name and mail settings, and its ledger.
GRANT SELECT (id, name, app_key, issuer, access_token_ttl) ON apps TO identity_mailer_worker;
GRANT SELECT ON app_mail_settings TO identity_mailer_worker;
GRANT SELECT, INSERT, UPDATE, DELETE ON mail_deliveries TO identity_mailer_worker;

-- identity_revocation_worker: ending sessions (with their devices and events), the outbox relay
-- (FOR UPDATE needs UPDATE), Apple revocation (the sealed .p8), and the retention purge, which
-- deletes by ctid (a system column: table-wide SELECT) except for codes, deleted by key so that
-- code_hmac stays unreadable; stale guests are locked (FOR UPDATE: one UPDATE column) and deleted.
GRANT SELECT, UPDATE, DELETE ON sessions TO identity_revocation_worker;
GRANT SELECT, DELETE ON devices, auth_nonces, refresh_tokens, rate_limit_state TO identity_revocation_worker;
GRANT SELECT, INSERT, UPDATE, DELETE ON outbox TO identity_revocation_worker;
GRANT USAGE ON SEQUENCE outbox_id_seq TO identity_revocation_worker;
GRANT SELECT ON app_provider_settings TO identity_revocation_worker;
GRANT SELECT (app_id, purpose, email_lower, expires_at), DELETE ON verification_codes TO identity_revocation_worker;
GRANT SELECT (app_id, uid, is_guest, created_at), UPDATE (updated_at), DELETE ON users TO identity_revocation_worker;

-- identityctl: apps and their settings. It writes a new app's secret key hash and sealed
-- signing key but reads neither back.
GRANT SELECT (id, name, app_key, issuer, access_token_ttl, session_lifetime, rate_limits, created_at),
      INSERT (id, name, app_key, secret_key_hash, issuer, access_token_ttl),
      UPDATE (name, access_token_ttl, session_lifetime, rate_limits) ON apps TO identityctl;
GRANT SELECT (app_id, kid, alg, public_pem, status, created_at),
      INSERT (app_id, kid, alg, public_pem, private_key_enc, status) ON signing_keys TO identityctl;
GRANT SELECT, INSERT, UPDATE ON app_provider_settings, app_mail_settings TO identityctl;
