-- The SMS breaker per lane (SmsPolicy.swift, SmsLane): anonymous phone sign-in sends and the
-- texts only an account holder can cause (phone linking, the SMS second factor) open separate
-- breakers, so a flood of anonymous sends no longer stops the second-factor codes of users who
-- passed their password. An open breaker of the previous version was the anonymous lane's.
ALTER TABLE sms_breakers ADD COLUMN lane text NOT NULL DEFAULT 'anonymous'
    CHECK (lane IN ('anonymous', 'authenticated'));
ALTER TABLE sms_breakers DROP CONSTRAINT sms_breakers_pkey;
ALTER TABLE sms_breakers ADD PRIMARY KEY (app_id, lane);
