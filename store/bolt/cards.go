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
//	cards_payout be64(payoutId)                  → cardRecord: the card one payout pays to,
//	                                                kept until the payout's outcome
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

// PutCard stores a newly entered card for a payout and, with onFile, as the beneficiary's
// card on file (replacing an earlier one), in one transaction.
func (s *DB) PutCard(ctx context.Context, merchantID string, docType int, docNumber string, payoutID int64, ref rules.CardRef, sealed []byte, onFile bool) error {
	c := cardRecord{Token: ref.Token, Brand: ref.Brand, BIN: ref.BIN, Last4: ref.Last4,
		Sealed: bytes.Clone(sealed), OnFile: onFile, SavedAt: time.Now().UTC()}
	return s.bdb.Update(func(tx *bbolt.Tx) error {
		if onFile {
			if err := putJSON(tx.Bucket(bCards), beneficiaryKey(merchantID, docType, docNumber), &c); err != nil {
				return err
			}
		}
		return putJSON(tx.Bucket(bCardByPay), be64(uint64(payoutID)), &c)
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
		return putJSON(tx.Bucket(bCardByPay), be64(uint64(payoutID)), &c)
	})
	if err != nil {
		return rules.CardRef{}, err
	}
	return c.ref(), nil
}

// PayoutCard returns the card a payout pays to and its sealed data, for a rail connector
// (VISA Direct needs the PAN). ErrNotFound once the payout's outcome dropped it.
func (s *DB) PayoutCard(ctx context.Context, payoutID int64) (rules.CardRef, []byte, error) {
	var c cardRecord
	err := s.bdb.View(func(tx *bbolt.Tx) error {
		return getJSON(tx.Bucket(bCardByPay), be64(uint64(payoutID)), &c)
	})
	if err != nil {
		return rules.CardRef{}, nil, err
	}
	return c.ref(), c.Sealed, nil
}

// DropPayoutCard forgets the card of a payout that reached its outcome. A card on file stays
// in the beneficiary's record; a card registered for this one transaction is gone.
func (s *DB) DropPayoutCard(ctx context.Context, payoutID int64) error {
	return s.bdb.Update(func(tx *bbolt.Tx) error { return tx.Bucket(bCardByPay).Delete(be64(uint64(payoutID))) })
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
