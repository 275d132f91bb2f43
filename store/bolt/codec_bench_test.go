package bolt

import (
	"encoding/json"
	"testing"
	"time"

	gojson "github.com/goccy/go-json"

	"payouts/rules"
)

func samplePayout() *rules.Payout {
	req, err := rules.DecodePayoutRequest([]byte(`{"country":"PER","amount":100000,"currency":"PEN","orderId":"ORD-1","beneficiary":{"name":"Ana","lastName":"Quispe","email":"ana.quispe@gmail.com","document":{"type":1,"number":"45678912"}},"destination":{"bankAccount":{"bankCode":"002","accountType":2,"accountNumber":"19312345678012"}}}`))
	if err != nil {
		panic(err)
	}
	p := rules.NewPayout("1", req, rules.Route{Amount: 100000, Channel: rules.ChannelBatch, AccountType: 2, BankCode: "002"}, time.Now())
	p.Move(rules.StatusAuthorized, time.Now(), "", "")
	p.Move(rules.StatusWaitingRouting, time.Now(), "", "")
	p.Move(rules.StatusPendingBank, time.Now(), "", "submitted")
	return p
}

func BenchmarkCodecStd(b *testing.B) {
	p := samplePayout()
	raw, _ := json.Marshal(p)
	b.Logf("%d bytes", len(raw))
	for b.Loop() {
		out, _ := json.Marshal(p)
		var q rules.Payout
		json.Unmarshal(out, &q)
	}
}

func BenchmarkCodecGoJSON(b *testing.B) {
	p := samplePayout()
	for b.Loop() {
		out, _ := gojson.Marshal(p)
		var q rules.Payout
		if err := gojson.Unmarshal(out, &q); err != nil {
			b.Fatal(err)
		}
	}
}
