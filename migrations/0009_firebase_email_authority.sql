-- Whether a Firebase token's `email_verified` may link a sign-in to an existing account by
-- email. Firebase verifies addresses in several ways an app may not trust (for example an
-- email-link sign-in configured loosely), so it is off unless the app says so.
ALTER TABLE app_provider_settings ADD COLUMN firebase_trust_email_verified boolean NOT NULL DEFAULT false;
