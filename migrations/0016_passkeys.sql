-- Passkeys (WebAuthn, issue 14): per-app relying-party settings, registered credentials, and the
-- ceremonies' flow rows. Only the token worker runs ceremonies: the gateway's role gets nothing
-- here (it forwards; the list of a user's passkeys is a command too), so no credential material
-- or challenge is readable by the process that faces the internet.

CREATE TABLE app_webauthn_settings (
    app_id          text PRIMARY KEY REFERENCES apps (id) ON DELETE CASCADE,
    rp_id           text NOT NULL,
    rp_name         text,
    -- Exact origins: https://host[:port], or android:apk-key-hash:<hash> for native Android apps.
    origins         text[] NOT NULL DEFAULT '{}',
    -- The app's policy: the UV flag must be set at registration and sign-in.
    require_user_verification boolean NOT NULL DEFAULT false,
    updated_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE passkey_credentials (
    app_id          text NOT NULL,
    id              text NOT NULL,                  -- pk_<ULID>: the id the API shows
    uid             text NOT NULL,
    credential_id   bytea NOT NULL,
    -- The opaque per-user handle given to authenticators (an HMAC of the uid, SubKey.passkeyUserHandle):
    -- a usernameless sign-in finds the user by it.
    user_handle     bytea NOT NULL,
    public_key      bytea NOT NULL,                 -- COSE_Key as the authenticator encoded it
    algorithm       integer NOT NULL,
    sign_count      bigint NOT NULL DEFAULT 0,
    transports      text[] NOT NULL DEFAULT '{}',
    backup_eligible boolean NOT NULL,
    backup_state    boolean NOT NULL,
    aaguid          bytea NOT NULL,
    attestation_format text NOT NULL,
    name            text NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    last_used_at    timestamptz,
    PRIMARY KEY (app_id, id),
    FOREIGN KEY (app_id, uid) REFERENCES users (app_id, uid) ON DELETE CASCADE
);
-- A credential belongs to one account of an app: the index decides a race between two registrations.
CREATE UNIQUE INDEX passkey_credentials_credential_id ON passkey_credentials (app_id, credential_id);
CREATE INDEX passkey_credentials_user ON passkey_credentials (app_id, uid);

CREATE TABLE passkey_flows (
    app_id          text NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    id              text NOT NULL,                  -- pkf_<ULID>
    purpose         text NOT NULL CHECK (purpose IN ('register', 'sign_in')),
    -- Registration: the signed-in user. Sign-in with an identifier: its user, when there is one.
    uid             text,
    challenge_hash  bytea NOT NULL,                 -- SHA-256 of the 32-byte challenge
    -- Sign-in with an identifier: the credential ids offered (allowCredentials), real ones only.
    allowed_credential_ids text[] NOT NULL DEFAULT '{}',     -- base64url
    identified      boolean NOT NULL DEFAULT false,
    attempts        integer NOT NULL DEFAULT 0,
    expires_at      timestamptz NOT NULL,
    spent_at        timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (app_id, id),
    FOREIGN KEY (app_id, uid) REFERENCES users (app_id, uid) ON DELETE CASCADE
);
CREATE INDEX passkey_flows_challenge ON passkey_flows (app_id, challenge_hash);
CREATE INDEX passkey_flows_expiry ON passkey_flows (expires_at);

GRANT SELECT ON app_webauthn_settings TO identity_token_worker;
GRANT SELECT, INSERT, UPDATE, DELETE ON passkey_credentials, passkey_flows TO identity_token_worker;
-- The retention purge removes spent and expired flows, by key.
GRANT SELECT (app_id, id, expires_at, spent_at), DELETE ON passkey_flows TO identity_revocation_worker;
GRANT SELECT, INSERT, UPDATE ON app_webauthn_settings TO identityctl;
