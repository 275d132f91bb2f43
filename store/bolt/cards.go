package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"strconv"
	"time"

	bbolt "go.etcd.io/bbolt"

	"payouts/rules"
)

// The card vault. A card is kept only sealed (AES-256-GCM by the
// caller, bound to its token); the brand, BIN and last four stay readable, the CVV is never
// handed to the store.
//
//	cards        merchantId 0 docType 0 docNumber → cardRecord: the beneficiary's card on file
//	cards_payout be64(payoutId) token            → cardRecord: a card entered for one payout,
//	                                                kept until the payout's outcome
//
// Each submission of a card keeps its own record under its token: two submissions of one
// payout at once both write before the payout takes one of them, and the payout pays the
// card its take recorded, never whichever was written last. A store written before keeps a
// payout's card under be64(payoutId) alone, which PayoutCard still reads.
type cardRecord struct {
	Token   string    `json:"token"`
	Brand   string    `json:"brand"`
	BIN     string    `json:"bin"`
	Last4   string    `json:"last4"`
	Sealed  []byte    `json:"sealed"`
	OnFile  bool      `json:"onFile"`
	SavedAt time.Time `json:"savedAt"`
}

func (c *cardRecord) ref() rules.CardRef {
	return rules.CardRef{Token: c.Token, Brand: c.Brand, BIN: c.BIN, Last4: c.Last4}
}

func payoutCardKey(payoutID int64, token string) []byte {
	return append(be64(uint64(payoutID)), token...)
}

func beneficiaryKey(merchantID string, docType int, docNumber string) []byte {
	return key(merchantID, strconv.Itoa(docType), docNumber)
}

// SavedCard returns the beneficiary's card on file, if the merchant has one for them.
func (s *DB) SavedCard(ctx context.Context, merchantID string, docType int, docNumber string) (rules.CardRef, bool, error) {
	var c cardRecord
	err := s.bdb.View(func(tx *bbolt.Tx) error {
		return getJSON(tx.Bucket(bCards), beneficiaryKey(merchantID, docType, docNumber), &c)
	})
	if err == ErrNotFound {
		return rules.CardRef{}, false, nil
	}
	if err != nil {
		return rules.CardRef{}, false, err
	}
	return c.ref(), true, nil
}

// PutCard stores a newly entered card for a payout, beside any other submission's, and,
// with onFile, as the beneficiary's card on file (replacing an earlier one), in one
// transaction.
func (s *DB) PutCard(ctx context.Context, merchantID string, docType int, docNumber string, payoutID int64, ref rules.CardRef, sealed []byte, onFile bool) error {
	c := cardRecord{Token: ref.Token, Brand: ref.Brand, BIN: ref.BIN, Last4: ref.Last4,
		Sealed: bytes.Clone(sealed), OnFile: onFile, SavedAt: time.Now().UTC()}
	return s.bdb.Update(func(tx *bbolt.Tx) error {
		if onFile {
			if err := putJSON(tx.Bucket(bCards), beneficiaryKey(merchantID, docType, docNumber), &c); err != nil {
				return err
			}
		}
		return putJSON(tx.Bucket(bCardByPay), payoutCardKey(payoutID, ref.Token), &c)
	})
}

// KeepCardOnFile makes the card a payout took (under token) the beneficiary's card on file,
// replacing an earlier one. It comes after the take, so that of two submissions at once
// only the card the payout took is kept. ErrNotFound when the payout has no such card.
func (s *DB) KeepCardOnFile(ctx context.Context, merchantID string, docType int, docNumber string, payoutID int64, token string) error {
	return s.bdb.Update(func(tx *bbolt.Tx) error {
		var c cardRecord
		if err := getJSON(tx.Bucket(bCardByPay), payoutCardKey(payoutID, token), &c); err != nil {
			return err
		}
		c.OnFile = true
		if err := putJSON(tx.Bucket(bCardByPay), payoutCardKey(payoutID, token), &c); err != nil {
			return err
		}
		return putJSON(tx.Bucket(bCards), beneficiaryKey(merchantID, docType, docNumber), &c)
	})
}

// UseSavedCard makes the beneficiary's card on file the card of a payout. ErrNotFound when
// there is none (it may have been replaced meanwhile).
func (s *DB) UseSavedCard(ctx context.Context, merchantID string, docType int, docNumber string, payoutID int64) (rules.CardRef, error) {
	var c cardRecord
	err := s.bdb.Update(func(tx *bbolt.Tx) error {
		if err := getJSON(tx.Bucket(bCards), beneficiaryKey(merchantID, docType, docNumber), &c); err != nil {
			return err
		}
		return putJSON(tx.Bucket(bCardByPay), payoutCardKey(payoutID, c.Token), &c)
	})
	if err != nil {
		return rules.CardRef{}, err
	}
	return c.ref(), nil
}

// PayoutCard returns the card of a payout under token (the one its take recorded) and its
// sealed data, for a rail connector (VISA Direct needs the PAN). ErrNotFound once the
// payout's outcome dropped it.
func (s *DB) PayoutCard(ctx context.Context, payoutID int64, token string) (rules.CardRef, []byte, error) {
	var c cardRecord
	err := s.bdb.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bCardByPay)
		if err := getJSON(b, payoutCardKey(payoutID, token), &c); err != ErrNotFound {
			return err
		}
		if err := getJSON(b, be64(uint64(payoutID)), &c); err != nil || c.Token != token {
			return ErrNotFound
		}
		return nil
	})
	if err != nil {
		return rules.CardRef{}, nil, err
	}
	return c.ref(), c.Sealed, nil
}

// DropPayoutCard forgets the cards of a payout that reached its outcome. A card on file stays
// in the beneficiary's record; a card registered for this one transaction is gone.
func (s *DB) DropPayoutCard(ctx context.Context, payoutID int64) error {
	return s.bdb.Update(func(tx *bbolt.Tx) error {
		prefix := be64(uint64(payoutID))
		var dead [][]byte
		cur := tx.Bucket(bCardByPay).Cursor()
		for k, _ := cur.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = cur.Next() {
			dead = append(dead, bytes.Clone(k))
		}
		for _, k := range dead {
			if err := tx.Bucket(bCardByPay).Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
}

// DropUntakenCard forgets the card one submission entered for a payout that did not take
// it (another submission's card won, or the payout moved on). The card the payout's take
// recorded stays whatever token is given: a card on file used twice at once has one token.
func (s *DB) DropUntakenCard(ctx context.Context, payoutID int64, token string) error {
	return s.bdb.Update(func(tx *bbolt.Tx) error {
		p, err := payoutBucketsOf(tx).readState(payoutID)
		if err != nil && err != ErrNotFound {
			return err
		}
		if p != nil && p.Card != nil && p.Card.Token == token {
			return nil
		}
		return tx.Bucket(bCardByPay).Delete(payoutCardKey(payoutID, token))
	})
}

// DropFinishedPayoutCards drops the cards of payouts that reached their outcome (or no
// longer exist); the lifecycle hook drops them at once, this sweep catches what a crash
// between the outcome and the hook left behind.
func (s *DB) DropFinishedPayoutCards(ctx context.Context) (int, error) {
	n := 0
	err := s.bdb.Update(func(tx *bbolt.Tx) error {
		var dead [][]byte
		payouts := payoutBucketsOf(tx)
		err := tx.Bucket(bCardByPay).ForEach(func(k, _ []byte) error {
			p, err := payouts.readState(int64(binary.BigEndian.Uint64(k)))
			if err == ErrNotFound || err == nil && p.Status.Final() {
				dead = append(dead, bytes.Clone(k))
			} else if err != nil {
				return err
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range dead {
			if err := tx.Bucket(bCardByPay).Delete(k); err != nil {
				return err
			}
		}
		n = len(dead)
		return nil
	})
	return n, err
}
