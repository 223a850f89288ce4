-- Push delivery and security alerts (issue 15, part B).
--
-- app_push_settings: an app's push credentials and whether it sends security alerts. The APNs
-- `.p8` and the FCM service-account key are sealed (AES-256-GCM) under the push-credential
-- sub-key of the master key (`SubKey.pushCredentialSeal`), bound to the app and the field; the
-- mailer workers are given that sub-key (IDENTITY_PUSH_CREDENTIAL_KEY), never the master key.
CREATE TABLE app_push_settings (
    app_id                    text PRIMARY KEY REFERENCES apps (id) ON DELETE CASCADE,
    apns_team_id              text,
    apns_key_id               text,
    apns_topic                text,
    apns_private_key_enc      bytea,
    fcm_project_id            text,
    fcm_service_account_enc   bytea,
    -- Whether a key is set, for the settings answer, without a grant on the sealed column.
    apns_private_key_set      boolean GENERATED ALWAYS AS (apns_private_key_enc IS NOT NULL) STORED,
    fcm_service_account_set   boolean GENERATED ALWAYS AS (fcm_service_account_enc IS NOT NULL) STORED,
    security_alerts           boolean NOT NULL DEFAULT false,
    updated_at                timestamptz NOT NULL DEFAULT now()
);

-- The devices (as a hash of the sign-in's user agent) each user has signed in from: a sign-in
-- from one not in this list is a "new device" security alert.
CREATE TABLE user_known_devices (
    app_id        text NOT NULL,
    uid           text NOT NULL,
    fingerprint   bytea NOT NULL,
    first_seen_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (app_id, uid, fingerprint),
    FOREIGN KEY (app_id, uid) REFERENCES users (app_id, uid) ON DELETE CASCADE
);

-- Only the mailer reads the push secrets. The token worker writes them (PATCH
-- /v1/admin/settings runs there, sealing with the master key it holds) and reads whether
-- alerts are on, never the sealed columns.
GRANT SELECT ON app_push_settings TO identity_mailer_worker;
GRANT SELECT (app_id, security_alerts, apns_team_id, apns_key_id, apns_topic, fcm_project_id,
              apns_private_key_set, fcm_service_account_set),
      INSERT, UPDATE ON app_push_settings TO identity_token_worker, identityctl;
GRANT SELECT, INSERT ON user_known_devices TO identity_token_worker;

-- The push channel sends to a user's devices and unregisters a device APNs or FCM calls dead
-- (410, UNREGISTERED), with its `device.unregistered` event through the outbox.
GRANT SELECT, DELETE ON devices TO identity_mailer_worker;
GRANT INSERT ON outbox TO identity_mailer_worker;
GRANT USAGE ON SEQUENCE outbox_id_seq TO identity_mailer_worker;
