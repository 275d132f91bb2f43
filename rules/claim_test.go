package rules_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"payouts/rules"
)

func TestNewClaimCodeIsSixDigitsWithoutModuloBias(t *testing.T) {
	// 0xFFFFFFFF is above the largest multiple of a million below 2^32: drawn again.
	r := bytes.NewReader([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 42})
	code, err := rules.NewClaimCode(r)
	if err != nil || code != "000042" {
		t.Fatalf("NewClaimCode = %q, %v; want 000042 (the biased draw rejected)", code, err)
	}
	six := regexp.MustCompile(`^[0-9]{6}$`)
	seen := map[string]bool{}
	for range 200 {
		c, err := rules.NewClaimCode(rand.Reader)
		if err != nil || !six.MatchString(c) {
			t.Fatalf("code %q, %v", c, err)
		}
		seen[c] = true
	}
	if len(seen) < 190 {
		t.Errorf("only %d distinct codes in 200 draws", len(seen))
	}
}

// xorSeal is a stand-in for store.Sealer: enough to show the code is not in the clear.
func xorSeal(code []byte, id string) []byte {
	out := make([]byte, len(code))
	for i := range code {
		out[i] = code[i] ^ id[len(id)-1-i%len(id)] ^ 0x5a
	}
	return append(out, []byte(id)...)
}

func xorOpen(sealed []byte, id string) ([]byte, error) {
	n := len(sealed) - len(id)
	if n < 0 || string(sealed[n:]) != id {
		return nil, errors.New("bound to another event")
	}
	return xorSeal(sealed[:n], id)[:n], nil
}

func TestCashOTPEventKeepsOnlyTheHashOnThePayoutAndTheCodeSealed(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	p := &rules.Payout{MerchantID: "m1", Channel: rules.ChannelCash}
	ev, err := rules.CashOTPEvent(p, rand.Reader, xorSeal, now)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Kind != rules.EventCashOTP || !strings.HasPrefix(ev.ID, "cash.otp.") || ev.MerchantID != "m1" || !ev.NextAt.Equal(now) {
		t.Errorf("event %+v", ev)
	}
	code, err := rules.OpenClaimCode(ev, xorOpen)
	if err != nil || len(code) != 6 {
		t.Fatalf("OpenClaimCode = %q, %v", code, err)
	}
	if p.ClaimCodeHash != rules.ClaimCodeHash(code) || len(p.ClaimCodeHash) != 64 {
		t.Errorf("payout keeps %q, want the SHA-256 hex of the code", p.ClaimCodeHash)
	}
	if bytes.Contains(ev.Data, []byte(code)) {
		t.Errorf("the event data holds the code in the clear: %s", ev.Data)
	}
	other := ev
	other.ID = "cash.otp:other"
	if _, err := rules.OpenClaimCode(other, xorOpen); err == nil {
		t.Errorf("the sealed code opened under another event id")
	}
	if ev2, _ := rules.CashOTPEvent(&rules.Payout{}, rand.Reader, xorSeal, now); ev2.ID == ev.ID {
		t.Errorf("two events share the id %s", ev.ID)
	}
}

// claimWorld is one cash payout in memory behind rules.ClaimStore, with a recording Settle.
type claimWorld struct {
	mu      sync.Mutex
	p       rules.Payout
	next    time.Time
	settled []rules.Status
	clock   *clock
	claims  *rules.CashClaims
}

func (w *claimWorld) UpdatePayouts(ctx context.Context, ids []int64, step rules.Step) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, id := range ids {
		if id != w.p.ID {
			continue
		}
		c := w.p
		next, err := step(&c, nil)
		if errors.Is(err, rules.ErrNoChange) {
			continue
		}
		if err != nil {
			return err
		}
		w.p, w.next = c, next
	}
	return nil
}

func newClaimWorld(status rules.Status, code string) *claimWorld {
	clock := newClock()
	w := &claimWorld{clock: clock, p: rules.Payout{ID: 9, MerchantID: "m1", Channel: rules.ChannelCash, Status: status,
		Stage: rules.StageOf(status), ClaimUntil: clock.Now().Add(72 * time.Hour), ClaimCodeHash: rules.ClaimCodeHash(code)}}
	w.claims = &rules.CashClaims{Store: w, Now: clock.Now,
		Settle: func(ctx context.Context, merchantID string, id int64, status rules.Status, code, note string) (*rules.Payout, error) {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.settled = append(w.settled, status)
			w.p.Move(status, clock.Now(), code, note)
			c := w.p
			return &c, nil
		}}
	return w
}

func errCode(err error) string {
	var e *rules.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func TestCashClaimRightCodeSettlesTheCashAsProcessed(t *testing.T) {
	w := newClaimWorld(rules.StatusPendingBank, "123456")
	p, err := w.claims.Claim(context.Background(), "m1", 9, "123456")
	if err != nil || p.Stage != rules.StageSuccess {
		t.Fatalf("Claim = %+v, %v; want SUCCESS", p, err)
	}
	if len(w.settled) != 1 || w.settled[0] != rules.StatusProcessed {
		t.Errorf("settled %v, want [PROCESSED]", w.settled)
	}
}

func TestCashClaimCountsWrongCodesAndLocksAfterFive(t *testing.T) {
	w := newClaimWorld(rules.StatusPendingBank, "123456")
	for i := 1; i <= rules.ClaimMaxAttempts; i++ {
		_, err := w.claims.Claim(context.Background(), "m1", 9, "654321")
		var e *rules.Error
		if !errors.As(err, &e) || e.Code != rules.CodeClaimCodeWrong || e.Kind != rules.KindRejected || e.Field != "code" {
			t.Fatalf("wrong code %d: %v, want 2051 on field code", i, err)
		}
		if w.p.ClaimAttempts != i {
			t.Fatalf("after %d wrong codes the payout counts %d", i, w.p.ClaimAttempts)
		}
		// The payout stays queued as the lifecycle had it: until its claim ends.
		if !w.next.Equal(w.p.ClaimUntil) {
			t.Errorf("wrong code %d requeued the payout at %v, want ClaimUntil %v", i, w.next, w.p.ClaimUntil)
		}
		if i == rules.ClaimMaxAttempts && !strings.Contains(e.Message, "locked") {
			t.Errorf("the last wrong code says %q, want it to say the claim is locked", e.Message)
		}
	}
	_, err := w.claims.Claim(context.Background(), "m1", 9, "123456")
	if errCode(err) != rules.CodeClaimLocked {
		t.Fatalf("the right code after five wrong ones: %v, want 2052 locked", err)
	}
	if w.p.ClaimAttempts != rules.ClaimMaxAttempts || len(w.settled) != 0 {
		t.Errorf("attempts %d, settled %v; want 5 and nothing settled", w.p.ClaimAttempts, w.settled)
	}
}

func TestCashClaimRefusedOnceTheClaimExpiredWithoutCountingIt(t *testing.T) {
	w := newClaimWorld(rules.StatusPendingBank, "123456")
	w.clock.Add(w.p.ClaimUntil.Sub(w.clock.Now())) // the claim ends at ClaimUntil, before the lifecycle runs
	_, err := w.claims.Claim(context.Background(), "m1", 9, "123456")
	if errCode(err) != rules.CodeClaimExpired {
		t.Fatalf("claim at ClaimUntil: %v, want 2053", err)
	}
	if w.p.ClaimAttempts != 0 || len(w.settled) != 0 {
		t.Errorf("attempts %d, settled %v; want none", w.p.ClaimAttempts, w.settled)
	}
	w.p.Move(rules.StatusExpired, w.clock.Now(), rules.CodeExpired, "expired")
	if _, err := w.claims.Claim(context.Background(), "m1", 9, "123456"); errCode(err) != rules.CodeClaimExpired {
		t.Errorf("claim of an EXPIRED payout: %v, want 2053", err)
	}
}

func TestCashClaimRefusals(t *testing.T) {
	for _, tc := range []struct {
		name     string
		edit     func(p *rules.Payout)
		merchant string
		id       int64
		want     string
	}{
		{"another merchant's payout is not found", nil, "m2", 9, rules.CodePayoutNotFound},
		{"an unknown payout is not found", nil, "m1", 10, rules.CodePayoutNotFound},
		{"a bank payout has no claim", func(p *rules.Payout) { p.Channel, p.ClaimCodeHash = rules.ChannelBatch, "" }, "m1", 9, rules.CodeWrongState},
		{"a settled payout cannot be claimed again", func(p *rules.Payout) { p.Move(rules.StatusProcessed, p.ClaimUntil.Add(-time.Hour), "", "") }, "m1", 9, rules.CodeWrongState},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newClaimWorld(rules.StatusPendingBank, "123456")
			if tc.edit != nil {
				tc.edit(&w.p)
			}
			_, err := w.claims.Claim(context.Background(), tc.merchant, tc.id, "123456")
			if errCode(err) != tc.want {
				t.Errorf("got %v, want code %s", err, tc.want)
			}
			if len(w.settled) != 0 {
				t.Errorf("settled %v", w.settled)
			}
		})
	}
}

func TestCashClaimWrongCodeBeforeRoutingKeepsThePayoutDueNow(t *testing.T) {
	w := newClaimWorld(rules.StatusAuthorized, "123456")
	w.claims.Claim(context.Background(), "m1", 9, "000000")
	if w.p.ClaimAttempts != 1 || !w.next.Equal(w.clock.Now()) {
		t.Errorf("attempts %d, next %v; want 1 and due now (the lifecycle routes it next)", w.p.ClaimAttempts, w.next)
	}
}
