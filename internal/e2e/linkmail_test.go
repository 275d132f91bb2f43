package e2e

// End-to-end tests of how a payout link reaches its beneficiary: its email at once, and one
// reminder a day before it expires, on the sandbox clock, only while it still waits.

import (
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestPayoutLinkEmailAndOneReminder(t *testing.T) {
	s := startServer(t, "")
	c := s.newMerchant(t, map[string]any{"emailNotifications": true})

	waiting := linkRequest("LINK-MAIL-1")
	waiting["expirationTime"] = 2880 // two days: the reminder is due after one
	waiting["lang"] = "en"
	_, _, a, raw := c.createLink(t, waiting)
	if a.Link == "" {
		t.Fatalf("create: %s", raw)
	}
	done := linkRequest("LINK-MAIL-2")
	done["expirationTime"] = 2880
	done["beneficiary"].(map[string]any)["email"] = "ana.gomez@gmail.com"
	_, _, b, raw := c.createLink(t, done)
	if b.Link == "" {
		t.Fatalf("create: %s", raw)
	}

	// The link's email, at once, in the link's language, naming merchant, amount and expiry.
	mails := s.waitMails(t, "?kind=link.mail&payoutId="+itoa(a.Payout.ID), 1, 10*time.Second)
	m := mails[0]
	if m.To != "juan.perez@gmail.com" || !strings.Contains(m.Text, a.Link) || !strings.Contains(m.HTML, `href="`+strings.ReplaceAll(a.Link, "&", "&amp;")+`"`) ||
		!strings.Contains(m.Subject, "COP $ 150.000,00") || !strings.Contains(m.Text, "The link expires on") || !strings.Contains(m.HTML, `lang="en"`) {
		t.Errorf("link mail: %+v", m)
	}
	es := s.waitMails(t, "?kind=link.mail&payoutId="+itoa(b.Payout.ID), 1, 10*time.Second)[0]
	if es.To != "ana.gomez@gmail.com" || !strings.Contains(es.Text, b.Link) || !strings.Contains(es.Text, "El enlace vence el") ||
		!strings.Contains(es.HTML, `lang="es"`) {
		t.Errorf("Spanish link mail: %+v", es)
	}

	// The second link is completed: it is owed no reminder.
	if code, _, page := submitLink(t, b.Link, url.Values{"kind": {"2"}, "bankCode": {"012"}, "accountNumber": {"12345678901"}}); code != 303 {
		t.Fatalf("submit: %d %s", code, docText(page))
	}
	c.waitStage(t, b.Payout.ID, "SUCCESS", 15*time.Second)

	// Not yet a day before the expiry: no reminder. All that is due is delivered once the
	// outbox holds only the two reminders.
	s.advance(t, "23h")
	s.waitOutboxDepth(t, 2)
	if got := s.sandboxMails(t, "?kind=link.mail&payoutId="+itoa(a.Payout.ID)); len(got) != 1 {
		t.Fatalf("%d link mails 25h before the expiry, want 1", len(got))
	}
	// A day before: exactly one reminder to the waiting link, none to the completed one.
	s.advance(t, "61m")
	got := s.waitMails(t, "?kind=link.mail&payoutId="+itoa(a.Payout.ID), 2, 10*time.Second)
	if r := got[0]; !strings.HasPrefix(r.Subject, "Reminder:") || !strings.Contains(r.Text, a.Link) {
		t.Errorf("reminder: %+v", r)
	}
	s.waitOutboxDepth(t, 0)
	s.advance(t, "12h")
	if got := s.sandboxMails(t, "?kind=link.mail&payoutId="+itoa(a.Payout.ID)); len(got) != 2 {
		t.Errorf("%d link mails, want the link's and one reminder", len(got))
	}
	if got := s.sandboxMails(t, "?kind=link.mail&payoutId="+itoa(b.Payout.ID)); len(got) != 1 {
		t.Errorf("the completed link got %d link mails, want only its first", len(got))
	}
}

// waitOutboxDepth waits until the outbox holds n events (payouts_outbox_depth), delivered
// or not yet due.
func (s *testServer) waitOutboxDepth(t testing.TB, n float64) {
	t.Helper()
	if !poll(10*time.Second, func() bool { return s.metric(t, "payouts_outbox_depth") == n }) {
		t.Fatalf("the outbox holds %v events, want %v", s.metric(t, "payouts_outbox_depth"), n)
	}
}
