package api

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"payouts/rules"
)

// Every answer encodes to the same bytes with the format the API uses as with
// encoding/json (huma's default): the views of payouts made from every example request at
// every stage, with every text a request can carry (HTML's characters, the line and
// paragraph separators, accents), and the other answers' views and problems.
func TestAnswersEncodeAsEncodingJSON(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "rules", "testdata", "examples", "*.json"))
	if len(files) == 0 {
		t.Fatal("no examples")
	}
	var values []any
	now := time.Date(2026, 11, 26, 19, 5, 7, 123_000_000, time.UTC)
	m := &rules.Merchant{ID: "7", Name: "Tienda <Ñandú> & \u2028co\u2029", Settings: rules.AllSettings()}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		req, err := rules.DecodePayoutRequest(raw)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		req.Description = "pago <b>&</b> \u2028\u2029 \"ñ\" \\ \t"
		route, err := rules.Check(req, m, now, rules.EndpointPayouts)
		if err != nil {
			route = rules.Route{}
		}
		p := rules.NewPayout(m.ID, req, route, now)
		p.ID = 42
		values = append(values, payoutView(p), payoutDetailView(p))
		p.Move(rules.StatusAuthorized, now, "", "")
		p.Move(rules.StatusRejectedBank, now.Add(time.Second), rules.CodeNoBalance, "no <balance> & so on")
		p.Errors = append(p.Errors, &rules.Error{Code: "4099", Message: "Unknown \u2028 Error"})
		values = append(values, payoutView(p), payoutDetailView(p))
	}
	values = append(values,
		merchantView(m),
		KeyViews(&rules.Merchant{ID: "7"}, now),
		entryView(rules.Entry{ID: 3, Type: rules.EntryDebit, Amount: -250000, Available: 1, Balance: 2, At: now, PayoutID: 42, OrderID: "o<1>"}),
		map[string]any{"z": 1, "a": json.Number("1.50"), "m": []any{nil, true, "x\u2028"}, "é": map[string]int{"b": 2, "a": 1}},
		huma.NewError(400, "bad <thing> & \u2029", &huma.ErrorDetail{Message: "m", Location: "body.orderId", Value: "v\u2028"}),
	)
	for i, v := range values {
		var want bytes.Buffer
		if err := huma.DefaultJSONFormat.Marshal(&want, v); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := jsonFormat.Marshal(&got, v); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("value %d (%T):\ngot  %s\nwant %s", i, v, got.Bytes(), want.Bytes())
		}
	}
}
