package api_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"payouts/internal/servertest"
	"payouts/rules"
)

// cancel asks to cancel payout id.
func cancel(t *testing.T, c *servertest.Merchant, id int64) (int, []byte) {
	t.Helper()
	code, _, raw := c.Do(t, "POST", "payouts/"+strconv.FormatInt(id, 10)+"/cancel", nil, "")
	return code, raw
}

// wantCancelled fails the test unless a cancel answered the payout cancelled.
func wantCancelled(t *testing.T, what string, code int, raw []byte) servertest.Payout {
	t.Helper()
	p := servertest.DecodePayout(t, raw)
	if code != 200 || p.Output.Stage != "REJECTED" || p.Output.Status != "ERROR" || len(p.Errors) != 1 || p.Errors[0].Code != rules.CodeCancelled {
		t.Fatalf("cancel %s: %d %s, want 200 REJECTED/ERROR 2961", what, code, raw)
	}
	return p
}

// inboxed is how many times the merchant's sandbox inbox received the event id, with
// their bodies, and whether the inbox found each signed; each is checked as the merchant's
// endpoint would (Server.CheckNotification: the served key, the document's webhook).
func inboxed(t *testing.T, s *servertest.Server, c *servertest.Merchant, id string) (n int, bodies []string, signed bool) {
	t.Helper()
	signed = true
	for _, it := range c.Inbox(t).Items {
		if it.EventID == id {
			n++
			bodies = append(bodies, it.Body)
			signed = signed && it.SignatureValid
			s.CheckNotification(t, c.MerchantID, []byte(it.Body), it.Headers["verification"])
		}
	}
	return n, bodies, signed
}

// Cancel in PENDING_BALANCE and of a card payout whose form was not submitted, with the
// balances checked, the notification (signed, to the sandbox inbox) and the email sent;
// idempotent; refused (409 2960) once the payout is at the bank or ended. WAITING_ROUTING is
// held still by a server without a rail (--sandbox=false).
func TestCancelBeforeSending(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		c := s.NewMerchant(t, map[string]any{"pendingOnNoBalance": true, "cardPayouts": true, "emailNotifications": true, "notificationUrl": "sandbox:inbox"})

		// PENDING_BALANCE: nothing is held, nothing moves; a later funding does not revive it.
		if code := s.Admin(t, "POST", "/admin/v1/merchants/"+c.MerchantID+"/balance",
			map[string]any{"country": "COL", "currency": "COP", "amount": -100_000_000_000}, nil); code != 200 {
			t.Fatalf("withdraw: %d", code)
		}
		held := c.Create(t, servertest.ColBankRequest("CANCEL-HELD"))
		c.WaitStatus(t, held.Payout.ID, "PENDING_BALANCE", 5*time.Second)
		code, raw := cancel(t, c, held.Payout.ID)
		wantCancelled(t, "PENDING_BALANCE", code, raw)
		s.Admin(t, "POST", "/admin/v1/merchants/"+c.MerchantID+"/balance", map[string]any{"country": "COL", "currency": "COP", "amount": 100_000_000_000}, nil)
		if avail, total := c.Balance(t, "COP"); avail != 100_000_000_000 || total != 100_000_000_000 {
			t.Fatalf("COP after cancel and funding: %d/%d", avail, total)
		}

		// A card payout waiting for its form holds its amount; cancel releases it.
		penAvail, penTotal := c.Balance(t, "PEN")
		card := c.OpenCard(t, servertest.CardRequest("CANCEL-CARD"), 200)
		c.WaitStatus(t, card.Payout.ID, "AUTHORIZED", 5*time.Second)
		servertest.Eventually(t, 5*time.Second, "the card payout's reservation", func() bool {
			a, _ := c.Balance(t, "PEN")
			return a == penAvail-card.Payout.Amount
		})
		code, raw = cancel(t, c, card.Payout.ID)
		first := wantCancelled(t, "a card payout without its card", code, raw)
		if a, tot := c.Balance(t, "PEN"); a != penAvail || tot != penTotal {
			t.Fatalf("PEN after cancel: %d/%d, want %d/%d", a, tot, penAvail, penTotal)
		}
		if st := servertest.WaitCardStatus(t, s.Browser(), card.Iframe, 5*time.Second); st.Topic != "mps-payout-finished-fail" {
			t.Fatalf("the card form after cancel: %+v", st)
		}
		code, raw = cancel(t, c, card.Payout.ID) // idempotent
		if again := wantCancelled(t, "again", code, raw); again.Output.StatusChangeDateTime != first.Output.StatusChangeDateTime {
			t.Fatalf("a second cancel changed the payout: %s", raw)
		}

		// At the bank (9997 holds it there), and after its end: too late.
		bank := c.Create(t, servertest.PerAccountRequest("CANCEL-BANK", "1231234569997"))
		c.WaitStatus(t, bank.Payout.ID, "PENDING_BANK", 5*time.Second)
		code, raw = cancel(t, c, bank.Payout.ID)
		if p := servertest.DecodeProblem(t, raw); code != 409 || p.Code != rules.CodeCancelRefused {
			t.Fatalf("cancel PENDING_BANK: %d %s, want 409 2960", code, raw)
		}
		c.Do(t, "POST", "payouts/"+strconv.FormatInt(bank.Payout.ID, 10)+"/simulate", map[string]any{"stage": "SUCCESS"}, "")
		if code, raw = cancel(t, c, bank.Payout.ID); code != 409 || servertest.DecodeProblem(t, raw).Code != rules.CodeCancelRefused {
			t.Fatalf("cancel SUCCESS: %d %s, want 409 2960", code, raw)
		}
		if code, raw = cancel(t, c, 999999); code != 404 {
			t.Fatalf("cancel unknown: %d %s", code, raw)
		}

		// The notification and the email of a rejection, once each.
		for _, id := range []int64{held.Payout.ID, card.Payout.ID} {
			ev := fmt.Sprintf("merchant.notification.%d.ERROR", id)
			servertest.Eventually(t, 10*time.Second, "notification "+ev, func() bool { n, _, _ := inboxed(t, s, c, ev); return n >= 1 })
			if n, _, signed := inboxed(t, s, c, ev); n != 1 || !signed {
				t.Errorf("%s: delivered %d times, signed %v; want once, signed", ev, n, signed)
			}
			s.WaitMails(t, "?kind=beneficiary.mail&payoutId="+strconv.FormatInt(id, 10), 1, 10*time.Second)
		}

		// WAITING_ROUTING, with its amount held, on a server that has no rail.
		off := servertest.Start(t, servertest.Setup{Engine: e, Args: []string{"--sandbox=false"}})
		oc := off.NewMerchant(t, nil)
		avail, _ := oc.Balance(t, "PEN")
		routing := oc.Create(t, servertest.PerBankRequest("CANCEL-ROUTING"))
		oc.WaitStatus(t, routing.Payout.ID, "WAITING_ROUTING", 5*time.Second)
		if a, _ := oc.Balance(t, "PEN"); a != avail-routing.Payout.Amount {
			t.Fatalf("not held while routing: %d", a)
		}
		code, raw = cancel(t, oc, routing.Payout.ID)
		wantCancelled(t, "WAITING_ROUTING", code, raw)
		if a, _ := oc.Balance(t, "PEN"); a != avail {
			t.Fatalf("PEN after cancelling a routed payout: %d, want %d", a, avail)
		}
	})
}

// A scripted outcome with a timeline: SUCCESS one minute after the bank has the payout, then
// REVERSED 4025 three days later, each step moving the balance and notifying (signed) as a
// real one would; an account ending 9994 is paid then returned (4901) without a script.
func TestScriptedTimelineOnTheTestClock(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		c := s.NewMerchant(t, map[string]any{"notificationUrl": "sandbox:inbox"})

		rulesPath := "/admin/v1/merchants/" + c.MerchantID + "/sandbox/rules"
		list := map[string]any{"rules": []any{map[string]any{
			"match": map[string]any{"accountSuffix": "4321"},
			"outcome": map[string]any{"stage": "SUCCESS", "afterSeconds": 60,
				"then": []any{map[string]any{"status": "REVERSED", "code": rules.CodeAccountNotFound, "afterSeconds": 3 * 86400}}},
		}}}
		bad := map[string]any{"rules": []any{map[string]any{"match": map[string]any{}, "outcome": map[string]any{"stage": "REJECTED",
			"then": []any{map[string]any{"status": "REVERSED", "afterSeconds": 60}}}}}}
		s.Run(t, []servertest.Scenario{
			{Name: "a timeline", Method: "PUT", Path: rulesPath, Admin: true, Body: list, WantStatus: 200},
			{Name: "REVERSED after REJECTED", Method: "PUT", Path: rulesPath, Admin: true, Body: bad, WantStatus: 400,
				WantLocation: "body.rules[0].outcome.then[0].status"},
		})

		avail0, bal0 := c.Balance(t, "PEN")
		scripted := c.Create(t, servertest.PerAccountRequest("TL-SCRIPT", "1231234564321"))
		magic := c.Create(t, servertest.PerAccountRequest("TL-9994", "1231234569994"))
		amount := scripted.Payout.Amount + magic.Payout.Amount
		// The scripted payout waits at the bank for the clock; the other is paid on the sandbox's
		// own delay, which a loaded machine may reach before a look at its PENDING_BANK.
		c.WaitStatus(t, scripted.Payout.ID, "PENDING_BANK", 5*time.Second)
		s.Advance(t, "2m") // past the script's minute and the batch delay
		c.WaitStatus(t, scripted.Payout.ID, "PROCESSED", 5*time.Second)
		c.WaitStatus(t, magic.Payout.ID, "PROCESSED", 5*time.Second)
		if avail, bal := c.Balance(t, "PEN"); avail != avail0-amount || bal != bal0-amount {
			t.Fatalf("paid: available %d balance %d, want %d %d", avail, bal, avail0-amount, bal0-amount)
		}
		s.Advance(t, "71h")
		c.RailCaughtUp(t, servertest.ColBankRequest("TL-AFTER")) // in COP: the balance checked is in PEN
		for _, id := range []int64{scripted.Payout.ID, magic.Payout.ID} {
			if _, _, raw := c.Do(t, "GET", "payouts/"+strconv.FormatInt(id, 10), nil, ""); servertest.DecodePayout(t, raw).Output.Status != "PROCESSED" {
				t.Fatalf("payout %d returned before its three days: %s", id, raw)
			}
		}
		s.Advance(t, "1h")
		for _, tc := range []struct {
			id   int64
			code string
		}{{scripted.Payout.ID, rules.CodeAccountNotFound}, {magic.Payout.ID, rules.CodeReversed}} {
			p := c.WaitStatus(t, tc.id, "REVERSED", 5*time.Second)
			if len(p.Errors) != 1 || p.Errors[0].Code != tc.code {
				t.Errorf("payout %d: errors %+v, want %s", tc.id, p.Errors, tc.code)
			}
			var hist []string
			for _, h := range p.History {
				hist = append(hist, h.Status)
			}
			if fmt.Sprint(hist) != "[CREATED AUTHORIZED WAITING_ROUTING PENDING_BANK PROCESSED REVERSED]" {
				t.Errorf("payout %d: history %v", tc.id, hist)
			}
		}
		if avail, bal := c.Balance(t, "PEN"); avail != avail0 || bal != bal0 {
			t.Fatalf("returned: available %d balance %d, want %d %d", avail, bal, avail0, bal0)
		}
		for _, id := range []int64{scripted.Payout.ID, magic.Payout.ID} {
			for _, status := range []string{"PROCESSED", "REVERSED"} {
				ev := fmt.Sprintf("merchant.notification.%d.%s", id, status)
				servertest.Eventually(t, 20*time.Second, ev, func() bool { n, _, _ := inboxed(t, s, c, ev); return n >= 1 })
				n, bodies, signed := inboxed(t, s, c, ev)
				var body struct {
					Output struct{ Status string } `json:"output"`
				}
				json.Unmarshal([]byte(bodies[0]), &body)
				if n != 1 || !signed || body.Output.Status != status {
					t.Errorf("%s: delivered %d times, signed %v, body %s", ev, n, signed, bodies[0])
				}
			}
		}
	})
}
