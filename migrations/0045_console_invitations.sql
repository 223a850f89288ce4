-- Invitation links (docs/console.md, "Getting in"): the invitation mail links to
-- /console/invitation?token=…, where the invitee creates their console account with a
-- password (the link proves the address) or, holding one already, accepts and signs in. The
-- token is 256 random bits; only its SHA-256 is kept, and no one but the token worker (which
-- reads and spends it) and identityctl (which makes one for `console invite`) may see it. A link
-- works once, for 7 days, and only while its role does: removing the member deletes it.
CREATE TABLE console_invitations (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    invitation_hash bytea NOT NULL UNIQUE CHECK (octet_length(invitation_hash) = 32),
    app_id text NOT NULL,
    email text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    accepted_at timestamptz,
    FOREIGN KEY (app_id, email) REFERENCES console_roles (app_id, email) ON DELETE CASCADE
);
CREATE INDEX console_invitations_role ON console_invitations (app_id, email);

GRANT SELECT, INSERT, UPDATE, DELETE ON console_invitations TO identity_token_worker, identityctl;
-- The purger deletes spent and expired links by key, never reading a hash.
GRANT SELECT (id, expires_at, accepted_at), DELETE ON console_invitations TO identity_revocation_worker;
