-- The transactional outbox: an event row is written in the transaction of the change it
-- reports, and the relay (in the revocation worker) publishes it with publisher confirms and
-- then deletes it. A rolled-back change leaves no row; a broker outage leaves rows waiting.
CREATE TABLE outbox (
    id           bigserial PRIMARY KEY,
    app_id       text NOT NULL,
    event_id     text NOT NULL UNIQUE,
    routing_key  text NOT NULL,
    message_type text NOT NULL,
    payload      text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);
