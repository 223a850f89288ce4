-- Messages in the user's language: each user's BCP 47 `locale` (set at sign-up or in the
-- profile; NULL: none given, the request's Accept-Language decides), and each app's default
-- language, which every message falls back to (NULL: English).
ALTER TABLE users ADD COLUMN locale text CHECK (char_length(locale) <= 35);
ALTER TABLE app_mail_settings ADD COLUMN default_locale text CHECK (char_length(default_locale) <= 35);

-- The gateway reads users only through this view: it gains the locale, last, as a view may.
CREATE OR REPLACE VIEW user_profiles AS
SELECT u.app_id, u.uid, u.email, u.email_verified, u.phone, u.username, u.first_name, u.last_name,
       u.photo_url, u.password_hash IS NOT NULL AS has_password, u.is_guest, u.disabled, u.roles,
       u.created_at, u.updated_at,
       ARRAY(SELECT i.provider FROM user_identities i WHERE i.app_id = u.app_id AND i.uid = u.uid
             ORDER BY i.provider) AS identity_providers,
       EXISTS (SELECT 1 FROM mfa_factors f WHERE f.app_id = u.app_id AND f.uid = u.uid
               AND f.confirmed_at IS NOT NULL) AS mfa_enabled,
       u.custom_claims, u.app_metadata, u.user_metadata, u.locale
FROM users u;
