package rules

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzRequestOfIsTheJSONDecode: whatever body decode accepts, its typed request is the one
// encoding/json makes of the body (normalized the same way), although decode parses the
// body once. As a test it runs its seeds: every example, and the bodies below.
func FuzzRequestOfIsTheJSONDecode(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "examples", "*.json"))
	if len(files) == 0 {
		f.Fatal("no examples")
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	base := `"country":"PER","amount":100000,"currency":"PEN","orderId":"o-1","beneficiary":{"name":"Ana","lastName":"Q","document":{"type":1,"number":" 45678912 "}`
	for _, s := range []string{
		`{` + base + `},"destination":{"bankAccount":{"bankCode":"002","accountType":2,"accountNumber":19312345678012}}}`,
		`{` + base + `,"address":{"street":"Av","zipCode":null}},"destination":{"bankAccount":{"accountType":"2","location":{"city":"Lima"}}},"subMerchantInfo":{"code":"c"}}`,
		`{` + base + `,"address":null,"email":null},"destination":{"bankAccount":{"AdittionalAccountInfo":3001234567,"expirationDate":"2026-12-01"}},"expirationTime":15,"TimeoutURL":"https://shop.example/t"}`,
		`{` + base + `},"destination":{"bankAccount":{}},"expirationTime":"15","timeoutUrl":"https://shop.example/t","merchantLogo":"https://shop.example/l.png","description":"d"}`,
		`{"country":" per ","amount":1.5e3,"currency":"pen","orderId":"x","beneficiary":{"name":"a","lastName":"b","document":{"type":6,"number":"1"}},"destination":{"bankAccount":{"cci":" 0021 "}},"subMerchantInfo":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, _, err := decode(body)
		if err != nil {
			return
		}
		var want PayoutRequest
		if err := json.Unmarshal(body, &want); err != nil {
			t.Fatalf("decode accepted %q, which encoding/json refuses: %v", body, err)
		}
		var alias struct {
			TimeoutURL *string `json:"TimeoutURL"`
			Lower      *string `json:"timeoutUrl"`
		}
		// encoding/json matches keys without case, so each spelling lands in TimeoutURL and
		// the last one wins; decode takes timeoutUrl first, whatever the order.
		if json.Unmarshal(body, &alias) == nil && alias.Lower != nil && *alias.Lower != "" {
			want.TimeoutURL = *alias.Lower
		}
		want.normalize()
		if !reflect.DeepEqual(*got, want) {
			t.Errorf("body %s\ndecode       %+v\nencoding/json %+v", body, *got, want)
		}
	})
}
