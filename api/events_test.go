package api_test

// The event log through the real handler: the sandbox inbox, the event log, resend.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"payouts/internal/servertest"
	"payouts/web/notify"
)

func TestInboxReceivesSignedNotificationsThatVerifyWithTheServedKey(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		var pem []byte
		s.Run(t, []servertest.Scenario{{Name: "the public key, served without authentication", Path: "/api/v1/notifications/public-key",
			WantStatus: 200, WantContains: []string{"-----BEGIN PUBLIC KEY-----"}, Then: func(_ *testing.T, _ http.Header, raw []byte) { pem = raw }}})
		pub, err := notify.ParsePublicKeyPEM(pem)
		if err != nil {
			t.Fatal(err)
		}
		c := s.NewMerchant(t, map[string]any{"notificationUrl": "sandbox:inbox"})
		ok := c.Create(t, servertest.PerBankRequest("INBOX-OK"))
		rej := servertest.PerBankRequest("INBOX-REJ")
		rej["destination"].(map[string]any)["bankAccount"] = map[string]any{"bankCode": "003", "accountType": 2, "accountNumber": "1231234569999"}
		bad := c.Create(t, rej)
		c.WaitStage(t, ok.Payout.ID, "SUCCESS", 10*time.Second)
		c.WaitStage(t, bad.Payout.ID, "REJECTED", 10*time.Second)
		okID := fmt.Sprintf("merchant.notification.%d.PROCESSED", ok.Payout.ID)
		badID := fmt.Sprintf("merchant.notification.%d.REJECTED_BANK", bad.Payout.ID)
		var in servertest.Inbox
		servertest.Eventually(t, 15*time.Second, "two notifications in the inbox", func() bool { in = c.Inbox(t); return len(in.Items) >= 2 })
		seen := map[string]bool{}
		for i, it := range in.Items {
			seen[it.EventID] = true
			// The test verifies as a merchant would: merchantId + the exact body, the served key.
			if err := notify.Verify(pub, c.MerchantID, []byte(it.Body), it.Headers["verification"]); err != nil || !it.SignatureValid {
				t.Errorf("%s: signatureValid %v, own check %v", it.EventID, it.SignatureValid, err)
			}
			if it.Headers["Idempotency-Key"] != it.EventID || it.Headers["Content-Type"] != "application/json" {
				t.Errorf("%s: headers %v", it.EventID, it.Headers)
			}
			if i > 0 && it.ReceivedAt > in.Items[i-1].ReceivedAt {
				t.Errorf("not newest first: %s after %s", it.ReceivedAt, in.Items[i-1].ReceivedAt)
			}
			var body struct {
				Payout struct{ ID string } `json:"payout"`
			}
			if err := json.Unmarshal([]byte(it.Body), &body); err != nil || body.Payout.ID == "" {
				t.Errorf("%s: body %s (%v)", it.EventID, it.Body, err)
			}
		}
		if !seen[okID] || !seen[badID] || len(in.Items) != 2 {
			t.Errorf("inbox holds %v, want exactly %s and %s", seen, okID, badID)
		}
		// A tampered body does not verify: signatureValid means something.
		if notify.Verify(pub, c.MerchantID, []byte(in.Items[0].Body+" "), in.Items[0].Headers["verification"]) == nil {
			t.Error("a changed body verified")
		}

		// Another merchant sees its own inbox only.
		other := s.NewMerchant(t, map[string]any{"notificationUrl": "sandbox:inbox"})
		if n := len(other.Inbox(t).Items); n != 0 {
			t.Errorf("another merchant's inbox has %d items", n)
		}
	})
}

func TestHTTPNotificationURLRefusalNamesTheInboxAndTheDevelopmentFlag(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		code, _, raw := s.RawAdmin(t, "POST", "/admin/v1/merchants", map[string]any{"name": "Dev", "settings": map[string]any{"notificationUrl": "http://localhost:3000/hook"}})
		p := servertest.DecodeProblem(t, raw)
		if code != 400 || len(p.Errors) != 1 || p.Errors[0].Code != "2940" ||
			!strings.Contains(p.Errors[0].Message, "sandbox:inbox") || !strings.Contains(p.Errors[0].Message, "--allow-private-notification-urls") {
			t.Errorf("%d %s", code, raw)
		}
	})
}

func TestEventsKeptListedReadAndResentWithTheSameID(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, engine servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: engine})
		c := s.NewMerchant(t, map[string]any{"notificationUrl": "sandbox:inbox"})
		var ids []string
		var payouts []int64
		for i := range 3 {
			p := c.Create(t, servertest.PerBankRequest(fmt.Sprintf("EV-%d", i)))
			c.WaitStage(t, p.Payout.ID, "SUCCESS", 10*time.Second)
			ids = append(ids, fmt.Sprintf("merchant.notification.%d.PROCESSED", p.Payout.ID))
			payouts = append(payouts, p.Payout.ID)
			// One after the other, so that the log's order is known.
			servertest.Eventually(t, 10*time.Second, "event "+ids[i]+" logged", func() bool {
				var all servertest.Events
				c.GetJSON(t, "events", "", &all)
				return len(all.Items) == i+1
			})
		}
		// Paged two by two, oldest first, by cursor.
		var page1, page2 servertest.Events
		c.GetJSON(t, "events", "limit=2", &page1)
		if len(page1.Items) != 2 || page1.NextCursor == nil {
			t.Fatalf("first page: %+v", page1)
		}
		c.GetJSON(t, "events", "limit=2&after="+*page1.NextCursor, &page2)
		var got []string
		for _, e := range append(page1.Items, page2.Items...) {
			got = append(got, e.EventID)
			if e.Body != nil {
				t.Errorf("the listing carries bodies")
			}
		}
		if strings.Join(got, ",") != strings.Join(ids, ",") || page2.NextCursor != nil {
			t.Errorf("pages: %v (next %v), want %v", got, page2.NextCursor, ids)
		}
		var byPayout, byType servertest.Events
		c.GetJSON(t, "events", fmt.Sprintf("payoutId=%d", payouts[1]), &byPayout)
		if len(byPayout.Items) != 1 || byPayout.Items[0].EventID != ids[1] {
			t.Errorf("payoutId filter: %+v", byPayout.Items)
		}
		c.GetJSON(t, "events", "type=payout.REJECTED_BANK", &byType)
		if len(byType.Items) != 0 {
			t.Errorf("type filter: %+v", byType.Items)
		}
		var fromZero servertest.Events
		c.GetJSON(t, "events", "after=0", &fromZero)
		if len(fromZero.Items) != 3 {
			t.Errorf("after=0: %d events, want all 3", len(fromZero.Items))
		}
		if code, _, raw := c.Do(t, "GET", "events", nil, "after=x"); code != 400 || !strings.Contains(string(raw), "query.after") {
			t.Errorf("bad cursor: %d %s", code, raw)
		}

		// One event: the exact body the inbox received, one attempt, delivered.
		e := c.Event(t, ids[0])
		in := c.Inbox(t)
		var received string
		for _, it := range in.Items {
			if it.EventID == ids[0] {
				received = it.Body
			}
		}
		if e.Body == nil || *e.Body != received || received == "" {
			t.Errorf("logged body %v, received %q", e.Body, received)
		}
		if len(e.Attempts) != 1 || e.Attempts[0].Status != 200 || e.Attempts[0].Error != "" || e.DeliveredAt == nil || e.Type != "payout.PROCESSED" {
			t.Errorf("event: %+v", e)
		}

		// Resend: 202, then a second attempt with cause resend, and the inbox gets the same id again.
		code, _, raw := c.Do(t, "POST", "events/"+ids[0]+"/resend", nil, "")
		if code != 202 || !strings.Contains(string(raw), `"queued"`) {
			t.Fatalf("resend: %d %s", code, raw)
		}
		servertest.Eventually(t, 10*time.Second, "the resend attempt", func() bool { return len(c.Event(t, ids[0]).Attempts) == 2 })
		if a := c.Event(t, ids[0]).Attempts[1]; a.Cause != "resend" || a.Status != 200 {
			t.Errorf("resend attempt: %+v", a)
		}
		n := 0
		for _, it := range c.Inbox(t).Items {
			if it.EventID == ids[0] {
				n++
				if it.Body != received || !it.SignatureValid {
					t.Errorf("resent delivery: body changed or signature invalid")
				}
			}
		}
		if n != 2 {
			t.Errorf("the inbox received %s %d times, want 2", ids[0], n)
		}

		// Unknown events, and another merchant's, are 404 with 2996.
		other := s.NewMerchant(t, nil)
		for _, try := range []struct {
			c    *servertest.Merchant
			path string
		}{{c, "events/merchant.notification.999999.PROCESSED"}, {other, "events/" + ids[0]}, {other, "events/" + ids[0] + "/resend"}} {
			method := "GET"
			if strings.HasSuffix(try.path, "/resend") {
				method = "POST"
			}
			code, _, raw := try.c.Do(t, method, try.path, nil, "")
			if code != 404 || !strings.Contains(string(raw), "2996") {
				t.Errorf("%s %s: %d %s", method, try.path, code, raw)
			}
		}
	})
}

// TestEventOperationsAreMarkedExtensionsWithExamples reads the served OpenAPI document.
func TestEventOperationsAreMarkedExtensionsWithExamples(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		_, _, full := s.Send(t, servertest.Scenario{Path: "/openapi.json"})
		var doc struct {
			Paths map[string]map[string]json.RawMessage `json:"paths"`
		}
		if err := json.Unmarshal(full, &doc); err != nil {
			t.Fatal(err)
		}
		for _, op := range []struct{ path, method string }{
			{"/api/v1/{merchantId}/events", "get"}, {"/api/v1/{merchantId}/events/{eventId}", "get"},
			{"/api/v1/{merchantId}/events/{eventId}/resend", "post"}, {"/api/v1/{merchantId}/sandbox/inbox", "get"},
			{"/api/v1/{merchantId}/events/stream", "get"}, {"/admin/v1/merchants/{id}/sandbox/delivery", "put"},
			{"/admin/v1/merchants/{id}/sandbox/delivery", "get"}, {"/admin/v1/merchants/{id}/sandbox/delivery", "delete"},
		} {
			raw := doc.Paths[op.path][op.method]
			var o map[string]any
			if err := json.Unmarshal(raw, &o); err != nil || o["x-payouts-extension"] != true {
				t.Errorf("%s %s: not marked x-payouts-extension (%v)", op.method, op.path, err)
			}
		}
		for _, example := range []string{`"merchant.notification.1042.PROCESSED"`, `"payout.PROCESSED"`, `"2s"`, `id: 17\nevent: merchant.notification`} {
			if !strings.Contains(string(full), strings.ReplaceAll(example, "\n", `\n`)) {
				t.Errorf("the OpenAPI document has no example %s", example)
			}
		}
	})
}

func TestEventsServedOutsideTheSandboxInboxStreamAndChaosNot(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e, Args: []string{"--sandbox=false"}})
		c := s.NewMerchant(t, nil)
		var list servertest.Events
		c.GetJSON(t, "events", "", &list)
		if len(list.Items) != 0 {
			t.Errorf("events: %+v", list)
		}
		for _, path := range []string{"sandbox/inbox", "events/stream"} {
			if code, _, raw := c.Do(t, "GET", path, nil, ""); code != 403 || !strings.Contains(string(raw), "2960") {
				t.Errorf("GET %s: %d %s", path, code, raw)
			}
		}
		if code, _, raw := s.RawAdmin(t, "PUT", "/admin/v1/merchants/"+c.MerchantID+"/sandbox/delivery", map[string]any{"failFirst": 1}); code != 403 {
			t.Errorf("chaos: %d %s", code, raw)
		}
		// Nothing would deliver to the inbox: refused where it is set.
		code, _, raw := s.RawAdmin(t, "PATCH", "/admin/v1/merchants/"+c.MerchantID, map[string]any{"settings": map[string]any{"notificationUrl": "sandbox:inbox"}})
		if p := servertest.DecodeProblem(t, raw); code != 400 || len(p.Errors) != 1 || p.Errors[0].Code != "2940" || !strings.Contains(p.Errors[0].Message, "--sandbox=false") {
			t.Errorf("sandbox:inbox without the sandbox: %d %s", code, raw)
		}
	})
}
