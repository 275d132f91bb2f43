package rules

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"
)

// An operator may send a waiting link's email again (the beneficiary lost it, or it went to
// spam). Each resend is a new link.mail event written in the same transaction that counts
// it on the payout, so that two clicks at once cannot both pass the limit.

// Limits of a link's resent emails: so many in all, and a pause between two, so that a
// held-down button or a script cannot turn the service into a mail cannon against a
// beneficiary's inbox.
const (
	LinkResendMax = 5
	LinkResendGap = 10 * time.Minute
)

// LinkMailRefusal says why payout link p's email cannot be resent at now ("" when it can),
// for merchant m, and the code that says so.
func LinkMailRefusal(p *Payout, m *Merchant, now time.Time) (code, why string) {
	switch {
	case !LinkWaiting(p, now):
		return CodeWrongState, "the payout link no longer waits for its beneficiary"
	case !m.Settings.EmailNotifications:
		return CodeWrongState, "the merchant's emailNotifications is off: no email is sent"
	case p.Request.Beneficiary.Email == "":
		return CodeWrongState, "the payout has no beneficiary.email"
	case len(p.Link.Resent) >= LinkResendMax:
		return CodeLinkMailLimit, fmt.Sprintf("the link's email was already resent %d times, the most it may be", LinkResendMax)
	case len(p.Link.Resent) > 0 && now.Before(p.Link.Resent[len(p.Link.Resent)-1].Add(LinkResendGap)):
		next := p.Link.Resent[len(p.Link.Resent)-1].Add(LinkResendGap)
		return CodeLinkMailLimit, fmt.Sprintf("the link's email was resent less than %d minutes ago: again from %s",
			int(LinkResendGap/time.Minute), next.UTC().Format(time.RFC3339))
	}
	return "", ""
}

// ResendLinkMail writes a new email event for payout link id of merchant m (LinkMailRefusal
// says when it may not); r gives the event id's random part. It answers the payout as
// changed.
func (lc *Lifecycle) ResendLinkMail(ctx context.Context, m *Merchant, id int64, r io.Reader) (*Payout, error) {
	lc.init()
	now := lc.Now().UTC()
	var nonce [16]byte
	if _, err := io.ReadFull(r, nonce[:]); err != nil {
		return nil, err
	}
	var result *Payout
	var stepErr error
	found := false
	err := lc.Store.UpdatePayouts(ctx, []int64{id}, func(p *Payout, l Ledger) (time.Time, error) {
		if p.MerchantID != m.ID {
			return time.Time{}, ErrNoChange
		}
		found = true
		if p.Link == nil {
			stepErr = Errorf(KindConflict, CodeWrongState, "payout %d is not a payout link", id)
			return time.Time{}, ErrNoChange
		}
		if code, why := LinkMailRefusal(p, m, now); code != "" {
			kind := KindConflict
			if code == CodeLinkMailLimit {
				kind = KindRateLimited
			}
			stepErr = Errorf(kind, code, "%s", why)
			return time.Time{}, ErrNoChange
		}
		// A new Link, not the stored one changed in place: an engine may tell what to rewrite
		// by comparing what the step left with what it read.
		link := *p.Link
		link.Resent = append(slices.Clone(p.Link.Resent), now)
		p.Link = &link
		ev := Event{ID: newEventID(EventLinkMail, strconv.FormatInt(p.ID, 10), hex.EncodeToString(nonce[:]), "resent"),
			Kind: EventLinkMail, MerchantID: p.MerchantID, PayoutID: p.ID, CreatedAt: now, NextAt: now, Traceparent: p.Traceparent}
		if err := l.Enqueue(ev); err != nil {
			return time.Time{}, err
		}
		result = p.Clone()
		// The payout keeps its place in the lifecycle's queue: a reserved link is next due
		// at its expiry, anything else at once.
		if p.Status == StatusAuthorized && p.Reserved > 0 {
			return p.SessionExpiresAt, nil
		}
		return now, nil
	})
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, Errorf(KindNotFound, CodePayoutNotFound, "payout %d not found", id)
	}
	if stepErr != nil {
		return nil, stepErr
	}
	return result, nil
}
