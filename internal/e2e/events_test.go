package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"payouts/internal/servertest"
)

// The event log's tests on the real binary: the sandbox inbox, the event log, resend and
// delivery chaos.

// The answers of the event log and the inbox, and their reads, are servertest's.
type (
	inboxAnswer = servertest.Inbox
	eventAnswer = servertest.Event
)

func (c *merchantClient) inbox(t testing.TB) inboxAnswer {
	t.Helper()
	return c.Inbox(t)
}

func (c *merchantClient) event(t testing.TB, id string) eventAnswer {
	t.Helper()
	return c.Event(t, id)
}

// The server retries a failed delivery after 100 ms instead of 2 s (fastRetries): the
// chaos's failures are retried as they would be, without the wait.
func TestDeliveryChaosFailFirstAndDuplicatesSeenAtTheReceiver(t *testing.T) {
	t.Parallel()
	hook := &hookReceiver{}
	s, c := startWithSignedHookWith(t, "", fastRetries, hook, "/hook", nil)

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
	// Two sends counted as failed (each retried after the backoff), the real one, and its duplicate.
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
