-- What the HTTPS certificates of --https keep (github.com/caddyserver/certmagic's Storage):
-- the ACME account, each name's certificate, private key and metadata, and the challenges
-- being answered, under slash-separated keys. Every instance on this database reads them, so
-- a certificate one instance obtained serves them all, and a challenge one instance asked for
-- is answered by whichever instance the CA reaches. Values are sealed with the master key by
-- the server before they come here.

-- +goose Up
CREATE TABLE IF NOT EXISTS tls_certificates (
    key      text PRIMARY KEY COLLATE "C",
    value    bytea NOT NULL,
    modified timestamptz NOT NULL
);

-- +goose Down
DROP TABLE tls_certificates;
