package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"payouts/rules"
)

// The card vault (rules.CardStore), as store/bolt's cards.go keeps it:
// a beneficiary's card on file in cards, under the merchant and their document, and the
// cards entered for one payout in payout_cards, one row a token, until the payout's outcome:
// two submissions of one payout at once both write before the payout takes one of them, and
// the payout pays the card its take recorded. A card is kept only sealed (by the caller,
// bound to its token); the CVV is never handed to the store.

// SavedCard returns the beneficiary's card on file, if the merchant has one for them.
func (s *DB) SavedCard(ctx context.Context, merchantID string, docType int, docNumber string) (rules.CardRef, bool, error) {
	var ref rules.CardRef
	err := s.pool.QueryRow(context.Background(), `SELECT token, brand, bin, last4 FROM cards
		WHERE merchant_id = $1 AND doc_type = $2 AND doc_number = $3`, merchantID, docType, docNumber).
		Scan(&ref.Token, &ref.Brand, &ref.BIN, &ref.Last4)
	if errors.Is(err, pgx.ErrNoRows) {
		return rules.CardRef{}, false, nil
	}
	if err != nil {
		return rules.CardRef{}, false, fmt.Errorf("saved card: %w", err)
	}
	return ref, true, nil
}

// upsertCardSQL writes a beneficiary's card on file ($1 merchant, $2 document type, $3
// number; $4-$7 the reference; $8 sealed, $9 on file, $10 saved at).
const upsertCardSQL = `INSERT INTO cards
	(merchant_id, doc_type, doc_number, token, brand, bin, last4, sealed, on_file, saved_at)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
	ON CONFLICT (merchant_id, doc_type, doc_number) DO UPDATE SET
		token = excluded.token, brand = excluded.brand, bin = excluded.bin, last4 = excluded.last4,
		sealed = excluded.sealed, on_file = excluded.on_file, saved_at = excluded.saved_at`

// upsertPayoutCardSQL writes the card of a payout ($1; $2-$5 the reference; $6 sealed, $7 on
// file, $8 saved at).
const upsertPayoutCardSQL = `INSERT INTO payout_cards (payout_id, token, brand, bin, last4, sealed, on_file, saved_at)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
	ON CONFLICT (payout_id, token) DO UPDATE SET
		token = excluded.token, brand = excluded.brand, bin = excluded.bin, last4 = excluded.last4,
		sealed = excluded.sealed, on_file = excluded.on_file, saved_at = excluded.saved_at`

// PutCard stores a newly entered card for a payout, beside any other submission's, and,
// with onFile, as the beneficiary's card on file (replacing an earlier one), in one
// transaction.
func (s *DB) PutCard(ctx context.Context, merchantID string, docType int, docNumber string, payoutID int64, ref rules.CardRef, sealed []byte, onFile bool) error {
	ctx = context.WithoutCancel(ctx) // the work ends even when its caller has gone
	now := time.Now().UTC()
	if sealed == nil {
		sealed = []byte{} // NULL is no card
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if onFile {
			_, err := tx.Exec(ctx, upsertCardSQL, merchantID, docType, docNumber,
				ref.Token, ref.Brand, ref.BIN, ref.Last4, sealed, true, now)
			if err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, upsertPayoutCardSQL, payoutID, ref.Token, ref.Brand, ref.BIN, ref.Last4, sealed, onFile, now)
		return err
	})
	if err != nil {
		return fmt.Errorf("put card of payout %d: %w", payoutID, err)
	}
	return nil
}

// KeepCardOnFile makes the card a payout took (under token) the beneficiary's card on file,
// replacing an earlier one. It comes after the take, so that of two submissions at once
// only the card the payout took is kept. rules.ErrNotFound when the payout has no such card.
func (s *DB) KeepCardOnFile(ctx context.Context, merchantID string, docType int, docNumber string, payoutID int64, token string) error {
	ctx = context.WithoutCancel(ctx) // the work ends even when its caller has gone
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO cards
			(merchant_id, doc_type, doc_number, token, brand, bin, last4, sealed, on_file, saved_at)
			SELECT $1, $2, $3, token, brand, bin, last4, sealed, true, saved_at FROM payout_cards
				WHERE payout_id = $4 AND token = $5
			ON CONFLICT (merchant_id, doc_type, doc_number) DO UPDATE SET
				token = excluded.token, brand = excluded.brand, bin = excluded.bin, last4 = excluded.last4,
				sealed = excluded.sealed, on_file = excluded.on_file, saved_at = excluded.saved_at`,
			merchantID, docType, docNumber, payoutID, token)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return rules.ErrNotFound
		}
		_, err = tx.Exec(ctx, `UPDATE payout_cards SET on_file = true WHERE payout_id = $1 AND token = $2`, payoutID, token)
		return err
	})
	if err != nil {
		return fmt.Errorf("keep the card of payout %d on file: %w", payoutID, err)
	}
	return nil
}

// UseSavedCard makes the beneficiary's card on file the card of a payout.
// rules.ErrNotFound when there is none (it may have been replaced meanwhile).
func (s *DB) UseSavedCard(ctx context.Context, merchantID string, docType int, docNumber string, payoutID int64) (rules.CardRef, error) {
	ctx = context.WithoutCancel(ctx) // the work ends even when its caller has gone
	var ref rules.CardRef
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var sealed []byte
		var onFile bool
		var at time.Time
		err := tx.QueryRow(ctx, `SELECT token, brand, bin, last4, sealed, on_file, saved_at FROM cards
			WHERE merchant_id = $1 AND doc_type = $2 AND doc_number = $3 FOR SHARE`, merchantID, docType, docNumber).
			Scan(&ref.Token, &ref.Brand, &ref.BIN, &ref.Last4, &sealed, &onFile, &at)
		if errors.Is(err, pgx.ErrNoRows) {
			return rules.ErrNotFound
		}
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, upsertPayoutCardSQL, payoutID, ref.Token, ref.Brand, ref.BIN, ref.Last4, sealed, onFile, at)
		return err
	})
	if err != nil {
		return rules.CardRef{}, fmt.Errorf("use saved card for payout %d: %w", payoutID, err)
	}
	return ref, nil
}

// PayoutCard returns the card of a payout under token (the one its take recorded) and its
// sealed data, for a rail connector (VISA Direct needs the PAN). rules.ErrNotFound once the
// payout's outcome dropped it.
func (s *DB) PayoutCard(ctx context.Context, payoutID int64, token string) (rules.CardRef, []byte, error) {
	var ref rules.CardRef
	var sealed []byte
	err := s.pool.QueryRow(context.Background(), `SELECT token, brand, bin, last4, sealed FROM payout_cards
		WHERE payout_id = $1 AND token = $2`, payoutID, token).Scan(&ref.Token, &ref.Brand, &ref.BIN, &ref.Last4, &sealed)
	if errors.Is(err, pgx.ErrNoRows) {
		return rules.CardRef{}, nil, fmt.Errorf("card of payout %d: %w", payoutID, rules.ErrNotFound)
	}
	if err != nil {
		return rules.CardRef{}, nil, fmt.Errorf("card of payout %d: %w", payoutID, err)
	}
	return ref, sealed, nil
}

// DropPayoutCard forgets the cards of a payout that reached its outcome. A card on file stays
// in the beneficiary's record; a card registered for this one transaction is gone.
func (s *DB) DropPayoutCard(ctx context.Context, payoutID int64) error {
	if _, err := s.pool.Exec(context.Background(), `DELETE FROM payout_cards WHERE payout_id = $1`, payoutID); err != nil {
		return fmt.Errorf("drop card of payout %d: %w", payoutID, err)
	}
	return nil
}

// DropUntakenCard forgets the card one submission entered for a payout that did not take
// it (another submission's card won, or the payout moved on). The card the payout's take
// recorded stays whatever token is given: a card on file used twice at once has one token.
func (s *DB) DropUntakenCard(ctx context.Context, payoutID int64, token string) error {
	_, err := s.pool.Exec(context.Background(), `DELETE FROM payout_cards c WHERE c.payout_id = $1 AND c.token = $2
		AND NOT EXISTS (SELECT 1 FROM payouts p WHERE p.id = $1 AND p.doc::jsonb->'card'->>'token' = $2)`, payoutID, token)
	if err != nil {
		return fmt.Errorf("drop an untaken card of payout %d: %w", payoutID, err)
	}
	return nil
}

// DropFinishedPayoutCards drops the cards of payouts that reached their outcome (or no
// longer exist); the lifecycle hook drops them at once, this sweep catches what a crash
// between the outcome and the hook left behind. A payout is live while its status is one
// that rules.Status.Final says is not final; any other status is final, as store/bolt has it.
func (s *DB) DropFinishedPayoutCards(ctx context.Context) (int, error) {
	tag, err := s.pool.Exec(context.Background(), `DELETE FROM payout_cards c WHERE NOT EXISTS (
		SELECT 1 FROM payouts p WHERE p.id = c.payout_id AND p.status = ANY($1))`, liveStatuses())
	if err != nil {
		return 0, fmt.Errorf("drop cards of finished payouts: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// liveStatuses are the statuses that are not final.
func liveStatuses() []string {
	var live []string
	for _, st := range rules.Statuses {
		if !st.Final() {
			live = append(live, string(st))
		}
	}
	return live
}
