package api

// The document's JSON is made once per distinct document in the process, not once per
// server: a test process starts a hundred servers whose documents differ at most in their
// servers entry and in the features their flags turn on, and huma's encoding (each nested
// object compacted again by every object around it) took a sixth of its CPU. A server
// started from its flags makes it once, as before.

import (
	"bytes"
	"crypto/sha256"
	"encoding"
	"encoding/binary"
	"encoding/json"
	"math"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/danielgtaylor/huma/v2"
)

// documents maps a document's fingerprint (without its servers) to its JSON: whole for a
// document without servers, cut around its servers entry for one with.
var documents sync.Map

type madeKey struct {
	fingerprint [32]byte
	servers     bool
}

type madeDocument struct {
	before []byte // the JSON, or what comes before `,"servers":[…]`
	after  []byte // what comes after it
}

// documentHandler serves o's JSON, made at the first request.
func documentHandler(o *huma.OpenAPI) http.HandlerFunc {
	body := sync.OnceValues(func() ([]byte, error) { return DocumentJSON(o) })
	return func(w http.ResponseWriter, r *http.Request) {
		b, err := body()
		if err != nil {
			writeProblem(w, internalProblem())
			return
		}
		w.Header().Set("Content-Type", "application/openapi+json")
		w.Write(b)
	}
}

// DocumentJSON is json.Marshal(o), byte for byte, from the JSON of an equal document
// (servers aside) when the process has made one.
func DocumentJSON(o *huma.OpenAPI) ([]byte, error) {
	key, ok := fingerprint(o)
	if !ok {
		return json.Marshal(o)
	}
	servers, err := serversEntry(o.Servers)
	if err != nil {
		return nil, err
	}
	if d, found := documents.Load(madeKey{key, len(servers) > 0}); found {
		made := d.(*madeDocument)
		return slices.Concat(made.before, servers, made.after), nil
	}
	b, err := json.Marshal(o)
	if err != nil {
		return nil, err
	}
	switch {
	case len(servers) == 0:
		documents.Store(madeKey{key, false}, &madeDocument{before: b})
	case bytes.Count(b, servers) == 1:
		// Cut where the entry is the one occurrence of its text: the top-level keys are
		// sorted, and "servers" follows "openapi", so a comma always precedes it.
		i := bytes.Index(b, servers)
		documents.Store(madeKey{key, true}, &madeDocument{before: b[:i:i], after: b[i+len(servers):]})
	}
	return b, nil
}

// serversEntry is the servers entry as huma writes it in the document, with its leading
// comma; none for no servers.
func serversEntry(servers []*huma.Server) ([]byte, error) {
	if len(servers) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(servers)
	if err != nil {
		return nil, err
	}
	return slices.Concat([]byte(`,"servers":`), b), nil
}

// fingerprint digests everything o's JSON is made of but its servers: of huma's types
// every field but functions, unexported ones included (a schema's hidden properties, its
// yaml:"-" Nullable), whatever their encoding reads of them; the schema registry's schemas;
// of other types their own JSON or text encoding, else the exported fields encoding/json
// reads. Equal fingerprints: equal documents. false: o holds what it cannot digest (a
// channel, say).
func fingerprint(o *huma.OpenAPI) ([32]byte, bool) {
	f := &fingerprinter{ok: true, buf: make([]byte, 0, 1<<20), plans: map[reflect.Type]*plan{}}
	top := *o
	top.Servers = nil
	f.value(reflect.ValueOf(&top), 0)
	return sha256.Sum256(f.buf), f.ok
}

type fingerprinter struct {
	buf []byte
	ok  bool
	// plans holds the plans this walk has used: the shared map's every lookup costs atomic
	// reads, which the race detector makes the walk's largest cost.
	plans map[reflect.Type]*plan
}

func (f *fingerprinter) bytes(tag byte, b []byte) {
	f.buf = append(binary.AppendUvarint(append(f.buf, tag), uint64(len(b))), b...)
}

func (f *fingerprinter) str(tag byte, s string) {
	f.buf = append(binary.AppendUvarint(append(f.buf, tag), uint64(len(s))), s...)
}

func (f *fingerprinter) num(tag byte, n uint64) {
	f.buf = binary.AppendUvarint(append(f.buf, tag), n)
}

// A plan is how the fingerprint reads values of one type, worked out once per type.
type plan struct {
	id     uint64 // the type, in the digest
	how    int
	fields []int // a struct's fields read
}

const (
	asRegistry = iota
	asJSON
	asJSONAddr
	asText
	asTextAddr
	asPointer
	asStruct
	asMap
	asList
	asString
	asBool
	asInt
	asUint
	asFloat
	asUnknown
)

var (
	plans             sync.Map // reflect.Type → *plan
	planCount         atomic.Uint64
	registryType      = reflect.TypeFor[huma.Registry]()
	jsonMarshalerType = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	humaPackage       = reflect.TypeFor[huma.OpenAPI]().PkgPath()
)

func planOf(t reflect.Type) *plan {
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	p := &plan{id: planCount.Add(1), how: asUnknown}
	ptr := reflect.PointerTo(t)
	notHuma := named(t).PkgPath() != humaPackage
	switch {
	case t.Implements(registryType):
		p.how = asRegistry
	case notHuma && t.Implements(jsonMarshalerType):
		p.how = asJSON
	case notHuma && t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface && ptr.Implements(jsonMarshalerType):
		p.how = asJSONAddr // encoding/json calls a pointer's method on what it can address
	case notHuma && t.Implements(textMarshalerType):
		p.how = asText
	case notHuma && t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface && ptr.Implements(textMarshalerType):
		p.how = asTextAddr
	default:
		switch t.Kind() {
		case reflect.Pointer, reflect.Interface:
			p.how = asPointer
		case reflect.Struct:
			p.how = asStruct
		case reflect.Map:
			if t.Key().Kind() == reflect.String {
				p.how = asMap
			}
		case reflect.Slice, reflect.Array:
			p.how = asList
		case reflect.String:
			p.how = asString
		case reflect.Bool:
			p.how = asBool
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			p.how = asInt
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			p.how = asUint
		case reflect.Float32, reflect.Float64:
			p.how = asFloat
		}
	}
	if t.Kind() == reflect.Struct { // also for a marshaler's value that cannot be addressed
		huma := t.PkgPath() == humaPackage
		for i := range t.NumField() {
			sf := t.Field(i)
			if huma && (sf.Type.Kind() == reflect.Func || (sf.Type.Kind() == reflect.Slice && sf.Type.Elem().Kind() == reflect.Func)) {
				continue // middleware and hooks: no part of the document
			}
			if !huma && (!sf.IsExported() || sf.Tag.Get("json") == "-") {
				continue // what encoding/json does not read
			}
			p.fields = append(p.fields, i)
		}
	}
	actual, _ := plans.LoadOrStore(t, p)
	return actual.(*plan)
}

func (f *fingerprinter) value(v reflect.Value, depth int) {
	if !f.ok {
		return
	}
	if depth > 200 { // a cycle: huma's encoding would not end either
		f.ok = false
		return
	}
	if !v.IsValid() {
		f.num('0', 0)
		return
	}
	t := v.Type()
	p := f.plans[t]
	if p == nil {
		p = planOf(t)
		f.plans[t] = p
	}
	f.num('t', p.id)
	if k := v.Kind(); (k == reflect.Pointer || k == reflect.Interface || k == reflect.Map || k == reflect.Slice) && v.IsNil() {
		f.num('n', 0)
		return
	}
	switch p.how {
	case asRegistry, asJSON, asJSONAddr, asText, asTextAddr:
		if !v.CanInterface() { // reached through a field of huma's own (a schema's compiled pattern)
			break
		}
		m := v
		if p.how == asJSONAddr || p.how == asTextAddr {
			if !v.CanAddr() {
				break // as encoding/json: the value's own fields
			}
			m = v.Addr()
		}
		var b []byte
		var err error
		switch x := m.Interface().(type) {
		case huma.Registry:
			f.value(reflect.ValueOf(x.Map()), depth+1)
			return
		case json.Marshaler:
			b, err = x.MarshalJSON()
		case encoding.TextMarshaler:
			b, err = x.MarshalText()
		}
		f.ok = f.ok && err == nil
		f.bytes('j', b)
		return
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		f.value(v.Elem(), depth+1)
	case reflect.Struct:
		for _, i := range p.fields {
			f.num('f', uint64(i))
			f.value(v.Field(i), depth+1)
		}
	case reflect.Map:
		if p.how != asMap {
			f.ok = false
			return
		}
		type entry struct {
			key   string
			value reflect.Value
		}
		entries := make([]entry, 0, v.Len())
		for it := v.MapRange(); it.Next(); {
			entries = append(entries, entry{it.Key().String(), it.Value()})
		}
		slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.key, b.key) })
		f.num('l', uint64(len(entries)))
		for _, e := range entries {
			f.str('k', e.key)
			f.value(e.value, depth+1)
		}
	case reflect.Slice, reflect.Array:
		f.num('l', uint64(v.Len()))
		for i := range v.Len() {
			f.value(v.Index(i), depth+1)
		}
	case reflect.String:
		f.str('S', v.String())
	case reflect.Bool:
		if v.Bool() {
			f.num('b', 1)
		} else {
			f.num('b', 0)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		f.num('I', uint64(v.Int()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		f.num('U', v.Uint())
	case reflect.Float32, reflect.Float64:
		f.num('D', math.Float64bits(v.Float()))
	default: // channels, functions in a map or a slice, complex numbers, unsafe pointers
		f.ok = false
	}
}

// named is t's named type under its pointers.
func named(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}
