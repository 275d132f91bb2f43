package rules

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// PayoutRequest is the body of the create operation, field names exactly as the
// specification writes them. Fields whose JSON type the specification leaves open keep
// their text (Text), and the country rules read them.
type PayoutRequest struct {
	Country         string           `json:"country" doc:"ISO 3166-1 alpha-3: COL or PER" example:"PER"`
	Amount          json.Number      `json:"amount" doc:"Integer minor units; the last two digits are decimals (100000 = 1,000.00)"`
	Currency        string           `json:"currency" doc:"ISO 4217: COP, PEN or USD" example:"PEN"`
	OrderID         string           `json:"orderId" doc:"The merchant's unique payout id, at most 20 characters" example:"ORD-1"`
	Description     string           `json:"description,omitempty" doc:"At most 50 characters"`
	Beneficiary     Beneficiary      `json:"beneficiary"`
	Destination     Destination      `json:"destination"`
	SubMerchantInfo *SubMerchantInfo `json:"subMerchantInfo,omitempty"`
	TimeoutURL      string           `json:"timeoutUrl,omitempty" doc:"Peru card: where the user goes on a time-out (also accepted as TimeoutURL)"`
	MerchantLogo    string           `json:"merchantLogo,omitempty" doc:"Peru card: https URL of a 187x40 logo"`
	ExpirationTime  Text             `json:"expirationTime,omitempty" doc:"Peru card: session length in minutes, 5 to 30 (default 15)"`
}

// Beneficiary is the request's beneficiary.
type Beneficiary struct {
	CustomerID  string   `json:"customerId,omitempty"`
	UserName    string   `json:"userName,omitempty"`
	Name        string   `json:"name"`
	LastName    string   `json:"lastName"`
	Email       string   `json:"email,omitempty"`
	PhoneNumber string   `json:"phoneNumber,omitempty"`
	Document    Document `json:"document"`
	Address     *Address `json:"address,omitempty"`
}

// Document identifies the beneficiary; Type is a numeric code of the country's table.
type Document struct {
	Type   int    `json:"type"`
	Number string `json:"number"`
}

// Address is the shape of beneficiary.address and destination.bankAccount.location.
type Address struct {
	Street         string `json:"street,omitempty"`
	HouseNumber    string `json:"houseNumber,omitempty"`
	AdditionalInfo string `json:"additionalInfo,omitempty"`
	City           string `json:"city,omitempty"`
	Province       string `json:"province,omitempty"`
	Country        string `json:"country,omitempty"`
	ZipCode        string `json:"zipCode,omitempty"`
}

// Destination is the request's destination.
type Destination struct {
	BankAccount BankAccount `json:"bankAccount"`
}

// BankAccount is the request's destination.bankAccount.
type BankAccount struct {
	BankCode      string `json:"bankCode,omitempty"`
	AccountType   Text   `json:"accountType,omitempty" doc:"Numeric code (or, in Colombia, its text form)"`
	AccountNumber Text   `json:"accountNumber,omitempty"`
	CLABE         string `json:"clabe,omitempty"`
	CBU           string `json:"cbu,omitempty"`
	CCI           string `json:"cci,omitempty"`
	// AdittionalAccountInfo (sic: the original's spelling) is, in Colombia, a cellphone
	// number given alongside a bank account, or a bank account alongside a cellphone.
	AdittionalAccountInfo Text     `json:"AdittionalAccountInfo,omitempty" doc:"Colombia: a cellphone number alongside a bank account, or a bank account alongside a cellphone (the original's spelling)"`
	Alias                 string   `json:"alias,omitempty"`
	ExpirationDate        string   `json:"expirationDate,omitempty" doc:"Colombia cash: YYYY-MM-DD in UTC-5"`
	Location              *Address `json:"location,omitempty"`
}

// SubMerchantInfo is a PSP merchant's sub-merchant.
type SubMerchantInfo struct {
	Code string `json:"code,omitempty"`
	Name string `json:"name,omitempty"`
	URL  string `json:"url,omitempty"`
}

// Text holds a value the specification lets be a JSON string or a JSON number (accountType,
// accountNumber, expirationTime), kept as its text. It marshals back as a string.
type Text string

func (t *Text) UnmarshalJSON(b []byte) error {
	if plainString(b) { // most are: the text as it is, without a decoder's allocations
		*t = Text(b[1 : len(b)-1])
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*t = Text(s)
		return nil
	}
	if string(b) == "null" {
		*t = ""
		return nil
	}
	*t = Text(b)
	return nil
}

// plainString reports whether b is a JSON string whose text is its bytes between the quotes:
// no escape, no control character, valid UTF-8 (which the decoder would otherwise replace).
func plainString(b []byte) bool {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return false
	}
	for _, c := range b[1 : len(b)-1] {
		if c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// Int reads the text as a non-negative integer.
func (t Text) Int() (int, bool) {
	n, err := strconv.Atoi(strings.TrimSpace(string(t)))
	return n, err == nil && n >= 0
}

// Fingerprint identifies a request's content for idempotency: the SHA-256 of its canonical
// JSON, so that a resend with keys in another order or other white space is the same request.
func (r *PayoutRequest) Fingerprint() string {
	b, _ := json.Marshal(r)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// DecodePayoutRequest checks a body against the generic contract and
// decodes it. Every problem is reported at once as a Problem of KindInvalid (HTTP 400).
func DecodePayoutRequest(body []byte) (*PayoutRequest, error) {
	req, _, err := decode(body)
	return req, err
}

// Validate checks a body against the generic contract and, for the merchant, the country
// rules (Check), and reports the errors of both together: a request
// with an unknown field and a DNI too short hears of both. With any generic error the
// Problem is KindInvalid (400); each error keeps its own kind. A country error on a field
// that already has a generic error (or inside it) is left out: it would say the same twice.
func Validate(body []byte, m *Merchant, now time.Time, ep Endpoint) (*PayoutRequest, Route, error) {
	req, partial, err := decode(body)
	if err == nil {
		route, err := Check(req, m, now, ep)
		if err != nil {
			return nil, Route{}, err
		}
		return req, route, nil
	}
	var p *Problem
	if partial == nil || !errors.As(err, &p) {
		return nil, Route{}, err
	}
	var cp *Problem
	if _, cerr := Check(partial, m, now, ep); errors.As(cerr, &cp) {
		generic := p.Errors
		for _, e := range cp.Errors {
			if !coveredBy(generic, e.Field) {
				p.Errors = append(p.Errors, e)
			}
		}
		if len(p.Errors) > len(generic) {
			p.Detail = fmt.Sprintf("%d errors: %d against the generic contract, %d against the %s rules",
				len(p.Errors), len(generic), len(p.Errors)-len(generic), countryName(partial.Country))
		}
	}
	return nil, Route{}, p
}

// coveredBy reports whether field is, or is inside or around, a field of errs.
func coveredBy(errs []*Error, field string) bool {
	for _, e := range errs {
		g := e.Field
		if g == field || strings.HasPrefix(field, g+".") || strings.HasPrefix(g, field+".") {
			return true
		}
	}
	return false
}

// decode is DecodePayoutRequest. When the body is a JSON object that breaks the generic
// contract, it also returns partial: the request decoded from what remains once the refused
// values are dropped, for the country rules to be checked too.
func decode(body []byte) (req, partial *PayoutRequest, err error) {
	var ps problems
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		ps.add(CodeBodyRequired, "", "the request body is required", nil)
		return nil, nil, ps.problem(KindInvalid, "Missing or invalid data", "the generic contract")
	}
	doc, ok := readTree(body)
	if !ok { // not JSON, or JSON that encoding/json alone reads as the contract says (tree.go)
		if doc, err = decodeTree(body); err != nil {
			ps.add(CodeMalformedJSON, "", "the body is not valid JSON: "+err.Error(), nil)
			return nil, nil, ps.problem(KindInvalid, "Missing or invalid data", "the generic contract")
		}
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		ps.add(CodeMalformedJSON, "", "the body must be a JSON object", nil)
		return nil, nil, ps.problem(KindInvalid, "Missing or invalid data", "the generic contract")
	}
	var at [64]byte
	checkObject(&ps, at[:0], obj, requestShape)
	checkLimits(&ps, body, obj) // limits.go: control characters, UTF-8, text lengths
	if !ps.empty() {
		prune(obj, requestShape)
		r := requestOf(obj)
		r.normalize()
		return nil, &r, ps.problem(KindInvalid, "Missing or invalid data", "the generic contract")
	}
	// The typed request comes from the generic decode the checks read, not from a second
	// parse of the body: every value in it has the type its field takes (requestOf).
	r := requestOf(obj)
	r.normalize()
	return &r, nil, nil
}

// decodeTree is readTree with encoding/json: the generic tree, or the error that says why
// the body is not one JSON value.
func decodeTree(body []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	// Anything but white space after the value is refused: dec.More alone takes a stray '}'
	// or ']' for the end of the input (`{…}}` passed the shape check; FuzzDecodeAndCheck).
	err := dec.Decode(&doc)
	if err == nil && len(bytes.TrimSpace(body[dec.InputOffset():])) > 0 {
		err = errors.New("there is more after the JSON value")
	}
	return doc, err
}

// normalize trims white space from the identifiers rules compare, so that the fingerprint
// and the checks see one form.
func (r *PayoutRequest) normalize() {
	r.Country = strings.ToUpper(strings.TrimSpace(r.Country))
	r.Currency = strings.ToUpper(strings.TrimSpace(r.Currency))
	r.Beneficiary.Email = strings.TrimSpace(r.Beneficiary.Email)
	r.Beneficiary.Document.Number = strings.TrimSpace(r.Beneficiary.Document.Number)
	ba := &r.Destination.BankAccount
	ba.BankCode = strings.TrimSpace(ba.BankCode)
	ba.AccountType = Text(strings.TrimSpace(string(ba.AccountType)))
	ba.AccountNumber = Text(strings.TrimSpace(string(ba.AccountNumber)))
	ba.CCI = strings.TrimSpace(ba.CCI)
	ba.AdittionalAccountInfo = Text(strings.TrimSpace(string(ba.AdittionalAccountInfo)))
}
