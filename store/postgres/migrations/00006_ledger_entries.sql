-- Ledger entries: every change of a balance, append-only, written in the
-- statement that applies the change (deltas.go) or beside it in the same transaction
-- (ledger.go). balances.entries is the id of the balance's last entry.

-- +goose Up

ALTER TABLE balances ADD COLUMN entries bigint NOT NULL DEFAULT 0;

CREATE TABLE ledger_entries (
    merchant_id text NOT NULL,
    country     text NOT NULL,
    currency    text NOT NULL,
    id          bigint NOT NULL,
    at          timestamptz NOT NULL,
    type        text NOT NULL,
    amount      bigint NOT NULL,
    available   bigint NOT NULL,
    balance     bigint NOT NULL,
    payout_id   bigint,
    order_id    text,
    batch_id    text,
    PRIMARY KEY (merchant_id, country, currency, id)
);

-- A balance kept before entries existed opens with one entry of its figures, so that the
-- sum of its entries is its balance from then on.
INSERT INTO ledger_entries (merchant_id, country, currency, id, at, type, amount, available, balance)
SELECT merchant_id, country, currency, 1, now(), 'opening', balance, available, balance
FROM balances WHERE balance <> 0 OR available <> 0;
UPDATE balances SET entries = 1 WHERE balance <> 0 OR available <> 0;

-- +goose Down

DROP TABLE ledger_entries;
ALTER TABLE balances DROP COLUMN entries;
