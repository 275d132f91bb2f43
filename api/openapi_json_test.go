package api

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"
)

// TestDocumentJSONIsHumasEncoding: the document served is json.Marshal's of the document
// byte for byte, whether made for the first server of its kind or from the JSON of an
// equal document with other servers (or none); documents that differ in a feature, a
// description, or a schema's hidden-to-YAML nullability are told apart.
func TestDocumentJSONIsHumasEncoding(t *testing.T) {
	doc := func(d Deps) *huma.OpenAPI {
		_, a := New(d)
		return a.OpenAPI()
	}
	same := func(name string, o *huma.OpenAPI) {
		t.Helper()
		got, err := DocumentJSON(o)
		want, err2 := json.Marshal(o)
		if err != nil || err2 != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: served %d bytes (%v), huma's encoding %d bytes (%v): not the same", name, len(got), err, len(want), err2)
		}
	}
	key := func(o *huma.OpenAPI) [32]byte {
		t.Helper()
		k, ok := fingerprint(o)
		if !ok {
			t.Fatal("the document has no fingerprint")
		}
		return k
	}
	first, second, none := doc(Deps{PublicURL: "http://127.0.0.1:1"}), doc(Deps{PublicURL: "http://127.0.0.1:2"}), doc(Deps{})
	if key(first) != key(second) || key(first) != key(none) {
		t.Fatal("documents that differ in their servers only have different fingerprints")
	}
	same("the first", first)
	same("another server's", second)
	same("no servers", none)
	same("another without servers", doc(Deps{}))
	same("the first again", first)
	for _, servers := range []bool{true, false} {
		if _, made := documents.Load(madeKey{key(first), servers}); !made {
			t.Errorf("servers %v: the document's JSON was not kept for the next", servers)
		}
	}

	withNow := doc(Deps{PublicURL: "http://127.0.0.1:1", Now: time.Now})
	if key(withNow) == key(first) {
		t.Error("a document with more operations has the same fingerprint")
	}
	same("more operations", withNow)

	before := key(first)
	first.Info.Description += " Changed."
	if key(first) == before {
		t.Error("a changed description has the same fingerprint")
	}
	same("a changed description", first)
	for _, s := range first.Components.Schemas.Map() {
		if s.Type == "string" || len(s.Properties) == 0 {
			continue
		}
		for _, p := range s.Properties {
			before := key(first)
			p.Nullable = !p.Nullable
			if key(first) == before {
				t.Error("a property's nullability changed, the fingerprint did not")
			}
			same("a changed nullability", first)
			return
		}
	}
	t.Error("no schema with properties")
}

// TestCreatePayoutReplayShowsItsOwnAnswer: the replay's 200 and the creation's 201 each
// show their own captured answer (they shared one media type, and so whichever example was
// added last, different from one server to the next).
func TestCreatePayoutReplayShowsItsOwnAnswer(t *testing.T) {
	_, a := New(Deps{})
	var op *huma.Operation
	for _, item := range a.OpenAPI().Paths {
		if item.Post != nil && item.Post.OperationID == "create-payout" {
			op = item.Post
		}
	}
	if op == nil {
		t.Fatal("no create-payout operation")
	}
	for _, status := range []string{"200", "201"} {
		want, err := answers.ReadFile("examples/create-payout." + status + ".json")
		if err != nil {
			t.Fatal(err)
		}
		r := op.Responses[status]
		if r == nil || r.Content["application/json"] == nil || r.Content["application/json"].Examples["answer"] == nil {
			t.Fatalf("%s: no answer example", status)
		}
		if got, _ := r.Content["application/json"].Examples["answer"].Value.(json.RawMessage); !bytes.Equal(got, want) {
			t.Errorf("%s shows the answer:\n%s\nwant examples/create-payout.%s.json:\n%s", status, got, status, want)
		}
	}
}
