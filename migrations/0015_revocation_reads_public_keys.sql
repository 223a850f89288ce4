-- The revocation worker checks that a command ending a user's sessions or removing their device
-- carries that user's access token (IdentityKit/Auth/CallerAuthority.swift), as the token worker
-- does: it reads what verifying a token needs and nothing more, the app's issuer and the public
-- halves of its signing keys (never private_key_enc).
GRANT SELECT (id, name, app_key, issuer, access_token_ttl) ON apps TO identity_revocation_worker;
GRANT SELECT (app_id, kid, alg, public_pem, status, created_at) ON signing_keys TO identity_revocation_worker;

-- An admin API call acts for a user with the app's secret key instead of the user's token: both
-- workers resolve it as the gateway does, through secret_key_owner (migration 0012), which tells
-- the app and key id of a live key and never shows a hash.
GRANT EXECUTE ON FUNCTION secret_key_owner(bytea) TO identity_token_worker, identity_revocation_worker;
