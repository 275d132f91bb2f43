-- Batches: a merchant's batch (rules.Batch JSON in doc, its status beside it for
-- the runner's queue) and its items (rules.BatchItem JSON, the payout they became beside it
-- for the join that reads their stage and status).

-- +goose Up

CREATE TABLE batches (
    id          bigserial PRIMARY KEY,
    merchant_id text NOT NULL,
    batch_id    text NOT NULL,
    runnable    boolean NOT NULL,
    doc         jsonb NOT NULL,
    UNIQUE (merchant_id, batch_id)
);
CREATE INDEX batches_by_merchant ON batches (merchant_id, id);
CREATE INDEX batches_runnable ON batches (id) WHERE runnable;

CREATE TABLE batch_items (
    batch_id  bigint NOT NULL REFERENCES batches (id),
    seq       integer NOT NULL,
    payout_id bigint,
    doc       jsonb NOT NULL,
    PRIMARY KEY (batch_id, seq)
);

-- +goose Down
DROP TABLE batch_items;
DROP TABLE batches;
