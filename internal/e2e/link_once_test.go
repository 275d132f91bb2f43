package e2e

// A payout link pays once: a server killed (SIGKILL) while submissions are in flight leaves
// each link either open or given one destination, paid once, with one reservation and one
// debit in its balance's ledger. (The same submission sent many times at once to a running
// server is web's TestPayoutLinkDoubleSubmitPaysOnce.)

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
)

// linkConfirm is a link's last step as a browser posts it: the review's form, confirmed,
// with the document typed.
type linkConfirm struct {
	action string
	body   url.Values
}

// reviewLink fills the destination form of link and answers the review's confirmation,
// not yet sent.
func reviewLink(t testing.TB, link string, vals url.Values, document string) linkConfirm {
	t.Helper()
	code, _, page := submitLink(t, link, vals)
	form := page.Find("form#review-form")
	action, ok := form.Attr("action")
	if code != 200 || !ok {
		t.Fatalf("the destination's review: %d %s", code, docText(page))
	}
	body := url.Values{}
	form.Find("input[type=hidden]").Each(func(_ int, in *goquery.Selection) {
		name, _ := in.Attr("name")
		v, _ := in.Attr("value")
		body.Set(name, v)
	})
	body.Set("answer", "yes")
	body.Set("document", document)
	return linkConfirm{action: action, body: body}
}

// post sends the confirmation on base (the server's, should it have moved) and answers
// its status, or the error of a server that did not answer.
func (c linkConfirm) post(oldBase, base string) (int, error) {
	req, _ := http.NewRequest("POST", strings.Replace(c.action, oldBase, base, 1), strings.NewReader(c.body.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := noRedirect.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// colDestination is a Colombia savings account the sandbox pays.
var colDestination = url.Values{"kind": {"2"}, "bankCode": {"012"}, "accountNumber": {"12345678901"}}

// paidOnceEach checks the balance's ledger: each of ids reserved once and debited once,
// none released, and the balance and availability moved by exactly that.
func (c *merchantClient) paidOnceEach(t testing.TB, ids []int64, amount, fundedCOP int64) {
	t.Helper()
	type moves struct{ reserved, released, debited int }
	seen := map[int64]*moves{}
	for _, id := range ids {
		seen[id] = &moves{}
	}
	for _, e := range c.entriesOf(t, "COP", 200) {
		m := seen[e.PayoutID]
		if m == nil {
			continue
		}
		switch e.Type {
		case "reservation":
			m.reserved++
		case "release":
			m.released++
		case "debit":
			m.debited++
		}
	}
	for _, id := range ids {
		if m := seen[id]; *m != (moves{reserved: 1, debited: 1}) {
			t.Errorf("payout %d: %d reservations, %d releases, %d debits; want one reservation and one debit", id, m.reserved, m.released, m.debited)
		}
	}
	want := fundedCOP - int64(len(ids))*amount
	if available, balance := c.balanceOf(t, "COP"); available != want || balance != want {
		t.Errorf("COP balance %d, available %d; want %d for %d payouts of %d paid once", balance, available, want, len(ids), amount)
	}
}

// A server killed with SIGKILL while the final submissions of 24 links are in flight, each
// sent twice at once: after a restart each link is either still open (its beneficiary
// submits again) or has its destination, given once; every payout then settles once.
func TestPayoutLinkKilledDuringSubmitPaysOnce(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("kills the binary")
	}
	dir := t.TempDir()
	cmd, base := startProcess(t, dir, append(engineArgs(t, dir, nil), "--sandbox-delay", "100ms")...)
	s := &testServer{URL: base, AdminToken: "test-admin-token-0123456789"}
	c := s.newMerchant(t, nil)
	const links = 24
	ids := make([]int64, links)
	confirms := make([]linkConfirm, links)
	for i := range links {
		_, _, a, raw := c.createLink(t, linkRequest("LINK-KILL-"+itoa(int64(i))))
		if a.Link == "" {
			t.Fatalf("create: %s", raw)
		}
		ids[i], confirms[i] = a.Payout.ID, reviewLink(t, a.Link, colDestination, "1020304050")
	}

	// Eight browsers post each confirmation twice; the kill comes with the sixth answer,
	// from the goroutine that got it, while the others' posts are in flight.
	jobs := make(chan int, 2*links)
	for i := range 2 * links {
		jobs <- i / 2
	}
	close(jobs)
	var answered, lost atomic.Int32
	var kill sync.Once
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				code, err := confirms[i].post(base, base)
				if err != nil {
					lost.Add(1)
					return // the server died under this post
				}
				if code != http.StatusSeeOther {
					t.Errorf("link %d answered %d before the kill", ids[i], code)
				}
				if answered.Add(1) == 6 {
					kill.Do(func() { cmd.Process.Signal(syscall.SIGKILL) })
				}
			}
		}()
	}
	wg.Wait()
	kill.Do(func() { cmd.Process.Signal(syscall.SIGKILL) })
	cmd.Wait()

	s2 := startServer(t, dir)
	c = c.with(func(c *merchantClient) { c.Base = s2.URL })
	open := 0
	for i, id := range ids {
		d := c.linkOf(t, id)
		if d.Link == nil {
			t.Fatalf("payout %d lost its link", id)
		}
		if d.Channel != "LINK" {
			continue
		}
		// Untaken: the link is still open, and its beneficiary submits again.
		open++
		if d.Link.State != "waiting" {
			t.Errorf("payout %d is on its link in state %q, want waiting", id, d.Link.State)
		}
		if code, err := confirms[i].post(base, s2.URL); err != nil || code != http.StatusSeeOther {
			t.Errorf("link %d submitted again after the restart: %d %v", id, code, err)
		}
	}
	t.Logf("SIGKILL after %d answered submissions, %d posts cut short; after the restart %d links were open, %d given", answered.Load(), lost.Load(), open, links-open)
	for _, id := range ids {
		if p := c.waitStage(t, id, "SUCCESS", 60*time.Second); p.Output.Status != "PROCESSED" {
			t.Errorf("payout %d settled %s", id, p.Output.Status)
		}
	}
	c.paidOnceEach(t, ids, 15000000, 100_000_000_000)
}
