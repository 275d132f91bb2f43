package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"payouts/api"
	"payouts/rules"
	"payouts/rules/merchants"
	"payouts/rules/sandbox"
	"payouts/rules/workers"
	"payouts/web/notify"
)

// The lanes are kicked for an outcome that wrote events, once, when it is committed; the set
// of outcomes waiting for their commit stays bounded.
func TestEventfulOutcomesKickOnceAndStayBounded(t *testing.T) {
	o := &eventfulOutcomes{}
	if o.committed(1) {
		t.Error("an outcome that wrote no event kicks the lanes")
	}
	o.wrote(2)
	if !o.committed(2) || o.committed(2) {
		t.Error("an outcome that wrote events does not kick the lanes exactly once")
	}
	for id := range int64(maxEventfulOutcomes + 10) {
		o.wrote(id + 100)
	}
	if n := len(o.ids); n > maxEventfulOutcomes {
		t.Errorf("%d outcomes kept, want at most %d", n, maxEventfulOutcomes)
	}
}

// testClock is the injected clock of the expiry test.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

var otpInText = regexp.MustCompile(`Tu código de retiro es: ([0-9]{6})`)

func otherCode(code string) string {
	n, _ := strconv.Atoi(code)
	return fmt.Sprintf("%06d", (n+1)%1_000_000)
}
func colCashRequest(orderID string) map[string]any {
	return map[string]any{
		"country": "COL", "amount": 5000000, "currency": "COP", "orderId": orderID,
		"beneficiary": map[string]any{"name": "Pedro", "lastName": "Ramírez", "email": "pedro.ramirez@yahoo.com",
			"document": map[string]any{"type": 1, "number": "80123456"}},
		"destination": map[string]any{"bankAccount": map[string]any{"bankCode": "099", "accountType": 3}},
	}
}

// The claim's expiry with an injected clock: the same wiring as the server (newApp's
// lifecycle and service, then this feature's newNotifications and install), driven step by
// step instead of waiting seven days.
func TestCashClaimExpiresAtClaimUntilWithInjectedClock(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, sealer, err := Open(context.Background(), Config{Storage: StorageConfig{Data: dir, NoSync: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(ctx)
	clk := &testClock{t: time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)}
	logs := &bytes.Buffer{}
	w := &wiring{cfg: Config{Storage: StorageConfig{Data: dir}, Sandbox: SandboxConfig{On: true}, Notify: NotifyConfig{MailFrom: "pagos@payouts.test"}}, db: db, sealer: sealer,
		logger: newLogger("json", "info", logs), now: clk.Now}
	w.deps = &api.Deps{}
	w.merchants = merchants.New(db, sealer)
	w.keys = api.NewKeyring(merchantSource{db, w.merchants})
	w.metrics = api.NewMetrics(nil)
	rail := &sandbox.Rail{Delay: time.Second, BatchDelay: time.Second, Now: clk.Now}
	w.lc = &workers.Lifecycle{
		Lifecycle: &rules.Lifecycle{Store: db, Merchants: w.keys.Merchant, Now: clk.Now, Log: w.logger},
		Rail:      func(rules.Channel) rules.Rail { return rail },
	}
	w.svc = &rules.Service{Store: db, Now: clk.Now}
	n, err := w.newNotifications(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n.install(w)
	w.bindHooks()

	settings := rules.DefaultSettings()
	settings.CashPayouts, settings.EmailNotifications = true, true
	m, _, err := w.merchants.Create(ctx, "", "Tienda Ejemplo", settings, clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.lc.Fund(ctx, m.ID, "COL", "COP", 100_000_000_00); err != nil {
		t.Fatal(err)
	}
	req := colCashRequest("CASH-EXP")
	req["destination"].(map[string]any)["bankAccount"].(map[string]any)["expirationDate"] = "2026-11-23"
	body, _ := json.Marshal(req)
	res, err := w.svc.CreatePayout(ctx, m, body, rules.EndpointPayouts)
	if err != nil {
		t.Fatal(err)
	}
	p := res.Payout
	if want := time.Date(2026, 11, 24, 5, 0, 0, 0, time.UTC); !p.ClaimUntil.Equal(want) {
		t.Fatalf("ClaimUntil %v, want the end of 2026-11-23 in UTC-5", p.ClaimUntil)
	}
	// The worker takes the payout to PENDING_BANK, where it waits for the claim.
	for range 4 {
		clk.Set(clk.Now().Add(2 * time.Second))
		if _, err := w.lc.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := db.Payout(ctx, m.ID, p.ID); got.Status != rules.StatusPendingBank {
		t.Fatalf("status %s, want PENDING_BANK", got.Status)
	}
	// The dispatcher mails the code; the event and its sealed code leave the outbox.
	if _, err := n.dispatcher.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	raws, _ := db.SandboxMails(ctx, 10)
	if len(raws) != 1 || db.OutboxDepth(ctx) != 0 {
		t.Fatalf("%d mails, outbox depth %d; want the OTP mail and an empty outbox", len(raws), db.OutboxDepth(ctx))
	}
	var otp notify.Mail
	json.Unmarshal(raws[0], &otp)
	mm := otpInText.FindStringSubmatch(otp.Text)
	if mm == nil || !strings.Contains(otp.Text, "Vence el 23/11/2026 a las 23:59 (hora de Colombia)") {
		t.Fatalf("OTP mail:\n%s", otp.Text)
	}
	code := mm[1]
	if got, _ := db.Payout(ctx, m.ID, p.ID); got.ClaimCodeHash != rules.ClaimCodeHash(code) {
		t.Errorf("the payout does not keep the code's SHA-256")
	}

	// One second before ClaimUntil the claim is still open (a wrong code is counted); at
	// ClaimUntil it is refused even with the right code, and the worker expires the payout.
	clk.Set(p.ClaimUntil.Add(-time.Second))
	if _, err := n.claims.Claim(ctx, m.ID, p.ID, otherCode(code)); err == nil || !strings.Contains(err.Error(), "wrong") {
		t.Fatalf("wrong code before expiry: %v", err)
	}
	clk.Set(p.ClaimUntil)
	var re *rules.Error
	if _, err := n.claims.Claim(ctx, m.ID, p.ID, code); !errors.As(err, &re) || re.Code != rules.CodeClaimExpired {
		t.Fatalf("right code at ClaimUntil: %v, want %s", err, rules.CodeClaimExpired)
	}
	if _, err := w.lc.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	got, _ := db.Payout(ctx, m.ID, p.ID)
	if got.Stage != rules.StageRejected || got.Status != rules.StatusExpired || got.ClaimAttempts != 1 {
		t.Fatalf("after ClaimUntil: %s/%s attempts %d, want REJECTED/EXPIRED with 1 wrong code", got.Stage, got.Status, got.ClaimAttempts)
	}
	if b, _ := db.Balances(ctx, m.ID); b[0].Available != b[0].Balance {
		t.Errorf("the expired payout still holds money: %+v", b)
	}
	// The beneficiary is told, in Spanish, that the cash expired.
	if _, err := n.dispatcher.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	raws, _ = db.SandboxMails(ctx, 10)
	var last notify.Mail
	json.Unmarshal(raws[0], &last)
	if len(raws) != 2 || last.Kind != rules.EventBeneficiaryMail || !strings.Contains(last.Text, "no se retiró el efectivo antes de la fecha de vencimiento") {
		t.Errorf("%d mails; last %q:\n%s", len(raws), last.Subject, last.Text)
	}
	if regexp.MustCompile(`(^|[^0-9])` + code + `([^0-9]|$)`).MatchString(logs.String()) {
		t.Errorf("the one-time code appears in the log")
	}
}
