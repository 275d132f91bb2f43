-- Named users of the dashboard and the audit log.

-- +goose Up

-- One row a user: rules.User as JSON (doc), with the columns its lookups use. email_key is
-- rules.EmailKey(email): unique, so two users never share an email whatever its case.
CREATE TABLE users (
    id         text PRIMARY KEY,
    email_key  text NOT NULL UNIQUE,
    setup_hash text,
    created_at timestamptz NOT NULL,
    doc        bytea NOT NULL
);
CREATE INDEX users_setup_hash ON users (setup_hash) WHERE setup_hash IS NOT NULL;

-- The audit log, appended only: rules.AuditEntry as JSON (doc, its detail byte for byte)
-- under its id, with the columns the filters read.
CREATE TABLE audit_log (
    id          bigserial PRIMARY KEY,
    at          timestamptz NOT NULL,
    principal   text NOT NULL,
    actor_name  text NOT NULL,
    action      text NOT NULL,
    merchant_id text NOT NULL,
    doc         bytea NOT NULL
);
CREATE INDEX audit_log_merchant ON audit_log (merchant_id, id);

-- +goose Down
DROP TABLE audit_log;
DROP TABLE users;
