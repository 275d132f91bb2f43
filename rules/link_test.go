package rules_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"payouts/rules"
)

// linkBody is a Colombia example without its destination, with edit's changes.
func linkBody(t *testing.T, edit func(m map[string]any)) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "examples", "col-bank-account.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(raw, &m)
	delete(m, "destination")
	if edit != nil {
		edit(m)
	}
	b, _ := json.Marshal(m)
	return b
}

func errorCodes(err error) map[string]string {
	var p *rules.Problem
	out := map[string]string{}
	if errors.As(err, &p) {
		for _, e := range p.Errors {
			out[e.Field] = e.Code
		}
	}
	return out
}

// A link waits reserved for its destination; not given by its expiry, the payout ends
// REJECTED/EXPIRED with 4042 and its reservation is released.
func TestLinkExpiresWith4042(t *testing.T) {
	w := newWorld(t, rules.AllSettings(), "", nil)
	w.fund("COL", "COP", 20000000)
	res, err := w.svc.CreateLink(context.Background(), w.m, linkBody(t, func(m map[string]any) { m["expirationTime"] = 60 }))
	if err != nil {
		t.Fatal(err)
	}
	w.run()
	p := w.get(res.Payout.ID)
	if p.Channel != rules.ChannelLink || p.Status != rules.StatusAuthorized || p.Reserved != 15000000 {
		t.Fatalf("link: %s %s reserved %d", p.Channel, p.Status, p.Reserved)
	}
	w.clk.Add(59 * time.Minute)
	w.run()
	if p := w.get(res.Payout.ID); p.Status != rules.StatusAuthorized {
		t.Fatalf("a minute before its expiry: %s", p.Status)
	}
	w.clk.Add(time.Minute)
	w.run()
	p = w.get(res.Payout.ID)
	if p.Status != rules.StatusExpired || len(p.Errors) != 1 || p.Errors[0].Code != rules.CodeLinkExpired {
		t.Fatalf("expired link: %s %+v", p.Status, p.Errors)
	}
	if b := w.balance("COL", "COP"); b.Available != 20000000 {
		t.Errorf("reservation not released: %+v", b)
	}
}

// The destination given on a link passes the create's checks, then the payout goes on.
func TestLinkDestinationGoesOn(t *testing.T) {
	w := newWorld(t, rules.AllSettings(), "", nil)
	w.fund("COL", "COP", 20000000)
	res, err := w.svc.CreateLink(context.Background(), w.m, linkBody(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	w.run()
	p := w.get(res.Payout.ID)
	_, _, err = rules.CheckLinkDestination(p, w.m, rules.BankAccount{BankCode: "012", AccountType: "2", AccountNumber: "12"}, w.clk.Now())
	if c := errorCodes(err); c["destination.bankAccount.accountNumber"] == "" {
		t.Fatalf("a short account number: %v", err)
	}
	req, route, err := rules.CheckLinkDestination(p, w.m, rules.BankAccount{BankCode: "012", AccountType: "2", AccountNumber: "12345678901"}, w.clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.lc.LinkDestination(context.Background(), w.m, p.ID, req, route); err != nil {
		t.Fatal(err)
	}
	w.clk.Add(time.Minute)
	w.run()
	p = w.get(res.Payout.ID)
	if p.Status != rules.StatusPendingBank || p.Channel != route.Channel || p.Channel == rules.ChannelLink || p.Request.Destination.BankAccount.AccountNumber != "12345678901" {
		t.Fatalf("after the destination: %s %s %+v", p.Status, p.Channel, p.Request.Destination)
	}
	if _, err := w.lc.LinkDestination(context.Background(), w.m, p.ID, req, route); err == nil {
		t.Errorf("a second destination was taken")
	}
}

// A link's body: the create's checks less the destination's, and the link's own fields.
func TestValidateLink(t *testing.T) {
	m := &rules.Merchant{ID: "1", Settings: rules.AllSettings()}
	now := time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)
	p, err := rules.ValidateLink(linkBody(t, nil), m, now)
	if err != nil {
		t.Fatal(err)
	}
	if p.Link.Minutes != rules.LinkMinutesDefault || !p.SessionExpiresAt.Equal(now.Add(7*24*time.Hour)) || len(p.Link.Kinds) == 0 {
		t.Errorf("defaults: %+v expires %s", p.Link, p.SessionExpiresAt)
	}
	again, _ := rules.ValidateLink(linkBody(t, nil), m, now)
	other, _ := rules.ValidateLink(linkBody(t, func(m map[string]any) { m["returnUrl"] = "https://shop.example/back" }), m, now)
	if again.Fingerprint != p.Fingerprint || other.Fingerprint == p.Fingerprint {
		t.Errorf("fingerprints: the same body must match, another must not")
	}
	for _, c := range []struct {
		name  string
		edit  func(m map[string]any)
		field string
		code  string
	}{
		{"expiration too short", func(m map[string]any) { m["expirationTime"] = 4 }, "expirationTime", rules.CodeLinkExpiration},
		{"expiration too long", func(m map[string]any) { m["expirationTime"] = 43201 }, "expirationTime", rules.CodeLinkExpiration},
		{"kind the country lacks", func(m map[string]any) { m["allowedDestinations"] = []any{9} }, "allowedDestinations[0]", rules.CodeLinkDestinations},
		{"cash", func(m map[string]any) { m["allowedDestinations"] = []any{3} }, "allowedDestinations[0]", rules.CodeLinkDestinations},
		{"returnUrl", func(m map[string]any) { m["returnUrl"] = "/back" }, "returnUrl", rules.CodeLinkReturnURL},
		{"lang", func(m map[string]any) { m["lang"] = "fr" }, "lang", rules.CodeLinkLang},
		{"destination", func(m map[string]any) { m["destination"] = map[string]any{} }, "destination", rules.CodeLinkNoDestination},
		{"country rule", func(m map[string]any) {
			m["beneficiary"].(map[string]any)["document"] = map[string]any{"type": 1, "number": "12"}
		}, "beneficiary.document.number", ""},
		{"generic", func(m map[string]any) { delete(m, "orderId") }, "orderId", "1013"},
	} {
		_, err := rules.ValidateLink(linkBody(t, c.edit), m, now)
		codes := errorCodes(err)
		got, ok := codes[c.field]
		if !ok || c.code != "" && got != c.code {
			t.Errorf("%s: errors %v, want %s on %s", c.name, codes, c.code, c.field)
		}
		for f := range codes {
			if f == "destination.bankAccount" || len(f) > 12 && f[:12] == "destination." {
				t.Errorf("%s: a destination error on a link: %s", c.name, f)
			}
		}
	}
}

// A kind no bank can take the payout as is not offered: a Peru cellphone takes at most
// 500.00 PEN, and wallet 037 needs the merchant's names the request lacks.
func TestLinkOffersOnlyKindsThePayoutCanTake(t *testing.T) {
	m := &rules.Merchant{ID: "1", Settings: rules.AllSettings()}
	now := time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)
	body := func(amount int, kinds []int) []byte {
		b := map[string]any{"country": "PER", "amount": amount, "currency": "PEN", "orderId": "PER-LINK",
			"beneficiary": map[string]any{"name": "Ana", "lastName": "Quispe", "email": "ana.quispe@gmail.com",
				"document": map[string]any{"type": 1, "number": "45678912"}}}
		if kinds != nil {
			b["allowedDestinations"] = kinds
		}
		raw, _ := json.Marshal(b)
		return raw
	}
	p, err := rules.ValidateLink(body(100000, nil), m, now)
	if err != nil || slices.Contains(p.Link.Kinds, 4) || len(p.Link.Kinds) == 0 {
		t.Errorf("1,000.00 PEN, any kind: %v %v, want no cellphone", p, err)
	}
	if _, err := rules.ValidateLink(body(100000, []int{4}), m, now); errorCodes(err)["allowedDestinations[0]"] != rules.CodeLinkDestinations {
		t.Errorf("1,000.00 PEN to a cellphone: %v, want 1956", err)
	}
	p, err = rules.ValidateLink(body(10000, []int{4}), m, now)
	if err != nil {
		t.Fatal(err)
	}
	if banks := rules.LinkBanks(p, m, 4, []string{"037", "002"}, now); !slices.Equal(banks, []string{"002"}) {
		t.Errorf("banks for 100.00 PEN to a cellphone: %v, want 002 only (037 needs subMerchantInfo)", banks)
	}
}

// A link never waits for the merchant's balance, even with pendingOnNoBalance: its
// beneficiary would fill a form for money that is not there.
func TestLinkWithoutBalanceIsRejected(t *testing.T) {
	s := rules.AllSettings()
	s.PendingOnNoBalance = true
	w := newWorld(t, s, "", nil)
	res, err := w.svc.CreateLink(context.Background(), w.m, linkBody(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	w.run()
	if p := w.get(res.Payout.ID); p.Status != rules.StatusNoBalance {
		t.Errorf("a link without balance: %s, want NO_BALANCE", p.Status)
	}
}

// A Peru card on a link: offered to a merchant with card payouts whose link has a returnUrl
// (the card's timeoutUrl) and a beneficiary's email; checked by the card endpoint's rules.
func TestLinkPeruCard(t *testing.T) {
	now := time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)
	body := func(edit func(b, ben map[string]any)) []byte {
		ben := map[string]any{"name": "Ana", "lastName": "Quispe", "email": "ana.quispe@gmail.com",
			"document": map[string]any{"type": 1, "number": "45678912"}}
		b := map[string]any{"country": "PER", "amount": 10000, "currency": "PEN", "orderId": "PER-CARD-LINK",
			"beneficiary": ben, "allowedDestinations": []int{rules.LinkCardKind}, "returnUrl": "https://shop.example/back"}
		if edit != nil {
			edit(b, ben)
		}
		raw, _ := json.Marshal(b)
		return raw
	}
	all := &rules.Merchant{ID: "1", Settings: rules.AllSettings()}
	noCards := &rules.Merchant{ID: "1", Settings: rules.AllSettings()}
	noCards.Settings.CardPayouts = false
	for _, tc := range []struct {
		name string
		m    *rules.Merchant
		edit func(b, ben map[string]any)
		ok   bool
	}{
		{name: "4.2 PER card with cardPayouts and a returnUrl offered", m: all, ok: true},
		{name: "4.2 PER card without cardPayouts refused", m: noCards},
		{name: "4.2 PER card without returnUrl (its timeoutUrl) refused", m: all, edit: func(b, _ map[string]any) { delete(b, "returnUrl") }},
		{name: "4.2 PER card without the cardholder's email refused", m: all, edit: func(_, ben map[string]any) { delete(ben, "email") }},
		{name: "4.2 COL has no card kind", m: all, edit: func(b, ben map[string]any) {
			b["country"], b["currency"], b["amount"] = "COL", "COP", 15000000
			ben["document"] = map[string]any{"type": 1, "number": "1020304050"}
			delete(b, "allowedDestinations")
		}, ok: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := rules.ValidateLink(body(tc.edit), tc.m, now)
			if !tc.ok {
				if errorCodes(err)["allowedDestinations[0]"] != rules.CodeLinkDestinations {
					t.Errorf("got %v, want 1956 on allowedDestinations[0]", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Country == "COL" {
				if _, _, err := rules.CheckLinkCard(p, tc.m, now); err == nil {
					t.Error("a Colombia link took a card")
				}
				return
			}
			req, route, err := rules.CheckLinkCard(p, tc.m, now)
			if err != nil || route.Channel != rules.ChannelCard || req.TimeoutURL != "https://shop.example/back" {
				t.Errorf("card route %+v %v, timeoutUrl %q", route, err, req.TimeoutURL)
			}
		})
	}
}
