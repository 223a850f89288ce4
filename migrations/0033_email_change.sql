-- Self-service email change: the code mailed to the new address is a verification code of its
-- own purpose, naming the user and the session that asked (POST /v1/me/email/change).
ALTER TABLE verification_codes DROP CONSTRAINT verification_codes_purpose_check;
ALTER TABLE verification_codes ADD CONSTRAINT verification_codes_purpose_check
    CHECK (purpose IN ('email_code', 'password_reset', 'email_verification', 'mfa_email', 'phone_code', 'phone_link',
                       'mfa_sms', 'email_change'));
