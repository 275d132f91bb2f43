package rules

import (
	"encoding/json"
	"strconv"
	"time"
)

// A merchant hears of its payout links beyond their outcome: when the beneficiary gave a
// destination (the payout goes on to the rail) and when a link expired unused. These are
// this project's own events, signed and delivered to the notificationUrl as the payout
// notifications are, and kept in the event log; their body is a LinkNotice, not the
// original's notification body, which announces only outcomes.

// EventLinkNotification is the kind of a payout link's events to its merchant.
const EventLinkNotification = "link.notification"

// What a link event announces: its id is link.notification.<payout>.<what>, its type
// link.<what>.
const (
	LinkSubmitted = "SUBMITTED"
	LinkExpired   = "EXPIRED"
)

// LinkNotice is the body of a payout link's event.
type LinkNotice struct {
	Type       string `json:"type" enum:"link.SUBMITTED,link.EXPIRED" doc:"link.SUBMITTED: the beneficiary gave a destination, and the payout goes on as any other; link.EXPIRED: the link ended unused (code 4042 at its expiry, 2932 when locked after failed submissions)"`
	PayoutID   string `json:"payoutId"`
	MerchantID string `json:"merchantId"`
	OrderID    string `json:"orderId"`
	Country    string `json:"country"`
	Amount     string `json:"amount" doc:"in minor units"`
	Currency   string `json:"currency"`
	// AccountType is the kind of destination the beneficiary chose (link.SUBMITTED).
	AccountType int    `json:"accountType,omitempty" doc:"the account type the beneficiary chose (link.SUBMITTED)"`
	Code        string `json:"code,omitempty" doc:"why the link ended (link.EXPIRED)"`
	ExpiresAt   string `json:"expiresAt" doc:"when the link expires or expired"`
	At          string `json:"at" doc:"when it happened"`
}

// LinkEvent is the event announcing what (LinkSubmitted, LinkExpired) of payout link p to a
// merchant m; false when m has no notificationUrl. The body is fixed now, so that every
// delivery and resend carries the same bytes.
func LinkEvent(p *Payout, m *Merchant, what string, now time.Time) (Event, bool) {
	if m.Settings.NotificationURL == "" {
		return Event{}, false
	}
	n := LinkNotice{Type: "link." + what, PayoutID: strconv.FormatInt(p.ID, 10), MerchantID: p.MerchantID, OrderID: p.OrderID,
		Country: p.Country, Amount: strconv.FormatInt(p.Amount, 10), Currency: p.Currency,
		ExpiresAt: wireTime(p.SessionExpiresAt), At: wireTime(now)}
	if what == LinkSubmitted {
		n.AccountType, _ = strconv.Atoi(string(p.Request.Destination.BankAccount.AccountType))
	} else if k := len(p.Errors); k > 0 {
		n.Code = p.Errors[k-1].Code
	}
	body, _ := json.Marshal(n)
	return Event{ID: newEventID(EventLinkNotification, strconv.FormatInt(p.ID, 10), what), Kind: EventLinkNotification,
		MerchantID: p.MerchantID, PayoutID: p.ID, Data: body, CreatedAt: now, NextAt: now, Traceparent: p.Traceparent}, true
}

// LinkEventsHook is the OutcomeHook that announces a payout link that expired (or was
// locked) before its beneficiary gave a destination.
func LinkEventsHook(now func() time.Time) OutcomeHook {
	return func(p *Payout, m *Merchant, evs []Event) []Event {
		if p.Link == nil || p.Channel != ChannelLink || p.Status != StatusExpired {
			return evs
		}
		if ev, ok := LinkEvent(p, m, LinkExpired, now().UTC()); ok {
			evs = append(evs, ev)
		}
		return evs
	}
}

func wireTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
