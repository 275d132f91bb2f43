package rules_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"payouts/rules"
)

func TestLinkMailEventsTheLinkAndOneReminderADayBeforeItsExpiry(t *testing.T) {
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	link := func(minutes int, email string) *rules.Payout {
		p := &rules.Payout{MerchantID: "7", Channel: rules.ChannelLink, Link: &rules.Link{Minutes: minutes},
			SessionExpiresAt: now.Add(time.Duration(minutes) * time.Minute)}
		p.Request.Beneficiary.Email = email
		return p
	}
	on := &rules.Merchant{ID: "7", Settings: rules.Settings{EmailNotifications: true}}
	rnd := bytes.NewReader(bytes.Repeat([]byte{1}, 64))

	evs, err := rules.LinkMailEvents(link(2880, "a@b.co"), on, rnd, now)
	if err != nil || len(evs) != 2 {
		t.Fatalf("two-day link: %v %+v", err, evs)
	}
	if evs[0].Kind != rules.EventLinkMail || !evs[0].NextAt.Equal(now) || len(evs[0].Data) != 0 {
		t.Errorf("the link's mail: %+v", evs[0])
	}
	var d rules.LinkMailData
	json.Unmarshal(evs[1].Data, &d)
	if want := now.Add(24 * time.Hour); !evs[1].NextAt.Equal(want) || !evs[1].CreatedAt.Equal(want) || !d.Reminder || evs[1].ID == evs[0].ID {
		t.Errorf("the reminder: %+v, want due at %v", evs[1], want)
	}
	// A link of a day or less: no reminder.
	if evs, _ := rules.LinkMailEvents(link(1440, "a@b.co"), on, rnd, now); len(evs) != 1 {
		t.Errorf("one-day link: %d events, want the link's mail only", len(evs))
	}
	// No email, or emailNotifications off, or not a link: nothing.
	off := &rules.Merchant{ID: "7"}
	cash := link(2880, "a@b.co")
	cash.Channel = rules.ChannelCash
	for name, c := range map[string]struct {
		p *rules.Payout
		m *rules.Merchant
	}{"no email": {link(2880, ""), on}, "off": {link(2880, "a@b.co"), off}, "not a link": {cash, on}} {
		if evs, err := rules.LinkMailEvents(c.p, c.m, rnd, now); err != nil || len(evs) != 0 {
			t.Errorf("%s: %v %+v", name, err, evs)
		}
	}
}

func TestLinkEventsHookAnnouncesALinkThatEndedUnused(t *testing.T) {
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	hook := rules.LinkEventsHook(func() time.Time { return now })
	m := &rules.Merchant{ID: "7", Settings: rules.Settings{NotificationURL: "sandbox:inbox"}}
	locked := &rules.Payout{ID: 41, MerchantID: "7", OrderID: "L-1", Channel: rules.ChannelLink, Link: &rules.Link{},
		Status: rules.StatusExpired, Errors: []*rules.Error{{Code: rules.CodeCardAttemptsExceded}}}
	evs := hook(locked, m, []rules.Event{{ID: "before"}})
	if len(evs) != 2 || evs[1].ID != "link.notification.41.EXPIRED" || rules.EventType(evs[1].ID) != "link.EXPIRED" ||
		rules.LaneOf(evs[1].Kind) != rules.LaneNotify {
		t.Fatalf("locked link: %+v", evs)
	}
	var n rules.LinkNotice
	if err := json.Unmarshal(evs[1].Data, &n); err != nil || n.Type != "link.EXPIRED" || n.Code != rules.CodeCardAttemptsExceded || n.PayoutID != "41" {
		t.Errorf("body %s", evs[1].Data)
	}
	// Paid through its link (no longer on the link channel), or no notificationUrl: nothing.
	paid := &rules.Payout{ID: 42, MerchantID: "7", Channel: rules.ChannelBatch, Link: &rules.Link{}, Status: rules.StatusExpired}
	if evs := hook(paid, m, nil); len(evs) != 0 {
		t.Errorf("a link that took its destination: %+v", evs)
	}
	if evs := hook(locked, &rules.Merchant{ID: "7"}, nil); len(evs) != 0 {
		t.Errorf("no notificationUrl: %+v", evs)
	}
}
