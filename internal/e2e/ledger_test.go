package e2e

// Ledger entries and statements, end to end on the real server (bbolt, or PostgreSQL with
// PAYOUTS_TEST_ENGINE=postgres): a test-clock week of fundings, payouts paid, rejected,
// cancelled, returned and still in progress; the ledger entries add up to the balance; each
// day's statement adds up and opens where the day before closed; `payouts reconcile`, run as
// the real binary, finds nothing, then names the payout of an entry deleted on purpose.

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	bbolt "go.etcd.io/bbolt"

	"payouts/rules"
)

type entryAnswer struct {
	ID        int64  `json:"id"`
	At        string `json:"at"`
	Type      string `json:"type"`
	Amount    int64  `json:"amount"`
	Available int64  `json:"available"`
	Balance   int64  `json:"balance"`
	PayoutID  int64  `json:"payoutId"`
	OrderID   string `json:"orderId"`
}

// entriesOf reads a balance's entries through the API, limit at a time.
func (c *merchantClient) entriesOf(t testing.TB, currency string, limit int) []entryAnswer {
	t.Helper()
	var all []entryAnswer
	after := ""
	for pages := 0; pages < 1000; pages++ {
		q := "currency=" + currency + "&limit=" + strconv.Itoa(limit)
		if after != "" {
			q += "&after=" + after
		}
		code, _, raw := c.do(t, "GET", "balance/transactions", nil, q)
		if code != 200 {
			t.Fatalf("GET balance/transactions %s: %d %s", q, code, raw)
		}
		var page struct {
			Items []entryAnswer `json:"items"`
			Next  *string       `json:"next"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			t.Fatal(err)
		}
		if len(page.Items) > limit {
			t.Fatalf("a page of %d entries, limit %d", len(page.Items), limit)
		}
		all = append(all, page.Items...)
		if page.Next == nil {
			return all
		}
		after = *page.Next
	}
	t.Fatal("entries without end")
	return nil
}

type statementAnswer struct {
	Currency, Date, Timezone                               string
	Complete                                               bool
	Opening, OpeningAvailable, Funded, Withdrawn, Reserved int64
	Released, Paid, Reversed, Opened, Closing              int64
	ClosingAvailable                                       int64
	Counts                                                 map[string]int
}

func TestLedgerWeekAddsUpAndReconciles(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("a week of payouts on the sandbox clock")
	}
	dir := t.TempDir()
	s := startServer(t, dir)
	c := s.newMerchant(t, map[string]any{"cardPayouts": true}) // funded: one entry a currency
	day := func() string {
		var clk clockAnswer
		if code := s.admin(t, "GET", "/admin/v1/sandbox/clock", nil, &clk); code != 200 {
			t.Fatalf("clock: %d", code)
		}
		now, err := time.Parse(time.RFC3339Nano, clk.Now)
		if err != nil {
			t.Fatalf("clock %+v: %v", clk, err)
		}
		return now.In(rules.StatementZone).Format(time.DateOnly)
	}
	fund := func(amount int64) {
		if code := s.admin(t, "POST", "/admin/v1/merchants/"+c.MerchantID+"/balance",
			map[string]any{"country": "PER", "currency": "PEN", "amount": amount}, nil); code != 200 {
			t.Fatalf("fund %d: %d", amount, code)
		}
	}
	simulate := func(id int64, body map[string]any) {
		if code, _, raw := c.do(t, "POST", "payouts/"+itoa(id)+"/simulate", body, ""); code != 200 {
			t.Fatalf("simulate %v: %d %s", body, code, raw)
		}
	}
	days := []string{day()}
	next := func() {
		s.advance(t, "24h")
		days = append(days, day())
	}

	// Day 0: paid at once, held at the bank, rejected by it, a card payout cancelled.
	paid := c.create(t, perBankRequest("WEEK-PAID"))
	held := c.create(t, perAccountRequest("WEEK-HELD", "1231234569997"))
	rejected := c.create(t, perAccountRequest("WEEK-REJECTED", "1231234569999"))
	card := c.openCard(t, cardRequest("WEEK-CARD"), 200)
	c.waitStatus(t, card.Payout.ID, "AUTHORIZED", 5*time.Second)
	if code, raw := c.cancel(t, card.Payout.ID); code != 200 {
		t.Fatalf("cancel: %d %s", code, raw)
	}
	c.waitStatus(t, paid.Payout.ID, "PROCESSED", 10*time.Second)
	c.waitStatus(t, held.Payout.ID, "PENDING_BANK", 10*time.Second)
	c.waitStatus(t, rejected.Payout.ID, "REJECTED_BANK", 10*time.Second)
	next()
	// Day 1: the held one paid; a withdrawal.
	simulate(held.Payout.ID, map[string]any{"stage": "SUCCESS"})
	fund(-250_000)
	next()
	// Day 2: it comes back; a funding.
	simulate(held.Payout.ID, map[string]any{"stage": "REJECTED", "status": "REVERSED"})
	fund(700_000)
	next() // day 3: nothing
	next()
	// Day 4: paid.
	late := c.create(t, perBankRequest("WEEK-LATE"))
	c.waitStatus(t, late.Payout.ID, "PROCESSED", 10*time.Second)
	next()
	// Day 5: still at the bank at the end of the week.
	open := c.create(t, perAccountRequest("WEEK-OPEN", "1231234569997"))
	c.waitStatus(t, open.Payout.ID, "PENDING_BANK", 10*time.Second)
	next() // day 6: nothing

	// The entries, page by page, add up to the balance; each follows the one before.
	avail, total := c.balanceOf(t, "PEN")
	entries := c.entriesOf(t, "PEN", 3)
	var sa, sb int64
	prev := entryAnswer{}
	byOrder := map[string][]string{}
	for _, e := range entries {
		d := rules.Entry{Type: rules.EntryType(e.Type), Amount: e.Amount, Available: e.Available}
		da, db := d.Deltas()
		sa, sb = sa+da, sb+db
		if e.ID != prev.ID+1 || e.Available != prev.Available+da || e.Balance != prev.Balance+db {
			t.Errorf("entry %+v does not follow %+v", e, prev)
		}
		prev = e
		byOrder[e.OrderID] = append(byOrder[e.OrderID], e.Type+" "+strconv.FormatInt(e.Amount, 10))
	}
	if sa != avail || sb != total || prev.Available != avail || prev.Balance != total {
		t.Fatalf("the entries add up to %d/%d and end on %d/%d; the balance is %d/%d", sa, sb, prev.Available, prev.Balance, avail, total)
	}
	amount := func(p payoutAnswer) string { return strconv.FormatInt(p.Payout.Amount, 10) }
	for order, want := range map[string]string{
		"":              "funding 1000000000, withdrawal -250000, funding 700000",
		"WEEK-PAID":     "reservation -" + amount(paid) + ", debit -" + amount(paid),
		"WEEK-HELD":     "reservation -" + amount(held) + ", debit -" + amount(held) + ", reversal " + amount(held),
		"WEEK-REJECTED": "reservation -" + amount(rejected) + ", release " + amount(rejected),
		"WEEK-CARD":     "reservation -" + strconv.FormatInt(card.Payout.Amount, 10) + ", release " + strconv.FormatInt(card.Payout.Amount, 10),
		"WEEK-LATE":     "reservation -" + amount(late) + ", debit -" + amount(late),
		"WEEK-OPEN":     "reservation -" + amount(open),
	} {
		if got := strings.Join(byOrder[order], ", "); got != want {
			t.Errorf("entries of %q: %s, want %s", order, got, want)
		}
	}

	// Each day's statement adds up and opens where the day before closed; the week's last
	// closing is the balance.
	var last *statementAnswer
	for i, d := range days {
		code, _, raw := c.do(t, "GET", "statements/PEN/"+d, nil, "")
		if code != 200 {
			t.Fatalf("statement %s: %d %s", d, code, raw)
		}
		var st statementAnswer
		if err := json.Unmarshal(raw, &st); err != nil {
			t.Fatal(err)
		}
		if st.Timezone != "-05:00" || st.Date != d || st.Currency != "PEN" || st.Complete != (i < len(days)-1) {
			t.Errorf("statement %s: %s", d, raw)
		}
		if got := st.Opening + st.Funded + st.Withdrawn + st.Paid + st.Reversed + st.Opened; got != st.Closing {
			t.Errorf("%s: opening and movements make %d, closing %d", d, got, st.Closing)
		}
		if got := st.OpeningAvailable + st.Funded + st.Withdrawn + st.Reserved + st.Released + st.Reversed + st.Opened; got != st.ClosingAvailable {
			t.Errorf("%s: available: opening and movements make %d, closing %d", d, got, st.ClosingAvailable)
		}
		if last == nil && (st.Opening != 0 || st.Funded != 1_000_000_000) {
			t.Errorf("the first day opens at %d and funds %d", st.Opening, st.Funded)
		}
		if last != nil && (last.Closing != st.Opening || last.ClosingAvailable != st.OpeningAvailable) {
			t.Errorf("%s opens at %d/%d; the day before closed at %d/%d", d, st.Opening, st.OpeningAvailable, last.Closing, last.ClosingAvailable)
		}
		last = &st
	}
	if last.Closing != total || last.ClosingAvailable != avail {
		t.Errorf("the week closes at %d/%d, the balance is %d/%d", last.Closing, last.ClosingAvailable, total, avail)
	}

	// The same day as CSV; the days and currencies the statements refuse.
	req := c.request("GET", "statements/PEN/"+days[1], nil, "")
	req.Header.Set("Accept", "text/csv")
	code, hdr, raw := sendRawHeaders(t, req)
	rows, err := csv.NewReader(strings.NewReader(string(raw))).ReadAll()
	if code != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/csv") || err != nil || len(rows) != 2 ||
		rows[0][0] != "currency" || rows[1][1] != days[1] || rows[1][7] != "-250000" {
		t.Errorf("CSV statement: %d %s %v\n%s", code, hdr.Get("Content-Type"), err, raw)
	}
	tomorrow, _ := time.Parse(time.DateOnly, days[len(days)-1])
	for _, bad := range []struct{ path, query, code string }{
		{"statements/PEN/" + tomorrow.AddDate(0, 0, 1).Format(time.DateOnly), "", rules.CodeStatementFuture},
		{"statements/PEN/2026-02-30", "", rules.CodeStatementDate},
		{"statements/EUR/" + days[0], "", rules.CodeLedgerCurrency},
		{"balance/transactions", "currency=EUR", rules.CodeLedgerCurrency},
		{"balance/transactions", "currency=PEN&after=x", rules.CodeQueryParam},
	} {
		code, _, raw := c.do(t, "GET", bad.path, nil, bad.query)
		if p := decodeProblem(t, raw); code != 400 || p.Code != bad.code {
			t.Errorf("%s?%s: %d %s, want 400 %s", bad.path, bad.query, code, raw, bad.code)
		}
	}
	if code, _, raw := c.do(t, "GET", "statements/PEN/2020-01-01", nil, ""); code != 200 || !strings.Contains(string(raw), `"closing":0`) {
		t.Errorf("a day before the merchant: %d %s, want zeros", code, raw)
	}

	// payouts reconcile, the real binary, on the stopped server's store: nothing to say.
	s.Stop(t)
	from, to := days[0], days[len(days)-1]
	out, err := reconcileBinary(t, dir, c.MerchantID, from, to)
	if err != nil || !strings.Contains(out, "it adds up") || strings.Contains(out, "difference") {
		t.Fatalf("reconcile on a clean store: %v\n%s", err, out)
	}
	if !strings.Contains(out, from+"  opening 0  funded 1000000000") {
		t.Errorf("reconcile's first day:\n%s", out)
	}

	// An entry deleted: the rejected payout's release. reconcile names the payout, its
	// orderId, what it expected and what it found, and exits 1.
	var release entryAnswer
	for _, e := range entries {
		if e.OrderID == "WEEK-REJECTED" && e.Type == "release" {
			release = e
		}
	}
	damaged, restore := deleteEntry(t, dir, c.MerchantID, release.ID)
	out, err = reconcileBinary(t, damaged, c.MerchantID, from, to)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("reconcile on a damaged store: %v, want exit 1\n%s", err, out)
	}
	wantFinding := "payout " + itoa(rejected.Payout.ID) + " (orderId WEEK-REJECTED)"
	if !strings.Contains(out, "difference: "+wantFinding) || !strings.Contains(out, "found reservation -"+amount(rejected)+"\n") ||
		!strings.Contains(out, "entry "+itoa(release.ID+1)) {
		t.Errorf("reconcile does not name the missing release of %s:\n%s", wantFinding, out)
	}
	// payouts check finds it too: the entries no longer chain.
	checkArgs := []string{"check", "--data", damaged}
	if onPostgresTests() {
		checkArgs = []string{"check", "--database", databaseFor(t, dir)}
	}
	bin, _ := payoutsBinary()
	raw, err = exec.Command(bin, checkArgs...).CombinedOutput()
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(raw), "ledger: ") || !strings.Contains(string(raw), "entry "+itoa(release.ID+1)) {
		t.Errorf("payouts check on the damaged store: %v\n%s", err, raw)
	}
	restore()
}

// reconcileBinary runs `payouts reconcile` as its own process on a test server's store.
func reconcileBinary(t *testing.T, dir, merchantID, from, to string) (string, error) {
	t.Helper()
	bin, err := payoutsBinary()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"reconcile", "--merchant", merchantID, "--currency", "PEN", "--from", from, "--to", to}
	if onPostgresTests() {
		args = append(args, "--database-url", databaseFor(t, dir))
	} else {
		args = append(args, "--data", dir)
	}
	out, err := exec.Command(bin, args...).CombinedOutput()
	return string(out), err
}

// deleteEntry deletes one ledger entry of a merchant's PEN balance: in a copy of a bbolt
// store (returned), or in the PostgreSQL database itself, then put back by restore.
func deleteEntry(t *testing.T, dir, merchantID string, id int64) (string, func()) {
	t.Helper()
	if onPostgresTests() {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, databaseFor(t, dir))
		if err != nil {
			t.Fatal(err)
		}
		var row []any
		rows, err := conn.Query(ctx, `DELETE FROM ledger_entries WHERE merchant_id = $1 AND currency = 'PEN' AND id = $2 RETURNING *`, merchantID, id)
		if err == nil && rows.Next() {
			row, err = rows.Values()
		}
		rows.Close()
		if err != nil || row == nil {
			t.Fatalf("delete entry %d: %v", id, err)
		}
		return dir, func() {
			defer conn.Close(ctx)
			if _, err := conn.Exec(ctx, `INSERT INTO ledger_entries VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`, row...); err != nil {
				t.Errorf("put entry %d back: %v", id, err)
			}
		}
	}
	copyDir := t.TempDir()
	raw, err := os.ReadFile(filepath.Join(dir, "payouts.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(copyDir, "payouts.db"), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := bbolt.Open(filepath.Join(copyDir, "payouts.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	key := append([]byte(merchantID+"\x00PER\x00PEN\x00"), byte(id>>56), byte(id>>48), byte(id>>40), byte(id>>32), byte(id>>24), byte(id>>16), byte(id>>8), byte(id))
	err = db.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket([]byte("ledger_entries"))
		if b.Get(key) == nil {
			t.Fatalf("no entry %d to delete", id)
		}
		return b.Delete(key)
	})
	if err != nil {
		t.Fatal(err)
	}
	return copyDir, func() {}
}

// sendRawHeaders sends req and returns the status, the headers and the body.
func sendRawHeaders(t testing.TB, req *http.Request) (int, http.Header, []byte) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, raw
}
