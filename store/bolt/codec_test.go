package bolt

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"payouts/rules"
)

// The store's codec must round-trip every field of a payout, and agree with encoding/json
// both ways (records written by either are read by the other).
func TestCodecRoundTripsPayouts(t *testing.T) {
	p := samplePayout()
	p.ClaimUntil = time.Date(2026, 11, 28, 5, 0, 0, 0, time.UTC)
	p.Card = &rules.CardRef{Token: "tok", Brand: "VISA", BIN: "411111", Last4: "1111"}
	p.Request.ExpirationTime = "10"
	p.Request.SubMerchantInfo = &rules.SubMerchantInfo{Code: "S1", Name: "Shop", URL: "https://shop.example"}
	p.Move(rules.StatusRejectedBank, time.Now(), rules.CodeBankRejected, "rejected")
	raw, err := marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var back rules.Payout
	if err := unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	var std rules.Payout
	if err := json.Unmarshal(raw, &std); err != nil {
		t.Fatal(err)
	}
	stdRaw, _ := json.Marshal(p)
	var fromStd rules.Payout
	if err := unmarshal(stdRaw, &fromStd); err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string]*rules.Payout{"codec": &back, "std reads codec": &std, "codec reads std": &fromStd} {
		// Times lose their monotonic reading in any encoding; compare them as instants.
		if !reflect.DeepEqual(normal(got), normal(p)) {
			t.Errorf("%s: round trip changed the payout:\n got %+v\nwant %+v", name, got, p)
		}
	}
}

func normal(p *rules.Payout) rules.Payout {
	c := *p
	c.CreatedAt, c.StatusChangedAt = c.CreatedAt.UTC().Round(0), c.StatusChangedAt.UTC().Round(0)
	c.ClaimUntil, c.SessionExpiresAt = c.ClaimUntil.UTC().Round(0), c.SessionExpiresAt.UTC().Round(0)
	c.History = nil
	for _, h := range p.History {
		h.At = h.At.UTC().Round(0)
		c.History = append(c.History, h)
	}
	return c
}
