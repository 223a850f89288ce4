-- Phone sign-in and the SMS channel (issue 15, part A).

-- Phone codes follow the email-code rules in the same table: the target column holds the E.164
-- number for them. A phone code is reached by its session id (POST /v1/auth/phone/verify
-- {session_id, code}); a new send replaces the row, and with it the session id.
ALTER TABLE verification_codes DROP CONSTRAINT verification_codes_purpose_check;
ALTER TABLE verification_codes ADD CONSTRAINT verification_codes_purpose_check
    CHECK (purpose IN ('email_code', 'password_reset', 'email_verification', 'mfa_email', 'phone_code', 'phone_link'));
ALTER TABLE verification_codes ADD COLUMN session_id text;
-- A link code belongs to the signed-in user who asked for it.
ALTER TABLE verification_codes ADD COLUMN uid text;
CREATE UNIQUE INDEX verification_codes_session ON verification_codes (app_id, session_id) WHERE session_id IS NOT NULL;

-- A phone proved by a code is the account's: one account per verified number and app (the
-- index decides a race between two sign-ins). Phones set by an admin or an import stay
-- unverified and never sign anyone in.
ALTER TABLE users ADD COLUMN phone_verified boolean NOT NULL DEFAULT false;
CREATE UNIQUE INDEX users_verified_phone ON users (app_id, phone) WHERE phone_verified;

-- An app's SMS settings: the SMS-pumping policy (allowed calling codes: none until the app sets
-- them; the breaker's hourly threshold) and its own Twilio-compatible account (else the mailer's
-- IDENTITY_SMS_*). The auth token is sealed (AES-256-GCM under the SMS-credential key, a
-- sub-key of the mail-payload key) and bound to the app id.
CREATE TABLE app_sms_settings (
    app_id                text PRIMARY KEY REFERENCES apps (id) ON DELETE CASCADE,
    allowed_calling_codes integer[] NOT NULL DEFAULT '{}',
    breaker_hourly        integer NOT NULL DEFAULT 3000 CHECK (breaker_hourly > 0),
    api_url               text,
    account_sid           text,
    auth_token_enc        bytea,
    auth_token_set        boolean GENERATED ALWAYS AS (auth_token_enc IS NOT NULL) STORED,
    from_number           text,
    messaging_service_sid text,
    updated_at            timestamptz NOT NULL DEFAULT now()
);

-- The circuit breaker: while open_until is ahead, no SMS leaves for the app.
CREATE TABLE sms_breakers (
    app_id     text PRIMARY KEY REFERENCES apps (id) ON DELETE CASCADE,
    opened_at  timestamptz NOT NULL,
    open_until timestamptz NOT NULL
);

-- The token worker applies the policy and writes settings through the admin API; it writes a
-- new sealed auth token but may not read one back.
GRANT SELECT (app_id, allowed_calling_codes, breaker_hourly, api_url, account_sid, auth_token_set, from_number,
              messaging_service_sid, updated_at),
      INSERT (app_id, allowed_calling_codes, breaker_hourly, api_url, account_sid, auth_token_enc, from_number,
              messaging_service_sid, updated_at),
      UPDATE (allowed_calling_codes, breaker_hourly, api_url, account_sid, auth_token_enc, from_number,
              messaging_service_sid, updated_at)
    ON app_sms_settings TO identity_token_worker, identityctl;
GRANT SELECT, INSERT, UPDATE, DELETE ON sms_breakers TO identity_token_worker;
GRANT SELECT, DELETE ON sms_breakers TO identityctl;
-- The mailer reads the account it sends through (and opens the token with its own key).
GRANT SELECT (app_id, api_url, account_sid, auth_token_enc, from_number, messaging_service_sid)
    ON app_sms_settings TO identity_mailer_worker;
-- The purge reads codes by key; session_id and uid are keys too.
GRANT SELECT (session_id, uid) ON verification_codes TO identity_revocation_worker;
