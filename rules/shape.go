package rules

import (
	"encoding/json"
	"net/url"
	"reflect"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// jsonType is what the generic contract lets a field be on the wire.
type jsonType int

const (
	tString         jsonType = iota
	tNumber                  // any JSON number
	tInteger                 // a JSON number without fraction or exponent
	tStringOrNumber          // accountType, accountNumber, expirationTime
	tObject
)

func (t jsonType) String() string {
	return [...]string{"a string", "a number", "an integer", "a string or a number", "an object"}[t]
}

// format is an extra generic check on a string field's content.
type format int

const (
	fNone format = iota
	fAlpha3
	fURL
	fEmail
)

// field is one row of the generic contract.
type field struct {
	typ         jsonType
	required    bool   // required by the generic contract and by both country rules
	missingCode string // code when required and missing
	maxLen      int    // in characters; 0 is no generic limit
	format      format
	formatCode  string
	typeCode    string           // code of a wrong JSON type; CodeWrongType when empty
	shape       map[string]field // for objects
}

var addressShape = map[string]field{
	"street": {}, "houseNumber": {}, "additionalInfo": {}, "city": {},
	"province": {}, "country": {}, "zipCode": {},
}

// requestShape is the generic contract as data. Fields that the generic contract requires
// but a country rule makes optional (email, bankCode, accountType, accountNumber) are
// required by the country rules instead, with 401.
var requestShape = map[string]field{
	"country":     {typ: tString, required: true, missingCode: CodeCountryRequired, format: fAlpha3, formatCode: CodeCountryFormat},
	"amount":      {typ: tNumber, required: true, missingCode: CodeAmountRequired, typeCode: CodeAmountType},
	"currency":    {typ: tString, required: true, missingCode: CodeCurrencyRequired, format: fAlpha3, formatCode: CodeCurrencyFormat},
	"orderId":     {typ: tString, required: true, missingCode: CodeOrderIDRequired, maxLen: 20},
	"description": {typ: tString, maxLen: 50},
	"beneficiary": {typ: tObject, required: true, missingCode: CodeBeneficiaryRequired, shape: map[string]field{
		"customerId":  {},
		"userName":    {},
		"name":        {typ: tString, required: true, missingCode: CodeNameRequired},
		"lastName":    {typ: tString, required: true, missingCode: CodeLastNameRequired},
		"email":       {typ: tString, format: fEmail, formatCode: CodeEmailFormat},
		"phoneNumber": {},
		"document": {typ: tObject, required: true, missingCode: CodeDocumentRequired, shape: map[string]field{
			"type":   {typ: tInteger, required: true, missingCode: CodeDocumentTypeRequired, typeCode: CodeDocumentTypeType},
			"number": {typ: tString, required: true, missingCode: CodeDocumentNumRequired},
		}},
		"address": {typ: tObject, shape: addressShape},
	}},
	"destination": {typ: tObject, required: true, missingCode: CodeDestinationRequired, shape: map[string]field{
		"bankAccount": {typ: tObject, required: true, missingCode: CodeBankAccountRequired, shape: map[string]field{
			"bankCode":      {typeCode: CodeBankCodeType},
			"accountType":   {typ: tStringOrNumber, typeCode: CodeAccountTypeType},
			"accountNumber": {typ: tStringOrNumber, typeCode: CodeAccountNumberType},
			// A Colombia field of the original, spelt as it publishes it.
			"AdittionalAccountInfo": {typ: tStringOrNumber},
			"clabe":                 {},
			"cbu":                   {},
			"cci":                   {typeCode: CodeCCIType},
			"alias":                 {},
			// Its format (YYYY-MM-DD) is a Colombia cash rule, 1519: the only country that uses it.
			"expirationDate": {},
			"location":       {typ: tObject, shape: addressShape},
		}},
	}},
	"subMerchantInfo": {typ: tObject, shape: map[string]field{
		"code": {}, "name": {}, "url": {},
	}},
	"timeoutUrl":     {format: fURL, formatCode: CodeURLFormat},
	"TimeoutURL":     {format: fURL, formatCode: CodeURLFormat},
	"merchantLogo":   {format: fURL, formatCode: CodeURLFormat},
	"expirationTime": {typ: tStringOrNumber},
}

// checkObject walks one JSON object against its shape, adding a problem for every unknown
// field, wrong type, missing required field and generic limit. Keys are visited in order so
// that the errors come out the same way every time. prefix is the location of obj's fields,
// with its final dot: built in place, so that a valid request's fields cost no allocation
// for their locations (a problem's is a copy).
func checkObject(ps *problems, prefix []byte, obj map[string]any, shape map[string]field) {
	unknown := false
	for k := range obj {
		if _, ok := shape[k]; !ok {
			unknown = true
			break
		}
	}
	if unknown {
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if _, ok := shape[k]; !ok {
				name := k
				if name == "" {
					name = `""` // an empty key still needs a location
				}
				ps.addf(CodeUnknownField, string(prefix)+name, nil, "%q is not a field of the payout request", k)
			}
		}
	}
	for _, name := range sortedNames(shape) {
		f := shape[name]
		v, present := obj[name]
		if !present || v == nil || v == "" {
			if f.required {
				ps.add(f.missingCode, string(prefix)+name, "is required", nil)
			}
			continue
		}
		checkValue(ps, append(prefix, name...), v, f)
	}
}

// shapeNames are the field names of each shape, sorted once: the shapes are fixed tables,
// and checkObject visits them on every request.
var shapeNames sync.Map // the shape map's pointer → []string

func sortedNames(shape map[string]field) []string {
	key := reflect.ValueOf(shape).UnsafePointer()
	if names, ok := shapeNames.Load(key); ok {
		return names.([]string)
	}
	names := make([]string, 0, len(shape))
	for k := range shape {
		names = append(names, k)
	}
	sort.Strings(names)
	shapeNames.Store(key, names)
	return names
}

func checkValue(ps *problems, at []byte, v any, f field) {
	path := func() string { return string(at) } // a problem's location
	typeCode := f.typeCode
	if typeCode == "" {
		typeCode = CodeWrongType
	}
	switch f.typ {
	case tObject:
		o, ok := v.(map[string]any)
		if !ok {
			ps.addf(typeCode, path(), v, "must be %s", f.typ)
			return
		}
		checkObject(ps, append(at, '.'), o, f.shape)
		return
	case tNumber, tInteger:
		n, ok := v.(json.Number)
		if !ok {
			ps.addf(typeCode, path(), v, "must be %s", f.typ)
			return
		}
		if f.typ == tInteger && strings.ContainsAny(n.String(), ".eE") {
			ps.addf(typeCode, path(), n, "must be %s", f.typ)
			return
		}
		if f.typ == tInteger {
			if _, err := n.Int64(); err != nil {
				ps.addf(typeCode, path(), n, "must be %s", f.typ)
			}
			return
		}
		if string(at) == "amount" {
			if x, err := n.Float64(); err != nil || x <= 0 {
				ps.add(CodeAmountFormat, path(), "must be a positive number", n)
			}
		}
		return
	case tStringOrNumber:
		switch v.(type) {
		case string, json.Number:
		default:
			ps.addf(typeCode, path(), v, "must be %s", f.typ)
		}
		return
	}
	s, ok := v.(string)
	if !ok {
		ps.addf(typeCode, path(), v, "must be %s", f.typ)
		return
	}
	if f.maxLen > 0 && utf8.RuneCountInString(s) > f.maxLen {
		ps.addf(CodeTooLong, path(), s, "must be at most %d characters", f.maxLen)
	}
	if !formatOK(f.format, strings.TrimSpace(s)) {
		ps.add(f.formatCode, path(), formatMessage[f.format], s)
	}
}

var formatMessage = map[format]string{
	fAlpha3: "must be 3 letters",
	fURL:    "must be an absolute http or https URL",
	fEmail:  "must be an email address",
}

func formatOK(f format, s string) bool {
	switch f {
	case fAlpha3:
		if len(s) != 3 {
			return false
		}
		for _, c := range s {
			if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
				return false
			}
		}
	case fURL:
		u, err := url.Parse(s)
		return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
	case fEmail:
		return bareAddress(s)
	}
	return true
}

// prune drops from obj what the shape check refused (unknown fields, values of the wrong JSON
// type), so that the rest decodes and the country rules can still be checked (every
// error of a request is reported together).
func prune(obj map[string]any, shape map[string]field) {
	for k, v := range obj {
		f, ok := shape[k]
		if !ok || v == nil {
			delete(obj, k)
			continue
		}
		switch f.typ {
		case tObject:
			o, ok := v.(map[string]any)
			if !ok {
				delete(obj, k)
				continue
			}
			prune(o, f.shape)
		case tNumber:
			if _, ok := v.(json.Number); !ok {
				delete(obj, k)
			}
		case tInteger:
			n, ok := v.(json.Number)
			if _, err := n.Int64(); !ok || err != nil || strings.ContainsAny(n.String(), ".eE") {
				delete(obj, k)
			}
		case tStringOrNumber:
			switch v.(type) {
			case string, json.Number:
			default:
				delete(obj, k)
			}
		default:
			if _, ok := v.(string); !ok {
				delete(obj, k)
			}
		}
	}
}
