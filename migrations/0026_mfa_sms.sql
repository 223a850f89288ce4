-- The SMS second factor (PRODUCT.md, "MFA"; issue 15): its codes follow the email factor's
-- rules in the same table, purpose mfa_sms, the target being the account's verified phone
-- (E.164). No new grants: the token worker already owns verification_codes, and the
-- revocation worker's purge deletes codes by key whatever their purpose.
ALTER TABLE verification_codes DROP CONSTRAINT verification_codes_purpose_check;
ALTER TABLE verification_codes ADD CONSTRAINT verification_codes_purpose_check
    CHECK (purpose IN ('email_code', 'password_reset', 'email_verification', 'mfa_email', 'phone_code', 'phone_link',
                       'mfa_sms'));
