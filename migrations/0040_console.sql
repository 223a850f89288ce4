-- The web console (/console, docs/console.md). Console accounts are users of the service
-- itself: users of one app, the console app (made by `identityctl console init`), signed in
-- through the gateway's own flows. What a console account may do in each app is its role
-- there, given by email: `identityctl console invite` (the operator). A role counts only for a
-- console user whose email is verified, so signing up with someone's address gains nothing.
-- The gateway reads both tables (which pages to show); the token worker reads them to accept a
-- console user's session token as the authority of an admin command (CallerAuthority), so the
-- gateway cannot act for an app on its own word; only identityctl writes them.
CREATE TABLE console_app (
    app_id text PRIMARY KEY REFERENCES apps (id) ON DELETE CASCADE,
    -- One console per deployment.
    only_one boolean NOT NULL DEFAULT true UNIQUE CHECK (only_one)
);

CREATE TABLE console_roles (
    app_id text NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    -- Lower-cased; matched against the console user's verified email.
    email text NOT NULL CHECK (email = lower(email) AND char_length(email) BETWEEN 3 AND 254),
    role text NOT NULL CHECK (role IN ('owner', 'admin', 'viewer')),
    invited_by text NOT NULL CHECK (char_length(invited_by) <= 200),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (app_id, email)
);
CREATE INDEX console_roles_email ON console_roles (email);

GRANT SELECT ON console_app, console_roles TO identity_gateway, identity_token_worker;
GRANT SELECT, INSERT, UPDATE, DELETE ON console_app, console_roles TO identityctl;
-- The token worker finds a console user's verified email as the gateway does: through the view.
GRANT SELECT ON user_profiles TO identity_token_worker;
