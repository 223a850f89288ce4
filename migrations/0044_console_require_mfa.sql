-- Whether the web console needs a strong sign-in (docs/console.md, "Two-step verification"):
-- with it, a console session signed in without a second step or a passkey reaches only its own
-- Account page (to set one up) and sign-out; the gateway shows nothing else and the workers
-- refuse such a session as a command's authority (CallerAuthority). On for a console made from
-- now on (`identityctl console init`, unless `--require-mfa off`); a console made before keeps
-- what it had until the operator runs `identityctl console require-mfa on`.
ALTER TABLE console_app ADD COLUMN require_mfa boolean NOT NULL DEFAULT false;
ALTER TABLE console_app ALTER COLUMN require_mfa SET DEFAULT true;
