package rules

import (
	"context"
	"time"
)

// What a payout link's page counts, and what ends a link the page cannot let go on. Each is
// one conditional write of the payout (UpdatePayouts: the payout read and written in one
// transaction, locked against every other writer, on one instance or several): the count,
// the check that the link is still open and what the count decides are written together,
// so two submissions at once count twice and lock the link once, and a submission never
// gives a destination to a link another one locked, gave or ended.

// LinkAttemptsMax failed submissions lock a payout link; as many holders' names are the
// most its review shows: the page is no way to try numbers or read the directory.
const LinkAttemptsMax = 5

// LinkAttempt is what counts against a payout link (CountLinkAttempt).
type LinkAttempt int

// What counts.
const (
	// LinkFailed is a submission refused: by the rules, by the directory, or by the
	// review (a holder not confirmed, a document that is not the merchant's).
	LinkFailed LinkAttempt = iota + 1
	// LinkLooked is a holder's name the review showed.
	LinkLooked
)

// Locked reports whether the link's failed submissions or looks are spent.
func (k *Link) Locked() bool {
	return k != nil && (k.Failures >= LinkAttemptsMax || k.Looks > LinkAttemptsMax)
}

// linkOpen is why payout p of merchant m cannot take a destination at now, nil when it can:
// it is m's, waits on its link, is not ended, locked or expired.
func linkOpen(p *Payout, m *Merchant, now time.Time, action string) error {
	if p.MerchantID != m.ID || p.Channel != ChannelLink || p.Link == nil || p.Status.Final() || p.Link.Locked() {
		return wrongState(p, action)
	}
	if !now.Before(p.SessionExpiresAt) {
		return Errorf(KindConflict, CodeLinkExpired, "the payout link expired")
	}
	return nil
}

// waitingNextDue is when a link or a card form that goes on waiting is next due: a reserved
// one at its expiry, anything else at once.
func waitingNextDue(p *Payout, now time.Time) time.Time {
	if p.Status == StatusAuthorized && p.Reserved > 0 {
		return p.SessionExpiresAt
	}
	return now
}

// CountLinkAttempt counts what against payout link id of merchant m and answers the payout
// as written. The attempt that spends the link's failures (the fifth) or looks (the sixth
// name) locks it, and ends the payout in the same write, REJECTED/EXPIRED with
// CodeCardAttemptsExceded as the card form's: its reservation released, its outcome
// notified once. A link no longer open counts nothing and answers why (LinkDestination's
// errors).
func (lc *Lifecycle) CountLinkAttempt(ctx context.Context, m *Merchant, id int64, what LinkAttempt) (*Payout, error) {
	lc.init()
	now := lc.Now().UTC()
	var result *Payout
	var stepErr error
	err := lc.Store.UpdatePayouts(ctx, []int64{id}, func(p *Payout, l Ledger) (time.Time, error) {
		if stepErr = linkOpen(p, m, now, "count an attempt"); stepErr != nil {
			return time.Time{}, ErrNoChange
		}
		// A new Link, not the stored one changed in place: an engine may tell what to
		// rewrite by comparing what the step left with what it read.
		link := *p.Link
		switch what {
		case LinkLooked:
			link.Looks++
		default:
			link.Failures++
		}
		p.Link = &link
		if !link.Locked() {
			result = p.Clone()
			return waitingNextDue(p, now), nil
		}
		next, err := lc.finish(p, m, l, now, StatusExpired, CodeCardAttemptsExceded, "the payout link locked after failed submissions")
		if err == ErrNoChange { // a status that cannot expire: the link stays locked all the same
			result = p.Clone()
			return waitingNextDue(p, now), nil
		}
		result = p.Clone()
		return next, err
	})
	return lc.formWritten(ctx, result, stepErr, err, id)
}

// EndLink ends payout link id of merchant m with status and code, as long as it is still
// open: the review's end when the directory lists another bank (CodeLinkOwnership). A link
// that took a destination meanwhile, from another submission, goes on.
func (lc *Lifecycle) EndLink(ctx context.Context, m *Merchant, id int64, status Status, code, note string) (*Payout, error) {
	lc.init()
	now := lc.Now().UTC()
	var result *Payout
	var stepErr error
	err := lc.Store.UpdatePayouts(ctx, []int64{id}, func(p *Payout, l Ledger) (time.Time, error) {
		if stepErr = linkOpen(p, m, now, "end the link"); stepErr != nil {
			return time.Time{}, ErrNoChange
		}
		if !CanMove(p.Status, status) {
			stepErr = wrongState(p, "move to "+string(status))
			return time.Time{}, ErrNoChange
		}
		next, err := lc.finish(p, m, l, now, status, code, note)
		result = p.Clone()
		return next, err
	})
	return lc.formWritten(ctx, result, stepErr, err, id)
}

// formWritten answers the write of a link's or a card form's step: its error, the step's,
// or the payout written, whose end (if it ended) runs the finished hooks.
func (lc *Lifecycle) formWritten(ctx context.Context, result *Payout, stepErr, err error, id int64) (*Payout, error) {
	if err != nil {
		return nil, err
	}
	if stepErr != nil {
		return nil, stepErr
	}
	if result == nil {
		return nil, Errorf(KindNotFound, CodePayoutNotFound, "payout %d not found", id)
	}
	if result.Status.Final() {
		lc.finished(ctx, []*Payout{result})
	}
	return result, nil
}
