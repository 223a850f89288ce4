-- Apps (tenants), their signing keys, users and sessions. Every table holding users' data
-- carries app_id, and its keys start with it, so every query is scoped by the app.

CREATE TABLE apps (
    id               text PRIMARY KEY,
    name             text NOT NULL,
    app_key          text NOT NULL UNIQUE,
    secret_key_hash  bytea NOT NULL,              -- SHA-256 of the secret key; the key is shown once
    issuer           text NOT NULL,
    access_token_ttl integer NOT NULL DEFAULT 3600 CHECK (access_token_ttl BETWEEN 300 AND 86400),
    created_at       timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE signing_keys (
    app_id          text NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    kid             text NOT NULL,
    alg             text NOT NULL DEFAULT 'RS256',
    public_pem      text NOT NULL,
    -- AES-256-GCM with the master key: nonce || ciphertext || tag, AAD 'signing_key:<app>:<kid>'.
    private_key_enc bytea NOT NULL,
    status          text NOT NULL DEFAULT 'current' CHECK (status IN ('current', 'previous', 'retired')),
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (app_id, kid)
);
-- One signing key per app is current: the database, not the code, keeps that true.
CREATE UNIQUE INDEX signing_keys_one_current ON signing_keys (app_id) WHERE status = 'current';

CREATE TABLE users (
    app_id         text NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    uid            text NOT NULL,
    email          text,
    email_verified boolean NOT NULL DEFAULT false,
    phone          text,
    username       text,
    first_name     text,
    last_name      text,
    photo_url      text,
    password_hash  text,                           -- Argon2id PHC string
    is_guest       boolean NOT NULL DEFAULT false,
    disabled       boolean NOT NULL DEFAULT false,
    roles          text[] NOT NULL DEFAULT '{}',
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (app_id, uid)
);
-- Emails and usernames are unique per app, case-insensitively; these indexes decide races.
CREATE UNIQUE INDEX users_email_per_app ON users (app_id, lower(email)) WHERE email IS NOT NULL;
CREATE UNIQUE INDEX users_username_per_app ON users (app_id, lower(username)) WHERE username IS NOT NULL;

CREATE TABLE sessions (
    app_id       text NOT NULL,
    id           text NOT NULL,
    uid          text NOT NULL,
    amr          text[] NOT NULL,
    ip           text,
    user_agent   text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_seen_at timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    ended_at     timestamptz,
    end_reason   text,
    PRIMARY KEY (app_id, id),
    FOREIGN KEY (app_id, uid) REFERENCES users (app_id, uid) ON DELETE CASCADE
);
CREATE INDEX sessions_by_user ON sessions (app_id, uid) WHERE ended_at IS NULL;

-- Refresh tokens: only SHA-256 hashes. Rotation spends a token (spent_at) and records its
-- successor, so a retry within the grace period can be answered with the same successor.
CREATE TABLE refresh_tokens (
    app_id         text NOT NULL,
    token_hash     bytea NOT NULL,
    session_id     text NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    expires_at     timestamptz NOT NULL,
    spent_at       timestamptz,
    successor_hash bytea,
    PRIMARY KEY (app_id, token_hash),
    FOREIGN KEY (app_id, session_id) REFERENCES sessions (app_id, id) ON DELETE CASCADE
);
CREATE INDEX refresh_tokens_by_session ON refresh_tokens (app_id, session_id);
