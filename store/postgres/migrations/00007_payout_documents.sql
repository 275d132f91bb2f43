-- A payout's document is written and read whole, never queried inside: kept as the text the
-- service wrote, PostgreSQL no longer parses it into jsonb on each write and prints it back
-- on each read (most of its CPU in a lifecycle round). And room is left on each
-- page for the new version of a row: a lifecycle claim changes only the lease columns, which
-- no index holds, and with room on its page it is written as a heap-only tuple (HOT), with no
-- new entry in any of the table's indexes (new pages only; the ALTER rewrites the table).

-- +goose Up
ALTER TABLE payouts SET (fillfactor = 70);
ALTER TABLE payouts ALTER COLUMN doc TYPE text USING doc::text;

-- +goose Down
ALTER TABLE payouts ALTER COLUMN doc TYPE jsonb USING doc::jsonb;
ALTER TABLE payouts RESET (fillfactor);
