-- Per app, what ending another session or every session takes (OWASP ASVS 5.0 7.5.2):
-- `none` (the default, which the shipped clients expect) or `fresh`, a sign-in within the
-- step-up window (5 minutes). Signing out of the caller's own session never needs it. Checked
-- by the gateway before the command and again by the revocation worker that carries it out
-- (a command published straight to its queue meets the same rule).
ALTER TABLE apps ADD COLUMN session_end_proof text NOT NULL DEFAULT 'none'
    CHECK (session_end_proof IN ('none', 'fresh'));
-- Every process reads an app with it (AppStore); the settings are written by the token worker
-- (PATCH /v1/admin/settings) and identityctl.
GRANT SELECT (session_end_proof) ON apps TO identity_gateway, identity_token_worker, identity_provider_worker,
    identity_mailer_worker, identity_revocation_worker, identity_webhook_worker, identityctl;
GRANT UPDATE (session_end_proof) ON apps TO identity_token_worker, identityctl;
