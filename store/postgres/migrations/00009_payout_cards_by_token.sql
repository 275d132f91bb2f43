-- A payout's cards are kept one row a token: two submissions of one payout at once each
-- write their own card before the payout takes one of them, and neither overwrites nor
-- drops the other's.

-- +goose Up
ALTER TABLE payout_cards DROP CONSTRAINT payout_cards_pkey;
ALTER TABLE payout_cards ADD PRIMARY KEY (payout_id, token);

-- +goose Down
-- One row a payout again: the card its take recorded, else the latest written.
DELETE FROM payout_cards c WHERE c.token <> COALESCE(
    (SELECT t.token FROM payout_cards t JOIN payouts p ON p.id = t.payout_id
        WHERE t.payout_id = c.payout_id AND t.token = p.doc::jsonb->'card'->>'token'),
    (SELECT t.token FROM payout_cards t WHERE t.payout_id = c.payout_id
        ORDER BY t.saved_at DESC, t.token DESC LIMIT 1));
ALTER TABLE payout_cards DROP CONSTRAINT payout_cards_pkey;
ALTER TABLE payout_cards ADD PRIMARY KEY (payout_id);
