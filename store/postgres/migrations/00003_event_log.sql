-- The event log (issue 23): every merchant notification tried, with the exact body sent and
-- each delivery attempt, kept 30 days; the sandbox's inbox and delivery chaos.

-- +goose Up

-- One row an event, numbered in the order of its first try (seq is the merchant's cursor
-- and the SSE stream's event id); attempts is a JSON array of rules.DeliveryAttempt.
CREATE TABLE event_log (
    seq          bigserial PRIMARY KEY,
    merchant_id  text NOT NULL,
    event_id     text NOT NULL,
    payout_id    bigint NOT NULL,
    type         text NOT NULL,
    body         bytea NOT NULL,
    created_at   timestamptz NOT NULL,
    delivered_at timestamptz,
    attempts     jsonb NOT NULL,
    UNIQUE (merchant_id, event_id)
);
CREATE INDEX event_log_merchant ON event_log (merchant_id, seq);
CREATE INDEX event_log_created ON event_log (created_at);

-- What the sandbox inbox received (rules.InboxItem), newest first by seq.
CREATE TABLE sandbox_inbox (
    seq             bigserial PRIMARY KEY,
    merchant_id     text NOT NULL,
    event_id        text NOT NULL,
    received_at     timestamptz NOT NULL,
    headers         jsonb NOT NULL,
    body            bytea NOT NULL,
    signature_valid boolean NOT NULL
);
CREATE INDEX sandbox_inbox_merchant ON sandbox_inbox (merchant_id, seq);
CREATE INDEX sandbox_inbox_received ON sandbox_inbox (received_at);

-- A merchant's delivery chaos (rules.DeliveryChaos JSON); no row: off.
CREATE TABLE delivery_chaos (
    merchant_id text PRIMARY KEY,
    chaos       jsonb NOT NULL
);

-- +goose Down
DROP TABLE delivery_chaos;
DROP TABLE sandbox_inbox;
DROP TABLE event_log;
