-- Client profiles (issue 17, ../shared/docs/COMPATIBILITY.md): how an app's shipped clients
-- reach it and what shape its edge speaks. Only the gateway's edge reads these; the core flows
-- are the same for every profile.
CREATE TABLE app_client_profiles (
    app_id          text PRIMARY KEY REFERENCES apps (id) ON DELETE CASCADE,
    profile         text NOT NULL DEFAULT 'standard'
                    CHECK (profile IN ('standard', 'single-token', 'session-object')),
    -- An extra prefix this app's /v1 routes also answer under (seed 000: /api/v2).
    path_prefix     text CHECK (path_prefix ~ '^(/[A-Za-z0-9._~-]+)+$' AND path_prefix NOT LIKE '/v1%'),
    -- Exact origins (scheme://host[:port]) browsers may call from; never a wildcard.
    allowed_origins text[] NOT NULL DEFAULT '{}',
    updated_at      timestamptz NOT NULL DEFAULT now()
);

-- Hosts that select an app without X-App-Key. One host belongs to one app (the primary key),
-- so no request can be read as two tenants'.
CREATE TABLE app_domains (
    host   text PRIMARY KEY CHECK (host = lower(host) AND host ~ '^[a-z0-9.-]+(:[0-9]{1,5})?$'),
    app_id text NOT NULL REFERENCES apps (id) ON DELETE CASCADE
);
CREATE INDEX app_domains_app ON app_domains (app_id);
CREATE INDEX app_client_profiles_origins ON app_client_profiles USING gin (allowed_origins);

-- Seed 000's clients make their own Apple nonce: 'client' accepts it once (the provider worker
-- records it in auth_nonces until the identity token expires, the sign-in spends it).
ALTER TABLE app_provider_settings ADD COLUMN apple_nonce text NOT NULL DEFAULT 'issued'
    CHECK (apple_nonce IN ('issued', 'client'));

GRANT SELECT ON app_client_profiles, app_domains TO identity_gateway;
GRANT SELECT, INSERT, UPDATE, DELETE ON app_client_profiles, app_domains TO identityctl;

-- The opaque session token of the `session-object` (and `single-token`) profiles: one per
-- session, only its SHA-256 kept, checked against the live session on every request (so
-- sign-out, deletion and disabling end it at once). The token worker sets it; the gateway and
-- the workers find the session by it (IdentityKit/Auth/SessionToken.swift).
ALTER TABLE sessions ADD COLUMN session_token_hash bytea;
CREATE UNIQUE INDEX sessions_by_session_token ON sessions (app_id, session_token_hash)
    WHERE session_token_hash IS NOT NULL;
GRANT SELECT (session_token_hash) ON sessions TO identity_gateway;
-- The token worker issues session tokens only for apps whose profile has them.
GRANT SELECT (app_id, profile) ON app_client_profiles TO identity_token_worker;
