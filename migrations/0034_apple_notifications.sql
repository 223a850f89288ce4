-- Apple's server-to-server notifications (POST /v1/apps/{app_id}/apple/notifications): each
-- event is applied once (Apple retries until it gets a 2xx; the record is purged once the
-- notification is too old to be accepted again), and a private-relay address Apple
-- reports as not forwarding is kept here, so the mailer sends nothing to it until Apple says it
-- forwards again.
CREATE TABLE apple_notifications (
    app_id      text        NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    event_id    text        NOT NULL,
    type        text        NOT NULL,
    subject     text        NOT NULL,
    received_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (app_id, event_id)
);

CREATE TABLE undeliverable_emails (
    app_id      text        NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    email_lower text        NOT NULL,
    since       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (app_id, email_lower)
);

GRANT SELECT, INSERT, DELETE ON apple_notifications TO identity_token_worker;
GRANT SELECT, INSERT, DELETE ON undeliverable_emails TO identity_token_worker;
GRANT SELECT ON undeliverable_emails TO identity_mailer_worker;
-- The retention purge forgets a record once its notification is too old to be accepted again.
GRANT SELECT (app_id, event_id, received_at), DELETE ON apple_notifications TO identity_revocation_worker;
