package servertest

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Requirements fetches GET requirements with query and compiles it with a JSON Schema
// validator, as a merchant's code would; it returns the schema compiled, decoded and as
// answered.
func (c *Merchant) Requirements(t testing.TB, query string) (*jsonschema.Schema, map[string]any, []byte) {
	t.Helper()
	code, hdr, raw := c.Do(t, "GET", "requirements", nil, query)
	if code != 200 {
		t.Fatalf("GET requirements?%s: %d %s", query, code, raw)
	}
	if ct := hdr.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q", ct)
	}
	var m map[string]any
	json.Unmarshal(raw, &m)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	comp := jsonschema.NewCompiler()
	if err := comp.AddResource("requirements.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := comp.Compile("requirements.json")
	if err != nil {
		t.Fatalf("requirements?%s is no valid JSON Schema: %v", query, err)
	}
	return sch, m, raw
}

// Validates says why body does not validate against sch (nil: it does).
func Validates(t testing.TB, sch *jsonschema.Schema, body any) error {
	t.Helper()
	raw, _ := json.Marshal(body)
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return sch.Validate(inst)
}
