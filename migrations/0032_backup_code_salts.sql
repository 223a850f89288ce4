-- MFA backup codes get a salt each (OWASP ASVS 2.6.2): a code carries about 50 bits, so it is
-- stored as HMAC-SHA-256(backup-code sub-key, salt || code) with a random 16-byte salt of its
-- own (IdentityKit/Auth/BackupCodeHash.swift). Codes made before keep `salt` NULL and are
-- checked as before (an HMAC of the code alone) until spent or replaced: nobody loses a code.
-- The token worker's grant on the table covers the new column; no other role reads the table.
ALTER TABLE mfa_backup_codes ADD COLUMN salt bytea CHECK (salt IS NULL OR octet_length(salt) >= 4);
