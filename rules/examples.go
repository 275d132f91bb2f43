package rules

import (
	"embed"
	"encoding/json"
	"path"
	"sort"
	"strings"
)

// The README's request per destination, also the OpenAPI document's named request
// examples: one file each, valid for a merchant with every product on.
//
//go:embed testdata/examples/*.json
var examples embed.FS

// Example is one request of testdata/examples: Name is the file's name without .json.
type Example struct {
	Name string
	Body []byte
	// Card is a Peru card push payment (accountType 5): it goes to the card endpoint.
	Card bool
}

// Examples lists the example requests by name.
func Examples() []Example {
	entries, _ := examples.ReadDir("testdata/examples")
	var out []Example
	for _, e := range entries {
		b, err := examples.ReadFile(path.Join("testdata/examples", e.Name()))
		if err != nil {
			continue
		}
		var req PayoutRequest
		if err := json.Unmarshal(b, &req); err != nil {
			continue
		}
		out = append(out, Example{Name: strings.TrimSuffix(e.Name(), ".json"), Body: b,
			Card: req.Country == "PER" && req.Destination.BankAccount.AccountType == "5"})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
