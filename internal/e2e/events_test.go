package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"payouts/web/notify"
)

// The event log's tests on the real binary: the sandbox inbox, the event log, resend and
// delivery chaos.

type inboxAnswer struct {
	Items []struct {
		EventID        string            `json:"eventId"`
		ReceivedAt     string            `json:"receivedAt"`
		Headers        map[string]string `json:"headers"`
		Body           string            `json:"body"`
		SignatureValid bool              `json:"signatureValid"`
	} `json:"items"`
}

type eventAnswer struct {
	EventID     string  `json:"eventId"`
	Cursor      string  `json:"cursor"`
	Type        string  `json:"type"`
	PayoutID    int64   `json:"payoutId"`
	DeliveredAt *string `json:"deliveredAt"`
	Body        *string `json:"body"`
	Attempts    []struct {
		At         string `json:"at"`
		Status     int    `json:"status"`
		Error      string `json:"error"`
		DurationMS int64  `json:"durationMs"`
		Cause      string `json:"cause"`
	} `json:"attempts"`
}

type eventsAnswer struct {
	Items      []eventAnswer `json:"items"`
	NextCursor *string       `json:"nextCursor"`
}

func (c *merchantClient) getJSON(t testing.TB, path, query string, out any) {
	t.Helper()
	code, _, raw := c.do(t, "GET", path, nil, query)
	if code != 200 {
		t.Fatalf("GET %s?%s: %d %s", path, query, code, raw)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("GET %s: %v: %s", path, err, raw)
	}
}

func (c *merchantClient) inbox(t testing.TB) inboxAnswer {
	var in inboxAnswer
	c.getJSON(t, "sandbox/inbox", "", &in)
	return in
}

func (c *merchantClient) event(t testing.TB, id string) eventAnswer {
	var e eventAnswer
	c.getJSON(t, "events/"+id, "", &e)
	return e
}

func TestInboxReceivesSignedNotificationsThatVerifyWithTheServedKey(t *testing.T) {
	t.Parallel()
	s := startServer(t, "")
	pub, err := notify.ParsePublicKeyPEM(fetchPublicKey(t, s.URL))
	if err != nil {
		t.Fatal(err)
	}
	c := s.newMerchant(t, map[string]any{"notificationUrl": "sandbox:inbox"})
	ok := c.create(t, perBankRequest("INBOX-OK"))
	rej := perBankRequest("INBOX-REJ")
	rej["destination"].(map[string]any)["bankAccount"] = map[string]any{"bankCode": "003", "accountType": 2, "accountNumber": "1231234569999"}
	bad := c.create(t, rej)
	c.waitStage(t, ok.Payout.ID, "SUCCESS", 10*time.Second)
	c.waitStage(t, bad.Payout.ID, "REJECTED", 10*time.Second)
	okID := fmt.Sprintf("merchant.notification.%d.PROCESSED", ok.Payout.ID)
	badID := fmt.Sprintf("merchant.notification.%d.REJECTED_BANK", bad.Payout.ID)
	var in inboxAnswer
	waitFor(t, "two notifications in the inbox", 15*time.Second, func() bool { in = c.inbox(t); return len(in.Items) >= 2 })
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
	other := s.newMerchant(t, map[string]any{"notificationUrl": "sandbox:inbox"})
	if n := len(other.inbox(t).Items); n != 0 {
		t.Errorf("another merchant's inbox has %d items", n)
	}
}

func TestHTTPNotificationURLRefusalNamesTheInboxAndTheDevelopmentFlag(t *testing.T) {
	t.Parallel()
	s := startServer(t, "")
	code, _, raw := s.rawAdmin(t, "POST", "/admin/v1/merchants", map[string]any{"name": "Dev", "settings": map[string]any{"notificationUrl": "http://localhost:3000/hook"}})
	p := decodeProblem(t, raw)
	if code != 400 || len(p.Errors) != 1 || p.Errors[0].Code != "2940" ||
		!strings.Contains(p.Errors[0].Message, "sandbox:inbox") || !strings.Contains(p.Errors[0].Message, "--allow-private-notification-urls") {
		t.Errorf("%d %s", code, raw)
	}
}

func TestEventsKeptListedReadAndResentWithTheSameID(t *testing.T) {
	t.Parallel()
	s := startServer(t, "")
	c := s.newMerchant(t, map[string]any{"notificationUrl": "sandbox:inbox"})
	var ids []string
	var payouts []int64
	for i := range 3 {
		p := c.create(t, perBankRequest(fmt.Sprintf("EV-%d", i)))
		c.waitStage(t, p.Payout.ID, "SUCCESS", 10*time.Second)
		ids = append(ids, fmt.Sprintf("merchant.notification.%d.PROCESSED", p.Payout.ID))
		payouts = append(payouts, p.Payout.ID)
		// One after the other, so that the log's order is known.
		waitFor(t, "event "+ids[i]+" logged", 10*time.Second, func() bool {
			var all eventsAnswer
			c.getJSON(t, "events", "", &all)
			return len(all.Items) == i+1
		})
	}
	// Paged two by two, oldest first, by cursor.
	var page1, page2 eventsAnswer
	c.getJSON(t, "events", "limit=2", &page1)
	if len(page1.Items) != 2 || page1.NextCursor == nil {
		t.Fatalf("first page: %+v", page1)
	}
	c.getJSON(t, "events", "limit=2&after="+*page1.NextCursor, &page2)
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
	var byPayout, byType eventsAnswer
	c.getJSON(t, "events", fmt.Sprintf("payoutId=%d", payouts[1]), &byPayout)
	if len(byPayout.Items) != 1 || byPayout.Items[0].EventID != ids[1] {
		t.Errorf("payoutId filter: %+v", byPayout.Items)
	}
	c.getJSON(t, "events", "type=payout.REJECTED_BANK", &byType)
	if len(byType.Items) != 0 {
		t.Errorf("type filter: %+v", byType.Items)
	}
	var fromZero eventsAnswer
	c.getJSON(t, "events", "after=0", &fromZero)
	if len(fromZero.Items) != 3 {
		t.Errorf("after=0: %d events, want all 3", len(fromZero.Items))
	}
	if code, _, raw := c.do(t, "GET", "events", nil, "after=x"); code != 400 || !strings.Contains(string(raw), "query.after") {
		t.Errorf("bad cursor: %d %s", code, raw)
	}

	// One event: the exact body the inbox received, one attempt, delivered.
	e := c.event(t, ids[0])
	in := c.inbox(t)
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
	code, _, raw := c.do(t, "POST", "events/"+ids[0]+"/resend", nil, "")
	if code != 202 || !strings.Contains(string(raw), `"queued"`) {
		t.Fatalf("resend: %d %s", code, raw)
	}
	waitFor(t, "the resend attempt", 10*time.Second, func() bool { return len(c.event(t, ids[0]).Attempts) == 2 })
	if a := c.event(t, ids[0]).Attempts[1]; a.Cause != "resend" || a.Status != 200 {
		t.Errorf("resend attempt: %+v", a)
	}
	n := 0
	for _, it := range c.inbox(t).Items {
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
	other := s.newMerchant(t, nil)
	for _, try := range []struct {
		c    *merchantClient
		path string
	}{{c, "events/merchant.notification.999999.PROCESSED"}, {other, "events/" + ids[0]}, {other, "events/" + ids[0] + "/resend"}} {
		method := "GET"
		if strings.HasSuffix(try.path, "/resend") {
			method = "POST"
		}
		code, _, raw := try.c.do(t, method, try.path, nil, "")
		if code != 404 || !strings.Contains(string(raw), "2996") {
			t.Errorf("%s %s: %d %s", method, try.path, code, raw)
		}
	}
}

func TestDeliveryChaosFailFirstAndDuplicatesSeenAtTheReceiver(t *testing.T) {
	t.Parallel()
	hook := &hookReceiver{}
	s, c := startWithSignedHook(t, "", hook, "/hook", nil)

	path := "/admin/v1/merchants/" + c.MerchantID + "/sandbox/delivery"
	var view struct {
		Enabled   bool    `json:"enabled"`
		Duplicate float64 `json:"duplicate"`
		Reorder   bool    `json:"reorder"`
		Delay     string  `json:"delay"`
		FailFirst int     `json:"failFirst"`
	}
	if code := s.admin(t, "GET", path, nil, &view); code != 200 || view.Enabled {
		t.Fatalf("off by default: %d %+v", code, view)
	}
	// Out of bounds: every problem at once, each with its field.
	code, _, raw := s.rawAdmin(t, "PUT", path, map[string]any{"duplicate": 1.5, "delay": "90s", "failFirst": 6})
	p := decodeProblem(t, raw)
	fields := map[string]bool{}
	for _, e := range p.Errors {
		if e.Code == "2997" {
			fields[e.Location] = true
		}
	}
	if code != 400 || !fields["body.duplicate"] || !fields["body.delay"] || !fields["body.failFirst"] {
		t.Errorf("out of bounds: %d %s", code, raw)
	}
	if code, _, raw := s.rawAdmin(t, "PUT", "/admin/v1/merchants/nobody/sandbox/delivery", map[string]any{"failFirst": 1}); code != 404 {
		t.Errorf("unknown merchant: %d %s", code, raw)
	}
	if code := s.admin(t, "PUT", path, map[string]any{"duplicate": 1, "failFirst": 2}, &view); code != 200 || !view.Enabled || view.FailFirst != 2 || view.Duplicate != 1 {
		t.Fatalf("put: %d %+v", code, view)
	}
	if code := s.admin(t, "GET", path, nil, &view); code != 200 || !view.Enabled || view.FailFirst != 2 {
		t.Fatalf("get: %d %+v", code, view)
	}

	po := c.create(t, perBankRequest("CHAOS-1"))
	c.waitStage(t, po.Payout.ID, "SUCCESS", 10*time.Second)
	id := fmt.Sprintf("merchant.notification.%d.PROCESSED", po.Payout.ID)
	// Two sends counted as failed (retried after about 2 s and 4 s), the real one, and its duplicate.
	waitFor(t, "four deliveries of one event", 30*time.Second, func() bool {
		acc, _, _, _ := hook.snapshot()
		return len(acc[id]) >= 4
	})
	s.waitOutboxEmpty(t, 10*time.Second)
	acc, _, badSigs, _ := hook.snapshot()
	if len(acc[id]) != 4 || badSigs != 0 {
		t.Errorf("the receiver got %s %d times (%d bad signatures), want 4 verified", id, len(acc[id]), badSigs)
	}
	for _, b := range acc[id][1:] {
		if string(b) != string(acc[id][0]) {
			t.Errorf("a delivery of the same event changed its body")
		}
	}
	var causes []string
	e := c.event(t, id)
	for _, a := range e.Attempts {
		causes = append(causes, fmt.Sprintf("%s/%d/%v", a.Cause, a.Status, a.Error != ""))
	}
	want := "chaos-fail-first/200/true,chaos-fail-first/200/true,/200/false,chaos-duplicate/200/false"
	if strings.Join(causes, ",") != want {
		t.Errorf("attempts %v, want %s", causes, want)
	}

	// DELETE ends it: the next event is delivered once.
	if code := s.admin(t, "DELETE", path, nil, &view); code != 200 || view.Enabled {
		t.Fatalf("delete: %d %+v", code, view)
	}
	po2 := c.create(t, perBankRequest("CHAOS-2"))
	c.waitStage(t, po2.Payout.ID, "SUCCESS", 10*time.Second)
	id2 := fmt.Sprintf("merchant.notification.%d.PROCESSED", po2.Payout.ID)
	waitFor(t, "the calm delivery", 10*time.Second, func() bool { acc, _, _, _ := hook.snapshot(); return len(acc[id2]) > 0 })
	s.waitOutboxEmpty(t, 10*time.Second)
	if acc, _, _, _ := hook.snapshot(); len(acc[id2]) != 1 {
		t.Errorf("after DELETE: %d deliveries, want 1", len(acc[id2]))
	}
}

// dashPage reads a dashboard page as a signed-in operator.
func dashPage(t *testing.T, c *http.Client, url string) *goquery.Document {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(dashText(t, c, url+"?lang=en")))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func TestDashboardShowsInboxAttemptsAndChaos(t *testing.T) {
	t.Parallel()
	s := startServer(t, "")
	c := s.newMerchant(t, map[string]any{"notificationUrl": "sandbox:inbox"})
	po := c.create(t, perBankRequest("DASH-EV"))
	c.waitStage(t, po.Payout.ID, "SUCCESS", 10*time.Second)
	id := fmt.Sprintf("merchant.notification.%d.PROCESSED", po.Payout.ID)
	waitFor(t, "the notification in the inbox", 10*time.Second, func() bool { return len(c.inbox(t).Items) == 1 })
	if code := s.admin(t, "PUT", "/admin/v1/merchants/"+c.MerchantID+"/sandbox/delivery", map[string]any{"reorder": true, "failFirst": 3}, nil); code != 200 {
		t.Fatal(code)
	}
	dash := dashboardSignIn(t, s)
	base := s.URL + "/dashboard/merchants/" + c.MerchantID

	m := dashPage(t, dash, base)
	chaos := m.Find("section.webhooks dl.chaos").Text()
	if !strings.Contains(chaos, "Fail on purpose the first") || !strings.Contains(chaos, "3") || !strings.Contains(chaos, "yes") {
		t.Errorf("merchant page's chaos: %q", chaos)
	}
	if href, _ := m.Find(`section.webhooks a[href$="/inbox"]`).Attr("href"); href == "" {
		t.Error("the merchant page has no link to the inbox")
	}

	in := dashPage(t, dash, base+"/inbox")
	body := in.Find("pre.inbox-body").First().Text()
	// Indented two spaces a level (the key order is the stored body's: PostgreSQL's outbox keeps
	// an event's snapshot as jsonb, which orders keys its own way).
	if !strings.HasPrefix(body, "{\n  \"") || !strings.Contains(body, "\n  \"payout\": {\n    \"") || !strings.Contains(body, "\n    \"id\": \"") {
		t.Errorf("inbox body not pretty-printed: %q", body)
	}
	if in.Find(".badge.sig-valid").Length() != 1 || !strings.Contains(in.Find("summary code").Text(), id) {
		t.Errorf("inbox item: %q", in.Find("li.inbox-item summary").Text())
	}

	// The Deliveries page counts the attempts of a delivered notification and links to them.
	var link string
	dashPage(t, dash, s.URL+"/dashboard/deliveries").Find(`tr.delivery[data-event="` + id + `"] td.num a`).Each(func(_ int, a *goquery.Selection) {
		if a.Text() == "1" {
			link, _ = a.Attr("href")
		}
	})
	if link == "" {
		t.Fatalf("the Deliveries page shows no attempts for %s", id)
	}
	ev := dashPage(t, dash, s.URL+link)
	if rows := ev.Find("table.attempts tr.attempt"); rows.Length() != 1 || strings.TrimSpace(rows.Find("td").First().Text()) != "200" {
		t.Errorf("event page attempts: %q", ev.Find("table.attempts").Text())
	}
	if !strings.Contains(ev.Find("pre.event-body").Text(), "\n  \"output\": {") {
		t.Errorf("event page body: %q", ev.Find("pre.event-body").Text())
	}
}

// TestEventOperationsAreMarkedExtensionsWithExamples reads the served OpenAPI document.
func TestEventOperationsAreMarkedExtensionsWithExamples(t *testing.T) {
	t.Parallel()
	s := startServer(t, "")
	resp, err := http.Get(s.URL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	full, _ := io.ReadAll(resp.Body)
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
}

func TestEventsServedOutsideTheSandboxInboxStreamAndChaosNot(t *testing.T) {
	t.Parallel()
	s := startServer(t, "", "--sandbox=false")
	c := s.newMerchant(t, nil)
	var list eventsAnswer
	c.getJSON(t, "events", "", &list)
	if len(list.Items) != 0 {
		t.Errorf("events: %+v", list)
	}
	for _, path := range []string{"sandbox/inbox", "events/stream"} {
		if code, _, raw := c.do(t, "GET", path, nil, ""); code != 403 || !strings.Contains(string(raw), "2960") {
			t.Errorf("GET %s: %d %s", path, code, raw)
		}
	}
	if code, _, raw := s.rawAdmin(t, "PUT", "/admin/v1/merchants/"+c.MerchantID+"/sandbox/delivery", map[string]any{"failFirst": 1}); code != 403 {
		t.Errorf("chaos: %d %s", code, raw)
	}
	// Nothing would deliver to the inbox: refused where it is set.
	code, _, raw := s.rawAdmin(t, "PATCH", "/admin/v1/merchants/"+c.MerchantID, map[string]any{"settings": map[string]any{"notificationUrl": "sandbox:inbox"}})
	if p := decodeProblem(t, raw); code != 400 || len(p.Errors) != 1 || p.Errors[0].Code != "2940" || !strings.Contains(p.Errors[0].Message, "--sandbox=false") {
		t.Errorf("sandbox:inbox without the sandbox: %d %s", code, raw)
	}
}
