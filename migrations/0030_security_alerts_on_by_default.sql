-- Security alerts are on unless an app turns them off: a change of a way into an account
-- (password, email, phone, passkey, provider link, second factor, backup codes) is what a thief
-- with a stolen access token makes, and the owner must hear of it. Until now the column's
-- default was false and no app could tell an explicit "off" from the default, so every app is
-- switched on; one that wants them off sets security_alerts false again.
ALTER TABLE app_push_settings ALTER COLUMN security_alerts SET DEFAULT true;
UPDATE app_push_settings SET security_alerts = true WHERE NOT security_alerts;
