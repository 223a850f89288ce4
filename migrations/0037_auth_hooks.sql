-- Auth hooks: per app and kind, an HTTPS endpoint of the app's own backend that the token worker
-- (before_sign_up, before_token) or the mailer (send_email, send_sms) calls, signed per the
-- Standard Webhooks specification with the hook's secret, sealed here (`AuthHookSecretSeal`).
CREATE TABLE app_auth_hooks (
    app_id         text NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    kind           text NOT NULL CHECK (kind IN ('before_sign_up', 'before_token', 'send_email', 'send_sms')),
    url            text NOT NULL CHECK (char_length(url) <= 2048),
    timeout_ms     integer NOT NULL DEFAULT 2000 CHECK (timeout_ms BETWEEN 100 AND 5000),
    failure_policy text NOT NULL DEFAULT 'fail_closed' CHECK (failure_policy IN ('fail_closed', 'fail_open')),
    secret_enc     bytea NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (app_id, kind)
);

-- The token worker saves them (admin API) and calls the sign-up and token hooks; identityctl
-- saves them; the mailer reads the send hooks and writes the audit row of a failed call.
GRANT SELECT, INSERT, UPDATE, DELETE ON app_auth_hooks TO identity_token_worker, identityctl;
GRANT SELECT ON app_auth_hooks TO identity_mailer_worker;
GRANT INSERT ON audit_log TO identity_mailer_worker;
GRANT USAGE ON SEQUENCE audit_log_id_seq TO identity_mailer_worker;
