-- MFA (issue 13; PRODUCT.md "MFA"): the assurance a session reached, second factors, backup
-- codes and sign-in challenges. Only the token worker reads or writes these tables: the gateway
-- reads no TOTP secret and no backup code hash (it answers `GET /v1/me/mfa` through a command).

-- What a session's sign-in proved: 1 = one factor, 2 = two (or a passkey with user verification).
ALTER TABLE sessions ADD COLUMN aal smallint NOT NULL DEFAULT 1 CHECK (aal IN (1, 2));
GRANT SELECT (aal) ON sessions TO identity_gateway;

-- One row per second factor of a user. `secret_enc` is a TOTP secret sealed with AES-GCM under
-- an HKDF sub-key of the master key (label "mfa-totp-secret-v1"); `last_step` is the last TOTP
-- time step accepted, advanced with one conditional UPDATE so a code is accepted once.
-- `confirmed_at` null means enrolment started but was not confirmed yet: such a factor is not on.
CREATE TABLE mfa_factors (
    app_id        text NOT NULL,
    uid           text NOT NULL,
    method        text NOT NULL CHECK (method IN ('totp', 'email', 'sms')),
    secret_enc    bytea,
    last_step     bigint NOT NULL DEFAULT -1,
    created_at    timestamptz NOT NULL DEFAULT now(),
    confirmed_at  timestamptz,
    last_used_at  timestamptz,
    PRIMARY KEY (app_id, uid, method),
    FOREIGN KEY (app_id, uid) REFERENCES users (app_id, uid) ON DELETE CASCADE
);

-- Backup codes: HMACs only (keyed with a token-worker secret), each spent once with one
-- UPDATE ... WHERE spent_at IS NULL RETURNING. A new set deletes the old one.
CREATE TABLE mfa_backup_codes (
    app_id     text NOT NULL,
    uid        text NOT NULL,
    code_hmac  bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    spent_at   timestamptz,
    PRIMARY KEY (app_id, uid, code_hmac),
    FOREIGN KEY (app_id, uid) REFERENCES users (app_id, uid) ON DELETE CASCADE
);

-- Email second-factor codes (enrolment and sign-in challenges) follow the rules of the other
-- mailed codes, in the same table.
ALTER TABLE verification_codes DROP CONSTRAINT verification_codes_purpose_check;
ALTER TABLE verification_codes ADD CONSTRAINT verification_codes_purpose_check
    CHECK (purpose IN ('email_code', 'password_reset', 'email_verification', 'mfa_email'));

-- A sign-in waiting for its second factor: the first factor's amr, 5 minutes, 5 attempts
-- (changed by one UPDATE each), the token as a hash. `command_id` answers a redelivered
-- first-factor command with the same challenge; `session_id` is set when a code finished it
-- (a redelivered verify command is answered from that session).
CREATE TABLE mfa_challenges (
    app_id          text NOT NULL,
    id              text NOT NULL,
    uid             text NOT NULL,
    token_hash      bytea NOT NULL,
    amr             text[] NOT NULL,
    methods         text[] NOT NULL,
    created_account boolean NOT NULL DEFAULT false,
    ip              text,
    user_agent      text,
    attempts        integer NOT NULL DEFAULT 0,
    created_at      timestamptz NOT NULL DEFAULT now(),
    expires_at      timestamptz NOT NULL,
    command_id      text,
    session_id      text,
    PRIMARY KEY (app_id, id),
    FOREIGN KEY (app_id, uid) REFERENCES users (app_id, uid) ON DELETE CASCADE
);
CREATE UNIQUE INDEX mfa_challenges_by_token ON mfa_challenges (app_id, token_hash);
CREATE UNIQUE INDEX mfa_challenges_by_command ON mfa_challenges (app_id, command_id) WHERE command_id IS NOT NULL;
CREATE INDEX mfa_challenges_expiry ON mfa_challenges (expires_at);

-- The gateway's read model shows whether MFA is on (the user object's `mfa_enabled`), nothing
-- more; the view runs with its owner's rights, so the gateway needs no grant on mfa_factors.
CREATE OR REPLACE VIEW user_profiles AS
SELECT u.app_id, u.uid, u.email, u.email_verified, u.phone, u.username, u.first_name, u.last_name,
       u.photo_url, u.password_hash IS NOT NULL AS has_password, u.is_guest, u.disabled, u.roles,
       u.created_at, u.updated_at,
       ARRAY(SELECT i.provider FROM user_identities i WHERE i.app_id = u.app_id AND i.uid = u.uid
             ORDER BY i.provider) AS identity_providers,
       EXISTS (SELECT 1 FROM mfa_factors f WHERE f.app_id = u.app_id AND f.uid = u.uid
               AND f.confirmed_at IS NOT NULL) AS mfa_enabled
FROM users u;

GRANT SELECT, INSERT, UPDATE, DELETE ON mfa_factors, mfa_backup_codes, mfa_challenges TO identity_token_worker;
-- The retention purge deletes expired challenges by key (no secret column is readable).
GRANT SELECT (app_id, id, expires_at), DELETE ON mfa_challenges TO identity_revocation_worker;
