-- The rest of the service's records: the card vault, the sessions, and the sandbox's own
-- (scripted outcomes, directory entries, integration users, lookup request ids). The
-- sandbox clock's offset lives in meta under 'sandbox-clock-offset'.

-- +goose Up

-- A mail written without an event (a test mail) has no event id: NULL, so that any number
-- of them fit beside the unique ids of the event mails.
ALTER TABLE sandbox_mail ALTER COLUMN event_id DROP NOT NULL;

-- A beneficiary's card on file with a merchant, under their document. The card is kept
-- sealed; brand, BIN and last four stay readable.
CREATE TABLE cards (
    merchant_id text NOT NULL,
    doc_type    integer NOT NULL,
    doc_number  text NOT NULL,
    token       text NOT NULL,
    brand       text NOT NULL,
    bin         text NOT NULL,
    last4       text NOT NULL,
    sealed      bytea NOT NULL,
    on_file     boolean NOT NULL,
    saved_at    timestamptz NOT NULL,
    PRIMARY KEY (merchant_id, doc_type, doc_number)
);

-- The card one payout pays to, kept until the payout's outcome. No foreign key: the card
-- is entered before the lifecycle writes the payout's next state, and an orphan is swept.
CREATE TABLE payout_cards (
    payout_id bigint PRIMARY KEY,
    token     text NOT NULL,
    brand     text NOT NULL,
    bin       text NOT NULL,
    last4     text NOT NULL,
    sealed    bytea NOT NULL,
    on_file   boolean NOT NULL,
    saved_at  timestamptz NOT NULL
);

-- The scs sessions (tokens as scs hands them over, hashed). Expiry is judged by the
-- service's clock, never by the database's.
CREATE TABLE sessions (
    token  text PRIMARY KEY,
    data   bytea NOT NULL,
    expiry timestamptz NOT NULL
);
CREATE INDEX sessions_expiry ON sessions (expiry);

-- The current form session of a card payout.
CREATE TABLE card_sessions (
    payout_id  bigint PRIMARY KEY,
    session_id text NOT NULL,
    expiry     timestamptz NOT NULL
);
CREATE INDEX card_sessions_expiry ON card_sessions (expiry);

-- A merchant's scripted sandbox outcomes (rules.ScriptRule JSON, in order).
CREATE TABLE sandbox_rules (
    merchant_id text PRIMARY KEY,
    rules       jsonb NOT NULL
);

-- An admin's entry of the simulated directory (rules.DirectoryEntry JSON).
CREATE TABLE directory (
    country text NOT NULL,
    id      text NOT NULL,
    entry   jsonb NOT NULL,
    PRIMARY KEY (country, id)
);

-- The integration users of the lookup API: one per merchant, names unique
-- (rules.IntegrationUser JSON).
CREATE TABLE integration_users (
    user_name   text PRIMARY KEY,
    merchant_id text NOT NULL UNIQUE,
    doc         jsonb NOT NULL
);

-- The lookup API's request ids, to refuse a reused one; pruned after a day.
CREATE TABLE lookup_requests (
    merchant_id text NOT NULL,
    request_id  text NOT NULL,
    at          timestamptz NOT NULL,
    PRIMARY KEY (merchant_id, request_id)
);
CREATE INDEX lookup_requests_at ON lookup_requests (at);

-- +goose Down
DROP TABLE lookup_requests;
DROP TABLE integration_users;
DROP TABLE directory;
DROP TABLE sandbox_rules;
DROP TABLE card_sessions;
DROP TABLE sessions;
DROP TABLE payout_cards;
DROP TABLE cards;
DELETE FROM meta WHERE key = 'sandbox-clock-offset';
DELETE FROM sandbox_mail WHERE event_id IS NULL;
ALTER TABLE sandbox_mail ALTER COLUMN event_id SET NOT NULL;
