-- `apple_nonce` `none` (COMPATIBILITY.md, seed 003): the app's shipped clients send Apple's
-- identity token without a nonce, so the token itself becomes the single-use value (its hash
-- kept in auth_nonces until it expires). Only apps that choose it.
ALTER TABLE app_provider_settings DROP CONSTRAINT app_provider_settings_apple_nonce_check;
ALTER TABLE app_provider_settings ADD CONSTRAINT app_provider_settings_apple_nonce_check
    CHECK (apple_nonce IN ('issued', 'client', 'none'));
