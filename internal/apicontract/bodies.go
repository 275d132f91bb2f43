package apicontract

import (
	"bytes"
	"fmt"
	"mime"
	"strconv"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// bodies validates JSON bodies against the document's schemas, each compiled once. The
// schemas are compiled from the document as served (its JSON, with its references), at the
// place the operation's body stands: kin-openapi compiles a body's schema again for every
// body it validates, a third of the CPU of the tests that check every answer.
type bodies struct {
	// mu guards the compiler and the map, and is held only to compile: a compiled schema
	// validates concurrently.
	mu       sync.Mutex
	compiler *jsonschema.Compiler
	compiled map[string]*jsonschema.Schema
	raw      any // the document, decoded as jsonschema decodes
}

// docURL names the document for the compiler: a URL nothing is loaded from.
const docURL = "https://served.invalid/openapi.json"

func newBodies(raw []byte) (*bodies, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	// The formats the document declares are held too (a uri, a date-time, an email): a
	// generated client may check them, and a value the server accepts or answers must pass.
	c.AssertFormat()
	if err := c.AddResource(docURL, doc); err != nil {
		return nil, err
	}
	return &bodies{compiler: c, compiled: map[string]*jsonschema.Schema{}, raw: doc}, nil
}

// at is the schema at the document's location path (JSON pointer tokens, unescaped), each
// $ref met on the way followed: nil when the location holds no schema.
func (b *bodies) at(path ...string) (*jsonschema.Schema, error) {
	ptr, ok := b.resolve(path)
	if !ok {
		return nil, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if s := b.compiled[ptr]; s != nil {
		return s, nil
	}
	s, err := b.compiler.Compile(docURL + "#" + ptr)
	if err != nil {
		return nil, err
	}
	b.compiled[ptr] = s
	return s, nil
}

// resolve is the JSON pointer of path in the document, through the references (to
// components: "#/…") an operation's responses and bodies may be.
func (b *bodies) resolve(path []string) (string, bool) {
	var ptr strings.Builder
	node := b.raw
	for _, tok := range path {
		if m, ok := node.(map[string]any); ok {
			if ref, ok := m["$ref"].(string); ok && strings.HasPrefix(ref, "#/") {
				ptr.Reset()
				ptr.WriteString(ref[1:])
				node = b.pointed(ref[2:])
			}
		}
		m, ok := node.(map[string]any)
		if !ok || m[tok] == nil {
			return "", false
		}
		node = m[tok]
		ptr.WriteString("/" + escapeToken.Replace(tok))
	}
	return ptr.String(), true
}

// A JSON pointer's token escapes "~" and "/" (RFC 6901).
var (
	escapeToken   = strings.NewReplacer("~", "~0", "/", "~1")
	unescapeToken = strings.NewReplacer("~1", "/", "~0", "~")
)

// pointed is the document's node at ptr (a JSON pointer without its leading "/").
func (b *bodies) pointed(ptr string) any {
	node := b.raw
	for _, tok := range strings.Split(ptr, "/") {
		m, ok := node.(map[string]any)
		if !ok {
			return nil
		}
		node = m[unescapeToken.Replace(tok)]
	}
	return node
}

// check validates body, sent or answered as contentType, against the content declared at
// path (…/content): what is wrong, one line each.
func (b *bodies) check(content openapi3.Content, contentType string, body []byte, path ...string) []string {
	if len(content) == 0 {
		return nil
	}
	declared := content.Get(contentType)
	if declared == nil {
		return []string{fmt.Sprintf("the content type %q is not declared", contentType)}
	}
	key := ""
	for k, mt := range content {
		if mt == declared {
			key = k
		}
	}
	mediaType, _, _ := mime.ParseMediaType(contentType)
	if !strings.HasSuffix(mediaType, "json") || declared.Schema == nil {
		return nil // the card form's page, a CSV statement: declared as text
	}
	schema, err := b.at(append(path, key, "schema")...)
	if err != nil {
		return []string{fmt.Sprintf("the declared schema does not compile: %v", err)}
	} else if schema == nil {
		return []string{"the declared schema is not where the document's operation says"}
	}
	value, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return []string{"the body is not JSON: " + err.Error()}
	}
	return schemaProblems(schema.Validate(value))
}

// schemaProblems is each leaf of a schema's refusal, with where in the body it is.
func schemaProblems(err error) []string {
	if err == nil {
		return nil
	}
	verr, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return []string{err.Error()}
	}
	var out []string
	for _, u := range verr.BasicOutput().Errors {
		if u.Error != nil && !strings.HasPrefix(u.Error.String(), "validation failed") {
			out = append(out, "at "+strconv.Quote("/"+strings.TrimPrefix(u.InstanceLocation, "/"))+": "+u.Error.String())
		}
	}
	if len(out) == 0 {
		out = append(out, strings.Join(strings.Fields(err.Error()), " "))
	}
	return out
}
