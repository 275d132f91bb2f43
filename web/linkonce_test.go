package web_test

// A payout link pays once: its final submission sent many times at once gives the link one
// destination, and the payout is reserved once and paid once.

import (
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"payouts/internal/servertest"
)

// The same link's final submission, sent eight times at once (a double click, two tabs):
// one gives the destination, every one is answered with the link's progress (303), and the
// payout is paid once: one reservation and one debit in the ledger, the balance moved by its
// amount once, the day's statement counting it once.
func TestPayoutLinkDoubleSubmitPaysOnce(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		c := s.NewMerchant(t, nil)
		const amount, funded = 15000000, 100_000_000_000 // servertest funds COP with 100,000,000,000
		_, _, a, raw := c.CreateLink(t, servertest.LinkRequest("LINK-TWICE"))
		if a.Link == "" {
			t.Fatalf("create: %s", raw)
		}
		code, _, page := servertest.SubmitForm(t, s.Browser(), a.Link, "form#link-form",
			url.Values{"kind": {"2"}, "bankCode": {"012"}, "accountNumber": {"12345678901"}})
		if code != 200 {
			t.Fatalf("the destination's review: %d %s", code, servertest.DocText(page))
		}
		action, body := servertest.FormOf(t, page, "form#review-form")
		body.Set("answer", "yes")
		body.Set("document", "1020304050")
		posts := make([]servertest.FormPost, 8)
		for i := range posts {
			posts[i] = servertest.FormPost{Action: action, Body: body}
		}
		servertest.PostAtOnce(t, s.Browser(), posts)

		if p := c.WaitStage(t, a.Payout.ID, "SUCCESS", 15*time.Second); p.Output.Status != "PROCESSED" {
			t.Fatalf("settled %s", p.Output.Status)
		}
		if d := c.LinkOf(t, a.Payout.ID); d.Link == nil || d.Link.State == "waiting" {
			t.Errorf("the link after its destination: %+v", d.Link)
		}

		code, _, raw = c.Do(t, "GET", "balance/transactions", nil, "currency=COP&limit=200")
		var entries struct {
			Items []struct {
				At       string `json:"at"`
				Type     string `json:"type"`
				PayoutID int64  `json:"payoutId"`
			} `json:"items"`
			Next *string `json:"next"`
		}
		if err := json.Unmarshal(raw, &entries); code != 200 || err != nil || entries.Next != nil {
			t.Fatalf("GET balance/transactions: %d %v %s", code, err, raw)
		}
		moves := map[string]int{}
		var debitAt time.Time
		for _, e := range entries.Items {
			if e.PayoutID != a.Payout.ID {
				continue
			}
			moves[e.Type]++
			if e.Type == "debit" {
				debitAt, _ = time.Parse(time.RFC3339Nano, e.At)
			}
		}
		if moves["reservation"] != 1 || moves["debit"] != 1 || moves["release"] != 0 {
			t.Errorf("the payout's ledger moves %v; want one reservation and one debit", moves)
		}
		if available, balance := c.Balance(t, "COP"); available != funded-amount || balance != funded-amount {
			t.Errorf("COP balance %d, available %d; want %d: the link's amount paid once", balance, available, funded-amount)
		}

		day := debitAt.In(time.FixedZone("COT", -5*3600)).Format(time.DateOnly) // Colombia keeps no daylight saving
		var st struct{ Reserved, Released, Paid int64 }
		code, _, raw = c.Do(t, "GET", "statements/COP/"+day, nil, "")
		if err := json.Unmarshal(raw, &st); code != 200 || err != nil {
			t.Fatalf("GET statements/COP/%s: %d %v %s", day, code, err, raw)
		}
		if st.Paid != -amount || st.Reserved != -amount || st.Released != 0 { // what left the balance, signed
			t.Errorf("statement of %s: reserved %d, released %d, paid %d; want the link's %d reserved and paid once (negative: out of the balance)", day, st.Reserved, st.Released, st.Paid, amount)
		}
	})
}
