-- The mailer asks an app's `send_email` and `send_sms` hooks, and nothing else: it sees only
-- those rows of `app_auth_hooks`, so it cannot read the sealed secret (nor the URL) of a
-- `before_sign_up` or `before_token` hook, whose signatures an app's backend trusts to decide
-- who signs up and what a token claims. The token worker and identityctl, which manage every
-- kind, see every row; the owner (migrations) is not subject to row security.
ALTER TABLE app_auth_hooks ENABLE ROW LEVEL SECURITY;
CREATE POLICY app_auth_hooks_mailer ON app_auth_hooks FOR SELECT TO identity_mailer_worker
    USING (kind IN ('send_email', 'send_sms'));
CREATE POLICY app_auth_hooks_managers ON app_auth_hooks TO identity_token_worker, identityctl
    USING (true) WITH CHECK (true);
