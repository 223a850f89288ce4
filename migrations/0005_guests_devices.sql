-- Guests (found by an HMAC of their secret), push devices, and the Apple client id a kept
-- Apple refresh token belongs to (needed to revoke it).

ALTER TABLE users ADD COLUMN guest_secret_hmac bytea;
-- The same secret always finds the same guest; parallel first calls race on this index.
CREATE UNIQUE INDEX users_guest_secret_per_app ON users (app_id, guest_secret_hmac)
    WHERE guest_secret_hmac IS NOT NULL;

ALTER TABLE user_identities ADD COLUMN apple_client_id text;

CREATE TABLE devices (
    app_id      text NOT NULL,
    id          text NOT NULL,
    uid         text NOT NULL,
    session_id  text NOT NULL,
    token       text NOT NULL,
    platform    text NOT NULL CHECK (platform IN ('ios', 'android', 'web')),
    kind        text NOT NULL CHECK (kind IN ('apns', 'fcm', 'voip')),
    device_name text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (app_id, id),
    UNIQUE (app_id, token),                     -- registered again, a token moves
    FOREIGN KEY (app_id, uid) REFERENCES users (app_id, uid) ON DELETE CASCADE,
    -- A device belongs to a session of its own app; it goes when the session row goes.
    FOREIGN KEY (app_id, session_id) REFERENCES sessions (app_id, id) ON DELETE CASCADE
);
CREATE INDEX devices_by_session ON devices (app_id, session_id);
CREATE INDEX devices_by_user ON devices (app_id, uid);

-- The command that started a session, so a command redelivered after its worker died between
-- commit and reply is answered from what it already did instead of being run twice.
ALTER TABLE sessions ADD COLUMN command_id text;
ALTER TABLE sessions ADD COLUMN created_account boolean NOT NULL DEFAULT false;
CREATE UNIQUE INDEX sessions_by_command ON sessions (app_id, command_id) WHERE command_id IS NOT NULL;
