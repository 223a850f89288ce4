-- Email flows: one-time codes (keyed hashes only), per-app mail settings, and the record
-- that makes deliveries idempotent.

CREATE TABLE verification_codes (
    app_id      text NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    purpose     text NOT NULL CHECK (purpose IN ('email_code', 'password_reset', 'email_verification')),
    email_lower text NOT NULL,
    code_hmac   bytea NOT NULL,                 -- HMAC-SHA-256 of the code with a server key
    attempts    integer NOT NULL DEFAULT 0,     -- wrong guesses; the code dies at 5
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    PRIMARY KEY (app_id, purpose, email_lower)  -- a new send replaces the old code
);

CREATE TABLE app_mail_settings (
    app_id       text PRIMARY KEY REFERENCES apps (id) ON DELETE CASCADE,
    deep_link_url text,
    from_name    text,
    from_address text,
    -- {"email_code": {"subject": "...", "text": "...", "html": "..."}, ...}
    templates    jsonb NOT NULL DEFAULT '{}',
    updated_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE mail_deliveries (
    message_id text PRIMARY KEY,
    app_id     text NOT NULL,
    status     text NOT NULL CHECK (status IN ('sending', 'sent')),
    updated_at timestamptz NOT NULL DEFAULT now()
);
