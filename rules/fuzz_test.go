package rules_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"payouts/rules"
)

// FuzzDecodeAndCheck feeds arbitrary bodies through the whole path, DecodePayoutRequest then
// Check, for several merchants, both endpoints and two clocks. It asserts that nothing panics,
// that every refusal is a *rules.Problem of the right kind whose errors carry a catalogued
// code and a field (except errors about the whole body), that Check is deterministic, and
// that an accepted payout has a route the rest of the service can use.
func FuzzDecodeAndCheck(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "examples", "*.json"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no examples to seed with: %v", err)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, r := range append(countryRows(), publishedRows()...) {
		if r.raw == nil {
			b, err := json.Marshal(r.req)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	for _, s := range []string{
		``, `null`, `[]`, `{}`, `"x"`, `{"country":"COL"}`, `{} {}`,
		`{"country":"PER","amount":1e400,"currency":"PEN"}`,
		`{"country":"COL","amount":-0,"currency":"COP"}`,
		`{"country":"PER","amount":1,"currency":"PEN","orderId":"o","beneficiary":{"name":"a","lastName":"b","document":{"type":1,"number":"12345678"}},"destination":{"bankAccount":{"cci":"   "}}}`,
	} {
		f.Add([]byte(s))
	}

	status := map[string]int{}
	for _, c := range rules.Catalogue {
		status[c.Code] = c.Status
	}
	merchants := []*rules.Merchant{
		{ID: "1", Settings: rules.AllSettings()},
		{ID: "2", Settings: rules.DefaultSettings()},
		{ID: "3", Settings: rules.Settings{PSP: true, RealTimeKey: true}},
	}
	clocks := []time.Time{checkNow, time.Date(2026, 12, 31, 23, 30, 0, 0, time.UTC)}

	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := rules.DecodePayoutRequest(body)
		if err != nil {
			checkProblem(t, err, rules.KindInvalid, status, 400)
			// Validate adds the country errors to the generic ones: still 400, every
			// generic error kept, each country error of status 401.
			_, _, verr := rules.Validate(body, merchants[0], clocks[0], rules.EndpointPayouts)
			var gp, vp *rules.Problem
			errors.As(err, &gp)
			if !errors.As(verr, &vp) || vp.Kind != rules.KindInvalid || len(vp.Errors) < len(gp.Errors) {
				t.Fatalf("Validate on a generic failure: %v, want a KindInvalid problem with the %d generic errors", verr, len(gp.Errors))
			}
			for i, e := range vp.Errors {
				want := 400
				if i >= len(gp.Errors) {
					want = 401
				}
				if status[e.Code] != want || e.Message == "" {
					t.Fatalf("Validate error %d %s at %q: status %d, want %d", i, e.Code, e.Field, status[e.Code], want)
				}
			}
			return
		}
		if req == nil {
			t.Fatal("DecodePayoutRequest returned neither a request nor an error")
		}
		for _, m := range merchants {
			for _, ep := range []rules.Endpoint{rules.EndpointPayouts, rules.EndpointCard} {
				for _, at := range clocks {
					route, err := rules.Check(req, m, at, ep)
					_, again, err2 := rules.Validate(body, m, at, ep)
					if !reflect.DeepEqual(route, again) || (err == nil) != (err2 == nil) ||
						err != nil && err.Error() != err2.Error() {
						t.Fatalf("Check is not deterministic: %v / %v", err, err2)
					}
					if err != nil {
						checkProblem(t, err, rules.KindRejected, status, 401)
						continue
					}
					checkAccepted(t, req, route, ep)
				}
			}
		}
	})
}

// checkProblem asserts the shape of a refusal. wantStatus is the Catalogue status every
// code of that kind must have (401 for the country rules, 400 for the generic contract).
func checkProblem(t *testing.T, err error, kind rules.Kind, status map[string]int, wantStatus int) {
	t.Helper()
	var p *rules.Problem
	if !errors.As(err, &p) {
		t.Fatalf("error %v (%T) is not a *rules.Problem", err, err)
	}
	if p.Kind != kind || len(p.Errors) == 0 {
		t.Fatalf("Problem kind %v with %d errors, want kind %v with some: %v", p.Kind, len(p.Errors), kind, p)
	}
	for _, e := range p.Errors {
		st, ok := status[e.Code]
		if e.Code == "" || !ok {
			t.Fatalf("error %q has a code not in the Catalogue: %q", e.Message, e.Code)
		}
		if st != wantStatus {
			t.Errorf("error %s at %q (%s): Catalogue status %d, want %d", e.Code, e.Field, e.Message, st, wantStatus)
		}
		// Of the whole body: not JSON, none, or invalid UTF-8 outside any string value (a key).
		wholeBody := e.Code == rules.CodeMalformedJSON || e.Code == rules.CodeBodyRequired ||
			e.Code == rules.CodeControlCharacter && e.Message == "the body is not valid UTF-8"
		if e.Field == "" && !wholeBody {
			t.Errorf("error %s (%s) has no field", e.Code, e.Message)
		}
		if e.Kind != kind || e.Message == "" {
			t.Errorf("error %s at %q: kind %v, message %q", e.Code, e.Field, e.Kind, e.Message)
		}
	}
}

// checkAccepted asserts the invariants of an accepted payout's route.
func checkAccepted(t *testing.T, req *rules.PayoutRequest, r rules.Route, ep rules.Endpoint) {
	t.Helper()
	if r.Amount <= 0 || r.Amount > 9_999_999_999 {
		t.Fatalf("accepted amount %d (from %q)", r.Amount, req.Amount)
	}
	if n, err := req.Amount.Int64(); err != nil || n != r.Amount {
		t.Fatalf("route amount %d is not the request's %q", r.Amount, req.Amount)
	}
	if r.Channel == "" {
		t.Fatalf("accepted without a channel: %+v", r)
	}
	switch req.Country {
	case "COL":
		if req.Currency != "COP" || r.Amount%100 != 0 {
			t.Fatalf("accepted COL %s %d", req.Currency, r.Amount)
		}
		if (r.Channel == rules.ChannelCash) != (r.AccountType == 3) || (r.Channel == rules.ChannelCash) == r.ClaimUntil.IsZero() {
			t.Fatalf("COL route %+v", r)
		}
		if r.Channel != rules.ChannelRealTimeKey {
			if _, ok := rules.LookupBank("COL", r.BankCode); !ok {
				t.Fatalf("COL route to unknown bank %q", r.BankCode)
			}
		}
		if ep == rules.EndpointCard {
			t.Fatal("a Colombia payout was accepted on the card endpoint")
		}
	case "PER":
		if req.Currency != "PEN" && req.Currency != "USD" {
			t.Fatalf("accepted PER currency %s", req.Currency)
		}
		if (ep == rules.EndpointCard) != (r.Channel == rules.ChannelCard) || (r.AccountType == 5) != (ep == rules.EndpointCard) {
			t.Fatalf("PER route %+v on endpoint %v", r, ep)
		}
		if ep == rules.EndpointCard && (r.ExpirationMinutes < 5 || r.ExpirationMinutes > 30) {
			t.Fatalf("card session of %d minutes", r.ExpirationMinutes)
		}
		if ep == rules.EndpointPayouts {
			b, ok := rules.LookupBank("PER", r.BankCode)
			if !ok || b.Retired {
				t.Fatalf("PER route to bank %q", r.BankCode)
			}
			if r.Channel == rules.ChannelRealTime && !b.RealTime || r.Channel == rules.ChannelBatch && !b.Batch {
				t.Fatalf("PER channel %s at bank %+v", r.Channel, b)
			}
		}
	default:
		t.Fatalf("accepted country %q", req.Country)
	}
}
