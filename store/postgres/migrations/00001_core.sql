-- The core of the service: merchants, payouts with their lifecycle queue, balances with
-- their ledger totals, and the outbox. Money is bigint minor units.

-- +goose Up
CREATE TABLE meta (
    key   text PRIMARY KEY,
    value bytea NOT NULL
);

-- A merchant as rules.Merchant JSON (its API secrets sealed with the master key).
CREATE TABLE merchants (
    id         text PRIMARY KEY,
    doc        jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
-- The next number of a merchant created without an id.
CREATE SEQUENCE merchant_numbers;

-- A payout: the whole rules.Payout as JSON (doc), with the columns its indexes and the
-- lifecycle queue need. due_at is when its next step is due (NULL: not queued); a worker
-- that claims the step holds it until lease_until.
CREATE TABLE payouts (
    id          bigserial PRIMARY KEY,
    merchant_id text NOT NULL,
    order_id    text NOT NULL,
    country     text NOT NULL,
    currency    text NOT NULL,
    amount      bigint NOT NULL,
    stage       text NOT NULL,
    status      text NOT NULL,
    created_at  timestamptz NOT NULL,
    due_at      timestamptz,
    due_status  text,
    lease_owner text,
    lease_until timestamptz,
    doc         jsonb NOT NULL,
    CONSTRAINT payouts_order UNIQUE (merchant_id, order_id)
);
CREATE INDEX payouts_by_merchant ON payouts (merchant_id, id DESC);
CREATE INDEX payouts_by_stage ON payouts (merchant_id, stage, id DESC);
CREATE INDEX payouts_by_status ON payouts (merchant_id, status, id DESC);
CREATE INDEX payouts_due ON payouts (due_at) WHERE due_at IS NOT NULL;

-- A merchant's balance in one country and currency, with the ledger's running totals:
-- balance = funded - processed + reversed; available = balance - reserved by open payouts.
CREATE TABLE balances (
    merchant_id text NOT NULL,
    country     text NOT NULL,
    currency    text NOT NULL,
    available   bigint NOT NULL,
    balance     bigint NOT NULL,
    funded      bigint NOT NULL,
    processed   bigint NOT NULL,
    reversed    bigint NOT NULL,
    PRIMARY KEY (merchant_id, country, currency),
    CHECK (available >= 0 AND balance >= 0 AND available <= balance),
    CHECK (balance = funded - processed + reversed)
);

-- The durable outbox: events written in the transaction of the change that causes them.
-- dead events are kept for inspection; a dispatcher claims due events until lease_until.
CREATE TABLE outbox (
    seq         bigserial PRIMARY KEY,
    event_id    text NOT NULL,
    lane        text NOT NULL,
    kind        text NOT NULL,
    merchant_id text NOT NULL,
    payout_id   bigint NOT NULL,
    next_at     timestamptz NOT NULL,
    dead        boolean NOT NULL DEFAULT false,
    lease_owner text,
    lease_until timestamptz,
    doc         jsonb NOT NULL
);
CREATE INDEX outbox_due ON outbox (lane, next_at) WHERE NOT dead;
CREATE INDEX outbox_event ON outbox (event_id);

-- Event ids delivered: a copy of a delivered event is never delivered again.
CREATE TABLE delivered (
    event_id text PRIMARY KEY,
    at       timestamptz NOT NULL
);
CREATE INDEX delivered_at ON delivered (at);

-- The sandbox mailbox: each mail written with its event's delivered mark.
CREATE TABLE sandbox_mail (
    seq      bigserial PRIMARY KEY,
    event_id text NOT NULL UNIQUE,
    raw      bytea NOT NULL,
    at       timestamptz NOT NULL
);

-- +goose Down
DROP TABLE sandbox_mail;
DROP TABLE delivered;
DROP TABLE outbox;
DROP TABLE balances;
DROP TABLE payouts;
DROP SEQUENCE merchant_numbers;
DROP TABLE merchants;
DROP TABLE meta;
