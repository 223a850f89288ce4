-- Sign in with Apple, Google and Firebase: per-app provider settings, the identities linked
-- to users, and the nonces this service issues for Apple sign-ins.

CREATE TABLE app_provider_settings (
    app_id                text PRIMARY KEY REFERENCES apps (id) ON DELETE CASCADE,
    google_client_ids     text[] NOT NULL DEFAULT '{}',   -- web, iOS, Android
    apple_bundle_ids      text[] NOT NULL DEFAULT '{}',
    apple_services_ids    text[] NOT NULL DEFAULT '{}',
    apple_team_id         text,
    apple_key_id          text,
    -- The .p8 key sealed with the master key (AES-256-GCM, AAD 'apple_p8:<app_id>').
    apple_private_key_enc bytea,
    firebase_project_id   text,
    updated_at            timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE user_identities (
    app_id                  text NOT NULL,
    provider                text NOT NULL CHECK (provider IN ('apple', 'google', 'firebase')),
    subject                 text NOT NULL,
    uid                     text NOT NULL,
    email                   text,
    -- Apple's refresh token sealed with the master key (AAD 'apple_refresh:<app_id>:<subject>').
    apple_refresh_token_enc bytea,
    created_at              timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (app_id, provider, subject),
    FOREIGN KEY (app_id, uid) REFERENCES users (app_id, uid) ON DELETE CASCADE
);
-- A user has at most one identity per provider.
CREATE UNIQUE INDEX user_identities_one_per_provider ON user_identities (app_id, uid, provider);

CREATE TABLE auth_nonces (
    app_id     text NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    nonce_hash bytea NOT NULL,                       -- SHA-256 of the raw nonce
    expires_at timestamptz NOT NULL,
    spent_at   timestamptz,
    PRIMARY KEY (app_id, nonce_hash)
);

-- Outbox rows may also be commands for a worker queue (the default exchange, '').
ALTER TABLE outbox ADD COLUMN exchange text NOT NULL DEFAULT 'identity.events';
