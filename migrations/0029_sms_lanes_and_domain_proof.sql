-- The SMS breaker per lane (SmsPolicy.swift, SmsLane): anonymous phone sign-in sends and the
-- texts only an account holder can cause (phone linking, the SMS second factor) open separate
-- breakers, so a flood of anonymous sends no longer stops the second-factor codes of users who
-- passed their password. An open breaker of the previous version was the anonymous lane's.
ALTER TABLE sms_breakers ADD COLUMN lane text NOT NULL DEFAULT 'anonymous'
    CHECK (lane IN ('anonymous', 'authenticated'));
ALTER TABLE sms_breakers DROP CONSTRAINT sms_breakers_pkey;
ALTER TABLE sms_breakers ADD PRIMARY KEY (app_id, lane);

-- Custom domains need a proof (AppDomainStore.swift): a tenant's admin API only requests a host
-- (a random token to publish on it); it selects the app once verified (identityctl apps domains
-- verify) or allowed by the operator (identityctl apps settings --domains). Several apps may
-- request one host; one app at most holds it verified. Hosts set before this version were set
-- through the operator's tool or first come, first served: they stay verified, so no app stops
-- resolving on upgrade (README: review them).
ALTER TABLE app_domains ADD COLUMN verified_at timestamptz;
ALTER TABLE app_domains ADD COLUMN verification_token text;
UPDATE app_domains SET verified_at = now();
ALTER TABLE app_domains ADD CONSTRAINT app_domains_proof CHECK (verified_at IS NOT NULL OR verification_token IS NOT NULL);
ALTER TABLE app_domains DROP CONSTRAINT app_domains_pkey;
ALTER TABLE app_domains ADD PRIMARY KEY (app_id, host);
CREATE UNIQUE INDEX app_domains_verified_host ON app_domains (host) WHERE verified_at IS NOT NULL;
DROP INDEX app_domains_app;
-- The tokens are no secret (each is published on its host): the gateway's SELECT on the table,
-- and the workers' and identityctl's writes, stay as they were.
