package e2e

// End-to-end tests of how a payout link reaches its beneficiary (its email at once, and one
// reminder a day before it expires, on the sandbox clock, only while it still waits) and how
// its merchant hears of it.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"strings"
	"testing"
	"time"

	"payouts/rules"
	"payouts/web/notify"
	"payouts/web/notify/smtptest"
)

func TestPayoutLinkEmailAndOneReminder(t *testing.T) {
	t.Parallel()
	s := startServer(t, "")
	c := s.newMerchant(t, map[string]any{"emailNotifications": true})

	waiting := linkRequest("LINK-MAIL-1")
	waiting["expirationTime"] = 2880 // two days: the reminder is due after one
	waiting["lang"] = "en"
	_, _, a, raw := c.createLink(t, waiting)
	if a.Link == "" {
		t.Fatalf("create: %s", raw)
	}
	// A replayed create is the same link: it mails nothing more (counted below).
	if _, hdr, again, raw := c.createLink(t, waiting); again.Link != a.Link || hdr.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay: %s", raw)
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
	if code, _, page := giveDestination(t, b.Link, url.Values{"kind": {"2"}, "bankCode": {"012"}, "accountNumber": {"12345678901"}}, "1020304050"); code != 303 {
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

// The merchant hears of its links: an event when the beneficiary gives a destination and
// when a link expires unused, signed, in the sandbox inbox, the event log and `payouts
// listen`, besides the payout's own notifications.
func TestPayoutLinkEventsReachTheMerchant(t *testing.T) {
	t.Parallel()
	s := startServer(t, "")
	pub, err := notify.ParsePublicKeyPEM(fetchPublicKey(t, s.URL))
	if err != nil {
		t.Fatal(err)
	}
	c := s.newMerchant(t, map[string]any{"notificationUrl": "sandbox:inbox", "emailNotifications": false})
	hook := &hookReceiver{tries: map[string]int{}, accepted: map[string][][]byte{},
		verify: func(body []byte, sig string) error { return notify.Verify(pub, c.MerchantID, body, sig) }}
	out := startListen(t, s, c, localApp(t, hook).URL+"/webhooks")
	waitFor(t, "listen connected", 10*time.Second, func() bool { return strings.Count(out.String(), "ready:") == 1 })

	_, _, a, raw := c.createLink(t, linkRequest("LINK-EV-1"))
	if a.Link == "" {
		t.Fatalf("create: %s", raw)
	}
	exp := linkRequest("LINK-EV-2")
	exp["expirationTime"] = 5
	_, _, b, raw := c.createLink(t, exp)
	if b.Link == "" {
		t.Fatalf("create: %s", raw)
	}
	c.waitStatus(t, b.Payout.ID, "AUTHORIZED", 5*time.Second)
	if code, _, page := giveDestination(t, a.Link, url.Values{"kind": {"2"}, "bankCode": {"012"}, "accountNumber": {"12345678901"}}, "1020304050"); code != 303 {
		t.Fatalf("submit: %d %s", code, docText(page))
	}
	s.advance(t, "6m")
	c.waitStatus(t, b.Payout.ID, "EXPIRED", 5*time.Second)

	submitted := fmt.Sprintf("link.notification.%d.SUBMITTED", a.Payout.ID)
	expired := fmt.Sprintf("link.notification.%d.EXPIRED", b.Payout.ID)
	want := map[string]rules.LinkNotice{
		submitted: {Type: "link.SUBMITTED", PayoutID: itoa(a.Payout.ID), MerchantID: c.MerchantID, OrderID: "LINK-EV-1", AccountType: 2},
		expired:   {Type: "link.EXPIRED", PayoutID: itoa(b.Payout.ID), MerchantID: c.MerchantID, OrderID: "LINK-EV-2", Code: rules.CodeLinkExpired},
	}
	bodies := map[string]string{}
	waitFor(t, "both link events in the inbox", 15*time.Second, func() bool {
		for _, it := range c.inbox(t).Items {
			if _, ok := want[it.EventID]; ok {
				if err := notify.Verify(pub, c.MerchantID, []byte(it.Body), it.Headers["verification"]); err != nil || !it.SignatureValid {
					t.Errorf("%s: signature %v %v", it.EventID, it.SignatureValid, err)
				}
				bodies[it.EventID] = it.Body
			}
		}
		return len(bodies) == 2
	})
	for id, w := range want {
		var n rules.LinkNotice
		if err := json.Unmarshal([]byte(bodies[id]), &n); err != nil || n.Type != w.Type || n.PayoutID != w.PayoutID || n.MerchantID != w.MerchantID ||
			n.OrderID != w.OrderID || n.AccountType != w.AccountType || n.Code != w.Code || n.Amount != "15000000" || n.At == "" {
			t.Errorf("%s: body %s, want %+v", id, bodies[id], w)
		}
		// The inbox keeps a delivery before its attempt is logged: the log has it soon after.
		var e eventAnswer
		waitFor(t, "the event log keeps "+id, 10*time.Second, func() bool {
			code, _, raw := c.do(t, "GET", "events/"+id, nil, "")
			return code == 200 && json.Unmarshal(raw, &e) == nil && e.DeliveredAt != nil
		})
		if e.Type != w.Type || e.Body == nil || *e.Body != bodies[id] {
			t.Errorf("event log %s: %+v", id, e)
		}
		waitFor(t, "listen forwards "+id, 10*time.Second, func() bool { acc, _, _, _ := hook.snapshot(); return len(acc[id]) == 1 })
	}
	// Each event once: the submitted link does not also expire, the expired one was never submitted.
	for _, it := range c.inbox(t).Items {
		if it.EventID == fmt.Sprintf("link.notification.%d.EXPIRED", a.Payout.ID) || it.EventID == fmt.Sprintf("link.notification.%d.SUBMITTED", b.Payout.ID) {
			t.Errorf("unexpected %s", it.EventID)
		}
	}
}

// Under the sandbox's delivery chaos, a link's events are delivered as every other: the
// first send counted as failed and retried, then delivered, then a duplicate, each with the
// same body and a valid signature. The server retries after 100 ms instead of 2 s.
func TestPayoutLinkEventsUnderDeliveryChaos(t *testing.T) {
	t.Parallel()
	hook := &hookReceiver{}
	s, c := startWithSignedHookWith(t, "", fastRetries, hook, "/hook", map[string]any{"emailNotifications": false})
	if code := s.admin(t, "PUT", "/admin/v1/merchants/"+c.MerchantID+"/sandbox/delivery", map[string]any{"duplicate": 1, "failFirst": 1}, nil); code != 200 {
		t.Fatalf("chaos: %d", code)
	}
	_, _, a, raw := c.createLink(t, linkRequest("LINK-CHAOS-1"))
	if a.Link == "" {
		t.Fatalf("create: %s", raw)
	}
	exp := linkRequest("LINK-CHAOS-2")
	exp["expirationTime"] = 5
	_, _, b, raw := c.createLink(t, exp)
	if b.Link == "" {
		t.Fatalf("create: %s", raw)
	}
	c.waitStatus(t, b.Payout.ID, "AUTHORIZED", 5*time.Second)
	if code, _, page := giveDestination(t, a.Link, colDestination, "1020304050"); code != 303 {
		t.Fatalf("submit: %d %s", code, docText(page))
	}
	s.advance(t, "6m")
	c.waitStatus(t, b.Payout.ID, "EXPIRED", 5*time.Second)
	ids := []string{fmt.Sprintf("link.notification.%d.SUBMITTED", a.Payout.ID), fmt.Sprintf("link.notification.%d.EXPIRED", b.Payout.ID)}
	waitFor(t, "three deliveries of each link event", 30*time.Second, func() bool {
		acc, _, _, _ := hook.snapshot()
		return len(acc[ids[0]]) >= 3 && len(acc[ids[1]]) >= 3
	})
	s.waitOutboxEmpty(t, 10*time.Second)
	acc, _, badSigs, _ := hook.snapshot()
	for _, id := range ids {
		if len(acc[id]) != 3 || badSigs != 0 {
			t.Errorf("the receiver got %s %d times (%d bad signatures), want 3 verified", id, len(acc[id]), badSigs)
			continue
		}
		for _, body := range acc[id][1:] {
			if string(body) != string(acc[id][0]) {
				t.Errorf("%s: a delivery changed its body", id)
			}
		}
		var causes []string
		for _, at := range c.event(t, id).Attempts {
			causes = append(causes, fmt.Sprintf("%s/%d/%v", at.Cause, at.Status, at.Error != ""))
		}
		if want := "chaos-fail-first/200/true,/200/false,chaos-duplicate/200/false"; strings.Join(causes, ",") != want {
			t.Errorf("%s: attempts %v, want %s", id, causes, want)
		}
	}
}

// With an SMTP server, the link's email goes there: to the beneficiary, with the link.
func TestPayoutLinkEmailOverSMTP(t *testing.T) {
	t.Parallel()
	smtp := smtptest.Start(t, "127.0.0.1:0")
	s := startServer(t, "", "--smtp-url", "smtp://"+smtp.Addr, "--mail-from", "Pagos <pagos@payouts.test>")
	c := s.newMerchant(t, map[string]any{"emailNotifications": true})
	_, _, a, raw := c.createLink(t, linkRequest("LINK-SMTP"))
	if a.Link == "" {
		t.Fatalf("create: %s", raw)
	}
	waitFor(t, "the link's email over SMTP", 10*time.Second, func() bool { return len(messagesWith(smtp.Messages(), a.Link)) > 0 })
	m := messagesWith(smtp.Messages(), a.Link)[0]
	if len(m.To) != 1 || m.To[0] != "juan.perez@gmail.com" || m.From != "pagos@payouts.test" || !strings.Contains(m.HTML, html.EscapeString(a.Link)) {
		t.Errorf("the link's email: from %q to %v, the link in its HTML %v", m.From, m.To, strings.Contains(m.HTML, html.EscapeString(a.Link)))
	}
}

// Traced, a link's page leaves neither its token nor the destination or the document typed
// into it in any span: the spans are there, their attributes carry none of it.
func TestPayoutLinkLeavesNoDestinationInTraces(t *testing.T) {
	t.Parallel()
	otlp := newOTLPReceiver(t)
	s := startServer(t, "", "--otlp-endpoint", otlp.URL)
	c := s.newMerchant(t, nil)
	_, _, a, raw := c.createLink(t, linkRequest("LINK-TRACE"))
	if a.Link == "" {
		t.Fatalf("create: %s", raw)
	}
	if code, _, page := giveDestination(t, a.Link, colDestination, "1020304050"); code != 303 {
		t.Fatalf("submit: %d %s", code, docText(page))
	}
	c.waitStage(t, a.Payout.ID, "SUCCESS", 15*time.Second)
	s.Stop(t) // exports what is still queued
	spans, _, bodies, _ := otlp.received()
	pages := 0
	for _, sp := range spans {
		if strings.Contains(sp.Name, "/link") {
			pages++
		}
	}
	if pages < 3 { // the page, the form's post, the review's post
		t.Fatalf("%d spans of the link's page among %d, want its requests traced", pages, len(spans))
	}
	token := strings.TrimPrefix(a.Link, s.URL+"/link?s=")
	for _, b := range bodies {
		for what, secret := range map[string]string{"the token": token, "the account number": "12345678901", "the document": "1020304050"} {
			if bytes.Contains(b, []byte(secret)) {
				t.Errorf("an export of spans holds %s", what)
			}
		}
	}
}
