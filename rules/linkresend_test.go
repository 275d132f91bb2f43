package rules_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"payouts/rules"
)

// A waiting link's email may be sent again: each resend a new link.mail event of the
// payout, at most LinkResendMax, LinkResendGap apart; never once the link stopped waiting.
func TestResendLinkMailLimits(t *testing.T) {
	settings := rules.AllSettings()
	settings.EmailNotifications = true
	w := newWorld(t, settings, "", nil)
	w.fund("COL", "COP", 40000000)
	ctx := context.Background()
	res, err := w.svc.CreateLink(ctx, w.m, linkBody(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	w.run()
	id := res.Payout.ID
	rnd := func() *bytes.Reader { return bytes.NewReader(bytes.Repeat([]byte{byte(time.Now().UnixNano())}, 16)) }
	code := func(err error) string {
		var e *rules.Error
		if errors.As(err, &e) {
			return e.Code
		}
		return ""
	}
	resentEvents := func() int {
		recs, err := w.db.OutboxRecords(ctx, 100, func(r rules.OutboxRecord) bool {
			return r.Kind == rules.EventLinkMail && r.PayoutID == id && strings.HasSuffix(r.ID, ".resent")
		})
		if err != nil {
			t.Fatal(err)
		}
		return len(recs)
	}

	for i := 1; i <= rules.LinkResendMax; i++ {
		p, err := w.lc.ResendLinkMail(ctx, w.m, id, rnd())
		if err != nil {
			t.Fatalf("resend %d: %v", i, err)
		}
		if len(p.Link.Resent) != i {
			t.Fatalf("resend %d: the payout counts %d", i, len(p.Link.Resent))
		}
		if i < rules.LinkResendMax {
			// Too soon after the last one: refused, nothing written.
			if _, err := w.lc.ResendLinkMail(ctx, w.m, id, rnd()); code(err) != rules.CodeLinkMailLimit {
				t.Fatalf("a resend %v after the last: %v, want %s", time.Duration(0), err, rules.CodeLinkMailLimit)
			}
			w.clk.Add(rules.LinkResendGap)
		}
	}
	if n := resentEvents(); n != rules.LinkResendMax {
		t.Fatalf("%d resent events, want %d", n, rules.LinkResendMax)
	}
	w.clk.Add(time.Hour)
	if _, err := w.lc.ResendLinkMail(ctx, w.m, id, rnd()); code(err) != rules.CodeLinkMailLimit {
		t.Fatalf("resend past the most: %v", err)
	}
	// The payout still waits, reserved, and still expires on time: a resend left its place
	// in the lifecycle's queue alone.
	if p := w.get(id); p.Status != rules.StatusAuthorized || p.Reserved != 15000000 {
		t.Fatalf("after the resends: %s reserved %d", p.Status, p.Reserved)
	}

	// Another merchant's payout is not found; a cancelled link is not resent.
	other := &rules.Merchant{ID: "M2", Settings: settings}
	if _, err := w.lc.ResendLinkMail(ctx, other, id, rnd()); code(err) != rules.CodePayoutNotFound {
		t.Errorf("another merchant: %v", err)
	}
	res2, err := w.svc.CreateLink(ctx, w.m, linkBody(t, func(m map[string]any) { m["orderId"] = "LINK-RESEND-2" }))
	if err != nil {
		t.Fatal(err)
	}
	w.run()
	if _, err := w.lc.Cancel(ctx, w.m.ID, res2.Payout.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := w.lc.ResendLinkMail(ctx, w.m, res2.Payout.ID, rnd()); code(err) != rules.CodeWrongState {
		t.Errorf("a cancelled link: %v, want %s", err, rules.CodeWrongState)
	}
	if b := w.balance("COL", "COP"); b.Available != 40000000-15000000 {
		t.Errorf("the cancelled link's reservation was not released: %+v", b)
	}
	// Without emailNotifications nothing is mailed, so nothing is resent.
	off := *w.m
	off.Settings.EmailNotifications = false
	if _, err := w.lc.ResendLinkMail(ctx, &off, id, rnd()); code(err) != rules.CodeWrongState {
		t.Errorf("emailNotifications off: %v", err)
	}
}

// The expiry still comes after resends.
func TestResendLinkMailKeepsTheExpiry(t *testing.T) {
	settings := rules.AllSettings()
	settings.EmailNotifications = true
	w := newWorld(t, settings, "", nil)
	w.fund("COL", "COP", 20000000)
	ctx := context.Background()
	res, err := w.svc.CreateLink(ctx, w.m, linkBody(t, func(m map[string]any) { m["expirationTime"] = 60 }))
	if err != nil {
		t.Fatal(err)
	}
	w.run()
	if _, err := w.lc.ResendLinkMail(ctx, w.m, res.Payout.ID, bytes.NewReader(make([]byte, 16))); err != nil {
		t.Fatal(err)
	}
	w.clk.Add(time.Hour)
	w.run()
	if p := w.get(res.Payout.ID); p.Status != rules.StatusExpired || p.Errors[0].Code != rules.CodeLinkExpired {
		t.Fatalf("after a resend and the expiry: %s %+v", p.Status, p.Errors)
	}
	if b := w.balance("COL", "COP"); b.Available != 20000000 {
		t.Errorf("reservation not released: %+v", b)
	}
}
