-- Webhooks: each app's endpoints (admin API, identityctl), the deliveries of its events to
-- them and the log of their attempts (docs/webhooks.md). A process of its own,
-- identity-webhook-worker, logs in as identity_webhook_worker: it reads the endpoints (their
-- sealed secrets included: it signs with them) and keeps the deliveries; the token worker and
-- identityctl manage the endpoints; the gateway sees none of it.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'identity_webhook_worker') THEN
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = current_user AND (rolsuper OR rolcreaterole)) THEN
            RAISE EXCEPTION 'database role identity_webhook_worker does not exist, and % may not create it', current_user
                USING HINT = 'create the process roles first: scripts/services.sh db-roles DATABASE, '
                             'or CREATE ROLE identity_webhook_worker LOGIN PASSWORD ... as a superuser (README, "Database roles")';
        END IF;
        CREATE ROLE identity_webhook_worker NOLOGIN;
    END IF;
END
$$;

DO $$
BEGIN
    EXECUTE format('GRANT CONNECT ON DATABASE %I TO identity_webhook_worker', current_database());
END
$$;
GRANT USAGE ON SCHEMA public TO identity_webhook_worker;

CREATE TABLE webhook_endpoints (
    id text PRIMARY KEY,
    app_id text NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    url text NOT NULL CHECK (length(url) <= 2048),
    -- Event names, or {*} for every event.
    event_types text[] NOT NULL CHECK (cardinality(event_types) BETWEEN 1 AND 50),
    description text CHECK (length(description) <= 200),
    enabled boolean NOT NULL DEFAULT true,
    -- AES-256-GCM under the webhook-secret sub-key, bound to app and endpoint (WebhookSecretSeal).
    secret_enc bytea NOT NULL,
    -- After a rotation, the previous secret signs too until it expires.
    previous_secret_enc bytea,
    previous_secret_expires_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_endpoints_app ON webhook_endpoints (app_id, created_at);

-- One event for one endpoint. `event_id` is the message's webhook-id (the receiver's
-- idempotency key): one row per endpoint and event, however often the broker hands the event
-- over. `ordering_key` is the event's user (empty for none): a delivery waits while an older one
-- of the same endpoint and user is pending.
CREATE TABLE webhook_deliveries (
    id bigserial PRIMARY KEY,
    endpoint_id text NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    app_id text NOT NULL,
    event_id text NOT NULL,
    event_type text NOT NULL,
    ordering_key text NOT NULL,
    payload text NOT NULL,
    state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'dead')),
    attempts integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    -- A worker's claim: another worker takes the delivery only after it.
    locked_until timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz,
    UNIQUE (endpoint_id, event_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, id) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_order ON webhook_deliveries (endpoint_id, ordering_key, id) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_log ON webhook_deliveries (endpoint_id, id);

CREATE TABLE webhook_attempts (
    id bigserial PRIMARY KEY,
    delivery_id bigint NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    endpoint_id text NOT NULL,
    app_id text NOT NULL,
    at timestamptz NOT NULL DEFAULT now(),
    status_code integer,
    duration_ms integer NOT NULL,
    outcome text NOT NULL CHECK (outcome IN ('delivered', 'failed', 'refused', 'dead_lettered')),
    error text
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, id);

GRANT SELECT (id, app_id, url, event_types, enabled, secret_enc, previous_secret_enc, previous_secret_expires_at)
    ON webhook_endpoints TO identity_webhook_worker;
GRANT SELECT, INSERT, UPDATE ON webhook_deliveries TO identity_webhook_worker;
GRANT USAGE ON SEQUENCE webhook_deliveries_id_seq TO identity_webhook_worker;
GRANT INSERT ON webhook_attempts TO identity_webhook_worker;
GRANT USAGE ON SEQUENCE webhook_attempts_id_seq TO identity_webhook_worker;

-- Managing endpoints and their delivery log. A rotation moves the sealed secret to
-- previous_secret_enc, so these read secret_enc (sealed; both hold the master key anyway).
GRANT SELECT (id, app_id, url, event_types, description, enabled, secret_enc, previous_secret_expires_at, created_at,
              updated_at),
    INSERT, UPDATE (url, event_types, description, enabled, secret_enc, previous_secret_enc,
                    previous_secret_expires_at, updated_at), DELETE
    ON webhook_endpoints TO identity_token_worker, identityctl;
GRANT SELECT, UPDATE (state, attempts, next_attempt_at, locked_until, finished_at)
    ON webhook_deliveries TO identity_token_worker, identityctl;
GRANT SELECT ON webhook_attempts TO identity_token_worker, identityctl;
