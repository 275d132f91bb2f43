package api_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"payouts/internal/servertest"
)

// TestPayoutLifecycle watches payouts move through the real handler: a payout reaches SUCCESS,
// a 9999 account REJECTED/REJECTED_BANK with 4001, a held one waits for simulate, the
// listing pages with its cursor and filters, the balance adds up and /metrics counts it all.
func TestPayoutLifecycle(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, testLifecycle)
}

func testLifecycle(t *testing.T, e servertest.Engine) {
	s := servertest.Start(t, servertest.Setup{Engine: e})
	c := s.NewMerchant(t, map[string]any{"realTimePhoneAccount": true})

	create := func(order, account string) int64 {
		t.Helper()
		req := servertest.PerBankRequest(order)
		// Bank 003 (13 digits): a bank 002 account cannot end in a sandbox trigger, its
		// digit 11 or 12 is the currency (1213, 1221).
		ba := req["destination"].(map[string]any)["bankAccount"].(map[string]any)
		ba["bankCode"], ba["accountNumber"] = "003", account
		code, _, raw := c.Do(t, "POST", "payouts", req, "")
		if code != 201 {
			t.Fatalf("create %s: %d %s", order, code, raw)
		}
		return servertest.DecodePayout(t, raw).Payout.ID
	}
	// The held one first: its rail is asked no later than the others', so that once they are
	// settled the rail has answered for it too.
	held := create("LC-9997", "1231234569997")
	ok := create("LC-OK", "1231234567801")
	bad := create("LC-9999", "1231234569999")

	got := c.WaitStage(t, ok, "SUCCESS", 10*time.Second)
	if got.Output.Status != "PROCESSED" || len(got.History) != 5 {
		t.Fatalf("success: %+v", got)
	}
	got = c.WaitStage(t, bad, "REJECTED", 10*time.Second)
	if got.Output.Status != "REJECTED_BANK" || len(got.Errors) != 1 || got.Errors[0].Code != "4001" {
		t.Fatalf("9999: %+v", got)
	}
	code, _, raw := c.Do(t, "GET", "payouts/"+itoa(held), nil, "")
	if p := servertest.DecodePayout(t, raw); code != 200 || p.Output.Status != "PENDING_BANK" {
		t.Fatalf("9997: %d %s", code, raw)
	}
	code, _, raw = c.Do(t, "POST", "payouts/"+itoa(held)+"/simulate", map[string]any{"stage": "SUCCESS"}, "")
	if p := servertest.DecodePayout(t, raw); code != 200 || p.Output.Stage != "SUCCESS" {
		t.Fatalf("simulate: %d %s", code, raw)
	}
	code, _, raw = c.Do(t, "POST", "payouts/"+itoa(bad)+"/simulate", map[string]any{"stage": "SUCCESS"}, "")
	if code != 409 || servertest.DecodeProblem(t, raw).Code != "2950" {
		t.Fatalf("simulate on a rejected payout: %d %s, want 409 2950", code, raw)
	}

	// Balance: two processed payouts of 1,000.00 debited from the funded 10,000,000.00.
	code, _, raw = c.Do(t, "GET", "balance", nil, "")
	var balances []struct {
		Country, Currency string
		Available         int64 `json:"availableBalance"`
		Balance           int64 `json:"balance"`
	}
	if code != 200 || json.Unmarshal(raw, &balances) != nil {
		t.Fatalf("balance: %d %s", code, raw)
	}
	pen := 0
	for _, b := range balances {
		if b.Currency == "PEN" {
			pen++
			if b.Balance != 1_000_000_000-200000 || b.Available != b.Balance {
				t.Fatalf("PEN balance %+v", b)
			}
		}
	}
	if pen != 1 {
		t.Fatalf("balance: %d PEN balances in %s, want one", pen, raw)
	}

	// Listing: newest first, two per page, then the last page.
	var seen []int64
	cursor := ""
	for pages := 0; pages < 5; pages++ {
		q := "limit=2"
		if cursor != "" {
			q += "&cursor=" + cursor
		}
		code, _, raw = c.Do(t, "GET", "payouts", nil, q)
		var page struct {
			Items      []servertest.Payout `json:"items"`
			NextCursor *string             `json:"nextCursor"`
		}
		if err := json.Unmarshal(raw, &page); err != nil || code != 200 {
			t.Fatalf("list: %d %s", code, raw)
		}
		for _, p := range page.Items {
			seen = append(seen, p.Payout.ID)
		}
		if page.NextCursor == nil {
			break
		}
		cursor = *page.NextCursor
	}
	if len(seen) != 3 || seen[0] != bad || seen[1] != ok || seen[2] != held {
		t.Fatalf("listing %v, want %v", seen, []int64{bad, ok, held})
	}
	for q, want := range map[string]int{"stage=SUCCESS": 2, "status=REJECTED_BANK": 1, "stage=IN_PROGRESS": 0, "country=COL": 0, "orderId=LC-9999": 1} {
		_, _, raw = c.Do(t, "GET", "payouts", nil, q)
		var page struct{ Items []servertest.Payout }
		json.Unmarshal(raw, &page)
		if len(page.Items) != want {
			t.Errorf("%s: %d items, want %d", q, len(page.Items), want)
		}
	}

	_, _, metrics := s.RawAdmin(t, "GET", "/metrics", nil)
	for _, want := range []string{
		`payouts_created_total{channel="BATCH",country="PER"} 3`,
		`payouts_finished_total{country="PER",stage="SUCCESS",status="PROCESSED"} 2`,
		`payouts_finished_total{country="PER",stage="REJECTED",status="REJECTED_BANK"} 1`,
		`payouts_http_requests_total{route="POST /api/v1/{merchantId}/payouts",status="201"} 3`,
		`payouts_outbox_depth`,
	} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

func TestSimulateRefusedWithoutSandbox(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e, Args: []string{"--sandbox=false"}})
		c := s.NewMerchant(t, nil)
		id := c.Create(t, servertest.PerBankRequest("NS-1")).Payout.ID
		s.Run(t, []servertest.Scenario{{Name: "simulate without sandbox", Method: "POST", Path: "payouts/" + itoa(id) + "/simulate", As: c,
			Body: map[string]any{"stage": "SUCCESS"}, WantStatus: 403, WantCode: "2960"}})
	})
}
