package rules

import (
	"context"
	"time"
)

// What the card form counts, as a payout link's page does (CountLinkAttempt): its failed
// submissions are counted on the payout, in one conditional write (UpdatePayouts) with the
// check that the form is still open and the end the fifth one decides, so two failures at
// once count twice and lock the form once, on one instance or several, and no lock is held
// by the form around its store calls.

// CardAttemptsMax failed submissions lock a card payout's form and end the payout.
const CardAttemptsMax = 5

// CardLocked reports whether the card form's failed submissions are spent. A payout locked
// by a store written before they were counted on it counts none: its end says so (EXPIRED
// with CodeCardAttemptsExceded, no card).
func (p *Payout) CardLocked() bool {
	if p.CardAttempts >= CardAttemptsMax {
		return true
	}
	if p.Card != nil || p.Status != StatusExpired {
		return false
	}
	for _, e := range p.Errors {
		if e != nil && e.Code == CodeCardAttemptsExceded {
			return true
		}
	}
	return false
}

// cardOpen is why payout p of merchant m cannot count a card form's attempt at now, nil when
// it can: it is m's card payout, waits for its card in the session that expires at session
// (not one the merchant restarted since), is not ended, locked or expired.
func cardOpen(p *Payout, m *Merchant, session, now time.Time, action string) error {
	if p.MerchantID != m.ID || p.Channel != ChannelCard || p.Card != nil || p.Status.Final() || p.CardLocked() ||
		!p.SessionExpiresAt.Equal(session) {
		return wrongState(p, action)
	}
	if !p.SessionExpiresAt.IsZero() && !now.Before(p.SessionExpiresAt) {
		return Errorf(KindConflict, CodeCardSessionExpired, "the card form session expired")
	}
	return nil
}

// CountCardAttempt counts a failed submission of card payout id's form, in the session that
// expires at session, and answers the payout as written. The fifth locks the form and ends
// the payout in the same write, REJECTED/EXPIRED with CodeCardAttemptsExceded: its
// reservation released, its outcome notified once. A form no longer open (a card taken, the
// payout ended, locked or expired, the session restarted) counts nothing and answers why.
func (lc *Lifecycle) CountCardAttempt(ctx context.Context, m *Merchant, id int64, session time.Time) (*Payout, error) {
	lc.init()
	now := lc.Now().UTC()
	var result *Payout
	var stepErr error
	err := lc.Store.UpdatePayouts(ctx, []int64{id}, func(p *Payout, l Ledger) (time.Time, error) {
		if stepErr = cardOpen(p, m, session, now, "count a card attempt"); stepErr != nil {
			return time.Time{}, ErrNoChange
		}
		p.CardAttempts++
		if !p.CardLocked() {
			result = p.Clone()
			return waitingNextDue(p, now), nil
		}
		next, err := lc.finish(p, m, l, now, StatusExpired, CodeCardAttemptsExceded,
			"five failed card submissions ended the card form session")
		if err == ErrNoChange { // a status that cannot expire: the form stays locked all the same
			result = p.Clone()
			return waitingNextDue(p, now), nil
		}
		result = p.Clone()
		return next, err
	})
	return lc.formWritten(ctx, result, stepErr, err, id)
}
