package rules

import (
	"encoding/hex"
	"encoding/json"
	"io"
	"time"
)

// A payout link reaches its beneficiary by email when the merchant's emailNotifications is
// on: one mail as it is created, and one reminder LinkReminderBefore its expiry if it still
// waits then. Both are events written in the create's transaction, so that a crash neither
// loses nor doubles them; the reminder is due at its time on the service's clock, so the
// sandbox clock brings it.

// EventLinkMail is the kind of a payout link's emails to its beneficiary.
const EventLinkMail = "link.mail"

// LinkReminderBefore is how long before its expiry a waiting link is reminded.
const LinkReminderBefore = 24 * time.Hour

// LinkMailData is what a link mail event says of its mail.
type LinkMailData struct {
	Reminder bool `json:"reminder,omitempty"`
}

// LinkMailEvents are the email events of a new payout link p: none without
// emailNotifications or a beneficiary email; the reminder only for a link that lasts longer
// than LinkReminderBefore. r gives their ids' random part (the payout has no id yet).
func LinkMailEvents(p *Payout, m *Merchant, r io.Reader, now time.Time) ([]Event, error) {
	if p.Channel != ChannelLink || p.Link == nil || !m.Settings.EmailNotifications || p.Request.Beneficiary.Email == "" {
		return nil, nil
	}
	var id [16]byte
	if _, err := io.ReadFull(r, id[:]); err != nil {
		return nil, err
	}
	nonce := hex.EncodeToString(id[:])
	evs := []Event{{ID: newEventID(EventLinkMail, nonce, "sent"), Kind: EventLinkMail, MerchantID: p.MerchantID,
		CreatedAt: now, NextAt: now, Traceparent: p.Traceparent}}
	if at := p.SessionExpiresAt.Add(-LinkReminderBefore); at.After(now) {
		data, _ := json.Marshal(LinkMailData{Reminder: true})
		// Created when due: the dispatcher gives up on an event some time after its
		// creation, and a reminder's first try may come days after the link's.
		evs = append(evs, Event{ID: newEventID(EventLinkMail, nonce, "reminder"), Kind: EventLinkMail, MerchantID: p.MerchantID,
			Data: data, CreatedAt: at, NextAt: at, Traceparent: p.Traceparent})
	}
	return evs, nil
}

// LinkWaiting reports whether payout link p still waits for its beneficiary at now.
func LinkWaiting(p *Payout, now time.Time) bool {
	return p.Channel == ChannelLink && p.Link != nil && !p.Status.Final() && now.Before(p.SessionExpiresAt)
}
