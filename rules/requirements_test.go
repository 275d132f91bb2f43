// The requirements schema (rules/requirements) against the rule table: these tests stay
// beside the table's rows (country_test.go, published_test.go) and the example bodies, in
// the external test package, which may import the generator that rules itself may not.
package rules_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"payouts/rules"
	"payouts/rules/requirements"
)

// compileRequirements compiles a requirements schema with a JSON Schema 2020-12 validator.
func compileRequirements(t *testing.T, s requirements.Schema) *jsonschema.Schema {
	t.Helper()
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if sch := compiled[string(raw)]; sch != nil {
		return sch
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("requirements.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("requirements.json")
	if err != nil {
		t.Fatalf("the requirements are no valid JSON Schema: %v", err)
	}
	compiled[string(raw)] = sch
	return sch
}

// compiled caches the schemas by their JSON: many rows share one.
var compiled = map[string]*jsonschema.Schema{}

// answer is what requirements.For answered a query, with its schema compiled.
type answer struct {
	schema   requirements.Schema
	compiled *jsonschema.Schema
	err      error
}

// answers caches requirements.For by its arguments: the rule table's rows ask the same few
// dozen questions hundreds of times, and making each schema again, encoding it to find it in
// compiled, was most of these tests' time (several times that under the race detector).
var answers = map[string]answer{}

// requirementsFor is requirements.For with its schema compiled, asked once per query,
// merchant (For reads its ID and settings) and time.
func requirementsFor(t *testing.T, q requirements.Query, m *rules.Merchant, now time.Time) (requirements.Schema, *jsonschema.Schema, error) {
	t.Helper()
	key := fmt.Sprintf("%+v|%s|%+v|%s", q, m.ID, m.Settings, now.Format(time.RFC3339Nano))
	if a, ok := answers[key]; ok {
		return a.schema, a.compiled, a.err
	}
	s, err := requirements.For(q, m, now)
	a := answer{schema: s, err: err}
	if err == nil {
		a.compiled = compileRequirements(t, s)
	}
	answers[key] = a
	return a.schema, a.compiled, a.err
}

func schemaAccepts(t *testing.T, sch *jsonschema.Schema, body []byte) error {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return sch.Validate(inst)
}

// exampleQuery is the destination of a body, as a requirements query.
func exampleQuery(t *testing.T, body []byte, ep rules.Endpoint) requirements.Query {
	t.Helper()
	req, err := rules.DecodePayoutRequest(body)
	if err != nil {
		t.Fatal(err)
	}
	ba := req.Destination.BankAccount
	return requirements.Query{Country: req.Country, AccountType: string(ba.AccountType), BankCode: ba.BankCode, Currency: req.Currency, Endpoint: ep}
}

// Every example body (rules/testdata/examples) passes its country's schema and the schema of
// its own destination, for a merchant with every setting on.
func TestRequirementsExamplesValidate(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "examples", "*.json"))
	if len(files) == 0 {
		t.Fatal("no examples")
	}
	m := &rules.Merchant{ID: "1", Settings: rules.AllSettings()}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			body, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			ep := rules.EndpointPayouts
			if strings.Contains(f, "card") {
				ep = rules.EndpointCard
			}
			own := exampleQuery(t, body, ep)
			for _, q := range []requirements.Query{{Endpoint: ep}, {Country: own.Country, Endpoint: ep}, own} {
				_, sch, err := requirementsFor(t, q, m, checkNow)
				if err != nil {
					t.Fatalf("Requirements(%+v): %v", q, err)
				}
				if err := schemaAccepts(t, sch, body); err != nil {
					t.Errorf("query %+v refuses the example: %v", q, err)
				}
			}
		})
	}
}

// inexpressibleCodes are the validator's refusals that JSON Schema cannot say, with why. A
// refused row whose codes are all here may pass the schema; every other refused row of the
// rule table must be refused by it.
var inexpressibleCodes = map[string]string{
	rules.CodeAdditionalEquals: "AdittionalAccountInfo must differ from accountNumber: JSON Schema cannot compare two fields",
}

// inexpressibleRows are rows refused for what JSON Schema cannot say, by name, with why.
var inexpressibleRows = map[string]string{
	"2.4 COL amount is an integer: fraction refused": integralNumber,
	"2.4 COL amount is an integer: exponent refused": integralNumber,
	"2.5 1103 PER amount with an exponent refused":   integralNumber,
	"2.4 COL accountType 2.0 refused":                integralNumber,
}

// integralNumber: JSON Schema compares numbers by value, so 150000.00 and 1.5e5 are integers
// to it; the rules want the digits written without fraction or exponent.
const integralNumber = "JSON Schema sees 150000.00 and 1.5e7 as the integers they equal; the rules refuse how they are written"

// The schema against the rule table (rules/country_test.go, published_test.go): for each
// row's merchant, clock and endpoint, the schema of its country, and the schema of its own
// destination, accept every accepted row and refuse every refused row that JSON Schema can
// express; and what failed in the schema carries (x-code, x-required-codes, x-type-code,
// x-additional-code) one of the codes the validator answers for the row.
func TestRequirementsAgainstTheRuleTable(t *testing.T) {
	var accepted, refused, skipped, named int
	var misnamed []string
	for _, tc := range append(countryRows(), publishedRows()...) {
		body := rowBody(t, tc)
		now := tc.now
		if now.IsZero() {
			now = checkNow
		}
		m := &rules.Merchant{ID: "1", Settings: tc.set}
		country := ""
		if tc.req.Country == "COL" || tc.req.Country == "PER" {
			country = tc.req.Country
		}
		why := inexpressibleRows[tc.name]
		if why == "" && tc.errs != nil {
			all := true
			var whys []string
			for _, e := range tc.errs {
				w, ok := inexpressibleCodes[e.code]
				all = all && ok
				whys = append(whys, w)
			}
			if all {
				why = strings.Join(whys, "; ")
			}
		}
		queries := []requirements.Query{{Country: country, Endpoint: tc.ep}}
		ba := tc.req.Destination.BankAccount
		queries = append(queries, requirements.Query{Country: country, AccountType: string(ba.AccountType), BankCode: ba.BankCode, Currency: tc.req.Currency, Endpoint: tc.ep})
		for qi, q := range queries {
			s, sch, err := requirementsFor(t, q, m, now)
			var p *rules.Problem
			if err != nil && !errors.As(err, &p) {
				t.Fatalf("%s: Requirements(%+v): %v", tc.name, q, err)
			}
			if err != nil {
				if tc.errs == nil && qi == 0 {
					t.Errorf("%s: accepted by the rules, but its country's requirements answer %v", tc.name, err)
				}
				if qi == 0 {
					refused++ // no schema: no body passes
				}
				continue
			}
			verr := schemaAccepts(t, sch, body)
			switch {
			case tc.errs == nil && verr != nil:
				t.Errorf("%s (query %+v): accepted by the rules, refused by the schema: %v", tc.name, q, verr)
			case tc.errs != nil && verr == nil && why == "":
				t.Errorf("%s (query %+v): refused by the rules (%v), accepted by the schema", tc.name, q, tc.errs)
			case tc.errs != nil && verr != nil && why != "" && qi == 0 && inexpressibleRows[tc.name] != "":
				t.Errorf("%s: listed as inexpressible (%s), but the schema refuses it: take it off the list", tc.name, why)
			}
			if tc.errs != nil && verr != nil {
				got := schemaCodes(any(s), verr)
				want := false
				for _, e := range tc.errs {
					want = want || slices.Contains(got, e.code)
				}
				if want {
					named++
				} else {
					misnamed = append(misnamed, fmt.Sprintf("%s (query %d): rules %v, schema %v", tc.name, qi, tc.errs, got))
				}
			}
			if qi == 0 {
				switch {
				case tc.errs == nil:
					accepted++
				case verr != nil:
					refused++
				default:
					skipped++
				}
			}
		}
	}
	if accepted < 150 || refused < 250 {
		t.Errorf("the rule table shrank? %d accepted, %d refused rows", accepted, refused)
	}
	for _, m := range misnamed {
		t.Error("the schema refuses, but names none of the rules' codes: " + m)
	}
	t.Logf("codes: %d refusals name one of the row's codes in x-code, %d do not", named, len(misnamed))
	t.Logf("rule table: %d accepted rows pass the schema, %d refused rows are refused by it, %d refused rows JSON Schema cannot express", accepted, refused, skipped)
}

// schemaCodes are the codes the schema's annotations give for what failed: x-code of the
// failing constraint (or of the rule around it), x-required-codes of a missing field,
// x-type-code and x-additional-code.
func schemaCodes(doc any, verr error) []string {
	var ve *jsonschema.ValidationError
	if !errors.As(verr, &ve) {
		return nil
	}
	var codes []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		_, frag, _ := strings.Cut(e.SchemaURL, "#")
		var chain []map[string]any
		cur := doc
		if m, ok := cur.(map[string]any); ok {
			chain = append(chain, m)
		}
		for _, tok := range strings.Split(strings.TrimPrefix(frag, "/"), "/") {
			if tok == "" {
				continue
			}
			tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
			switch x := cur.(type) {
			case map[string]any:
				cur = x[tok]
			case []any:
				i, _ := strconv.Atoi(tok)
				if i < len(x) {
					cur = x[i]
				}
			}
			if m, ok := cur.(map[string]any); ok {
				chain = append(chain, m)
			}
		}
		if len(chain) == 0 {
			return
		}
		here := chain[len(chain)-1]
		kw := e.ErrorKind.KeywordPath()
		switch {
		case len(kw) > 0 && kw[0] == "required":
			if rc, ok := here["x-required-codes"].(map[string]any); ok {
				r, _ := e.ErrorKind.(*kind.Required)
				for _, name := range r.Missing {
					codes = append(codes, fmt.Sprint(rc[name]))
				}
				return
			} // else a required inside a rule: the rule's code, below
		case len(kw) > 0 && kw[0] == "additionalProperties":
			codes = append(codes, fmt.Sprint(here["x-additional-code"]))
			return
		case len(kw) > 0 && kw[0] == "type" && here["x-type-code"] != nil:
			codes = append(codes, fmt.Sprint(here["x-type-code"]))
			return
		}
		for i := len(chain) - 1; i >= 0; i-- {
			if c, ok := chain[i]["x-code"]; ok {
				codes = append(codes, fmt.Sprint(c))
				return
			}
		}
	}
	walk(ve)
	return codes
}
