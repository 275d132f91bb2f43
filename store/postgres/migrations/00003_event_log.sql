-- The event log: every merchant notification tried, with the exact body sent and
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

-- Every delivery attempt of a merchant, in the order logged: the feed the event stream of
-- `payouts listen` follows (cursor is the stream's event id); n indexes event_log.attempts.
CREATE TABLE event_feed (
    cursor      bigserial PRIMARY KEY,
    merchant_id text NOT NULL,
    event_id    text NOT NULL,
    n           integer NOT NULL,
    FOREIGN KEY (merchant_id, event_id) REFERENCES event_log (merchant_id, event_id) ON DELETE CASCADE
);
CREATE INDEX event_feed_merchant ON event_feed (merchant_id, cursor);

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
DROP TABLE event_feed;
DROP TABLE event_log;
