package rules

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"time"
)

// ClaimMaxAttempts is how many wrong codes a Colombia cash claim takes; after them the
// claim is locked until it expires.
const ClaimMaxAttempts = 5

// NewClaimCode draws a 6-digit one-time code, uniformly, from r (crypto/rand.Reader in the
// server).
func NewClaimCode(r io.Reader) (string, error) {
	const limit = 4_294_000_000 // the largest multiple of 1,000,000 below 2^32: no modulo bias
	var b [4]byte
	for {
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return "", err
		}
		if n := binary.BigEndian.Uint32(b[:]); n < limit {
			return pad6(n % 1_000_000), nil
		}
	}
}

func pad6(n uint32) string {
	s := []byte("000000")
	for i := 5; i >= 0; i-- {
		s[i] = byte('0' + n%10)
		n /= 10
	}
	return string(s)
}

// ClaimCodeHash is what a payout keeps of its one-time code: the SHA-256, in hex.
func ClaimCodeHash(code string) string {
	sum := sha256.Sum256([]byte(code))
	return hex.EncodeToString(sum[:])
}

// cashOTPData is the data of an EventCashOTP: the one-time code, sealed. It leaves the
// outbox with the event once the email went out.
type cashOTPData struct {
	SealedCode []byte `json:"sealedCode"`
}

// CashOTPEvent draws the one-time code of a new Colombia cash payout, keeps only its hash on
// the payout, and returns the event that emails it to the beneficiary. The code travels only inside the event, sealed by seal and bound to the
// event id. The store sets the event's PayoutID when it gives the payout its id.
func CashOTPEvent(p *Payout, r io.Reader, seal func(code []byte, eventID string) []byte, now time.Time) (Event, error) {
	code, err := NewClaimCode(r)
	if err != nil {
		return Event{}, err
	}
	var id [16]byte
	if _, err := io.ReadFull(r, id[:]); err != nil {
		return Event{}, err
	}
	ev := Event{ID: newEventID(EventCashOTP, hex.EncodeToString(id[:])), Kind: EventCashOTP,
		MerchantID: p.MerchantID, PayoutID: p.ID, CreatedAt: now, NextAt: now, Traceparent: p.Traceparent}
	ev.Data, err = json.Marshal(cashOTPData{SealedCode: seal([]byte(code), ev.ID)})
	if err != nil {
		return Event{}, err
	}
	p.ClaimCodeHash = ClaimCodeHash(code)
	p.ClaimAttempts = 0
	return ev, nil
}

// OpenClaimCode recovers the one-time code of an EventCashOTP with open, the inverse of
// the seal given to CashOTPEvent.
func OpenClaimCode(ev Event, open func(sealed []byte, eventID string) ([]byte, error)) (string, error) {
	var d cashOTPData
	if err := json.Unmarshal(ev.Data, &d); err != nil || len(d.SealedCode) == 0 {
		return "", errors.New("the event carries no sealed code")
	}
	code, err := open(d.SealedCode, ev.ID)
	if err != nil {
		return "", errors.New("the sealed code does not open")
	}
	return string(code), nil
}

// ClaimStore is what a cash claim needs of the database.
type ClaimStore interface {
	UpdatePayouts(ctx context.Context, ids []int64, step Step) error
}

// CashClaims checks the one-time codes of Colombia cash payouts: a right code settles the
// payout as PROCESSED; wrong codes are counted on the payout, in the same transaction as
// the check, and ClaimMaxAttempts of them lock the claim.
type CashClaims struct {
	Store ClaimStore
	// Settle records the outcome (Lifecycle.Settle).
	Settle func(ctx context.Context, merchantID string, id int64, status Status, code, note string) (*Payout, error)
	Now    func() time.Time
}

// Claim claims payout id of the merchant with code.
func (c *CashClaims) Claim(ctx context.Context, merchantID string, id int64, code string) (*Payout, error) {
	now := c.Now().UTC()
	var stepErr error
	found, right := false, false
	err := c.Store.UpdatePayouts(ctx, []int64{id}, func(p *Payout, l Ledger) (time.Time, error) {
		found = true
		switch {
		case p.MerchantID != merchantID:
			stepErr = Errorf(KindNotFound, CodePayoutNotFound, "payout %d not found", id)
		case p.Channel != ChannelCash || p.ClaimCodeHash == "":
			stepErr = Errorf(KindConflict, CodeWrongState, "payout %d is not a cash payout: it has no claim code", id)
		case p.Status == StatusExpired, !p.ClaimUntil.IsZero() && !now.Before(p.ClaimUntil):
			stepErr = Errorf(KindConflict, CodeClaimExpired, "the cash claim of payout %d expired at %s", id, p.ClaimUntil.UTC().Format(time.RFC3339))
		case p.Status.Final():
			stepErr = wrongState(p, "be claimed")
		case p.ClaimAttempts >= ClaimMaxAttempts:
			stepErr = Errorf(KindConflict, CodeClaimLocked, "%d wrong codes locked the cash claim of payout %d", ClaimMaxAttempts, id)
		}
		if stepErr != nil {
			return time.Time{}, ErrNoChange
		}
		given := sha256.Sum256([]byte(code))
		want, _ := hex.DecodeString(p.ClaimCodeHash)
		if subtle.ConstantTimeCompare(given[:], want) == 1 {
			right = true
			// The cash network's reference of a collected payout is the code it was collected
			// with (spent now): the success notification's paymentCode, as the original sends
			// it. Settled below, by the lifecycle.
			p.RailRef = code
			return claimRequeue(p, now), nil
		}
		p.ClaimAttempts++
		left := ClaimMaxAttempts - p.ClaimAttempts
		stepErr = &Error{Kind: KindRejected, Code: CodeClaimCodeWrong, Field: "code",
			Message: "the code is wrong; " + itoa(int64(left)) + " attempts left"}
		if left == 0 {
			stepErr.(*Error).Message = "the code is wrong; no attempts left: the claim is locked"
		}
		return claimRequeue(p, now), nil
	})
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, Errorf(KindNotFound, CodePayoutNotFound, "payout %d not found", id)
	}
	if !right {
		return nil, stepErr
	}
	return c.Settle(ctx, merchantID, id, StatusProcessed, "", "cash claimed")
}

// claimRequeue is when the lifecycle should next look at a cash payout whose claim
// attempts changed: UpdatePayouts rewrites the queue entry from the step's answer, so the
// claim keeps the lifecycle's own schedule (PENDING_BANK waits for the claim until
// ClaimUntil; PENDING_BALANCE waits for a funding; the rest are due now).
func claimRequeue(p *Payout, now time.Time) time.Time {
	switch p.Status {
	case StatusPendingBalance:
		return time.Time{}
	case StatusPendingBank:
		if !p.ClaimUntil.IsZero() {
			return p.ClaimUntil
		}
	}
	return now
}
