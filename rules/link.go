package rules

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A payout link is a payout whose beneficiary gives the destination: the merchant creates
// it without one, its amount is reserved, and it waits on ChannelLink until the destination
// comes (checked by the same country rules as a create) or the link expires.

// Link is what a payout link keeps beyond its request. It is fixed at creation, but for
// Resent, Failures and Looks.
type Link struct {
	// Kinds are the account types the beneficiary may choose, in the order offered.
	Kinds []int `json:"kinds"`
	// Minutes is how long the link lasts (expirationTime).
	Minutes   int    `json:"minutes"`
	ReturnURL string `json:"returnUrl,omitempty"`
	Logo      string `json:"merchantLogo,omitempty"`
	Lang      string `json:"lang,omitempty"`
	// Resent are when an operator sent its email again (ResendLinkMail); empty at creation,
	// so it leaves the create's fingerprint alone.
	Resent []time.Time `json:"resent,omitempty"`
	// Failures are its page's failed submissions, Looks the holders' names its review
	// showed (CountLinkAttempt); none at creation, like Resent.
	Failures int `json:"failures,omitempty"`
	Looks    int `json:"looks,omitempty"`
}

// Link lengths, in minutes.
const (
	LinkMinutesMin     = 5
	LinkMinutesMax     = 43200 // 30 days
	LinkMinutesDefault = 10080 // 7 days
)

// linkFields are the fields a link's body adds to a payout request's.
var linkFields = []string{"expirationTime", "allowedDestinations", "returnUrl", "merchantLogo", "lang"}

// linkKinds are the account types a link may offer, by country. Colombia cash (its code is
// mailed at creation) is not offered; the Peru card (5) is typed into the card form's fields
// on the link's page.
var linkKinds = map[string][]int{"COL": {2, 1, 4, 5}, "PER": {2, 1, 4, perCard}}

// LinkCardKind is the Peru card's account type on a link.
const LinkCardKind = perCard

// LinkKinds are the account types a payout link in country may offer merchant m: those its
// settings enable. Bre-B keys need realTimeKey and the Peru card cardPayouts; a bank account
// or a cellphone takes some bank for every merchant. These are the kinds whose requirements
// schema some body can pass (the Peru card's, on the card endpoint): a test of
// rules/requirements holds the two together.
func LinkKinds(country string, m *Merchant) []int {
	var out []int
	for _, k := range linkKinds[country] {
		switch {
		case country == "COL" && k == colKey && !m.Settings.RealTimeKey:
		case country == "PER" && k == perCard && !m.Settings.CardPayouts:
		default:
			out = append(out, k)
		}
	}
	return out
}

// CheckLinkCard checks payout link p as a Peru card push payment, as the card endpoint
// checks its body (the card setting, the cardholder's email, the amount): the link's
// returnUrl is the card's timeoutUrl, so a card needs one. It answers the route the payout
// takes once the card is typed.
func CheckLinkCard(p *Payout, m *Merchant, now time.Time) (*PayoutRequest, Route, error) {
	if p.Link == nil || p.Country != "PER" || !slices.Contains(p.Link.Kinds, perCard) {
		return nil, Route{}, &Problem{Kind: KindRejected, Title: "Data validation error", Errors: []*Error{{Kind: KindRejected,
			Code: CodeLinkDestinations, Field: fieldAccountType, Value: strconv.Itoa(perCard), Message: "this link does not offer that kind of destination"}}}
	}
	req := p.Request
	req.Destination = Destination{BankAccount: BankAccount{AccountType: Text(strconv.Itoa(perCard))}}
	req.TimeoutURL = p.Link.ReturnURL
	if req.MerchantLogo == "" {
		req.MerchantLogo = p.Link.Logo
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, Route{}, err
	}
	full, route, err := Validate(body, m, now, EndpointCard)
	if err != nil {
		return nil, Route{}, err
	}
	return full, route, nil
}

// ValidateLink checks the body of a payout link: a payout request without destination,
// checked by the generic contract and the country rules as a create is (less what only the
// destination decides), plus the link's own fields. It answers the payout to create.
func ValidateLink(body []byte, m *Merchant, now time.Time) (*Payout, error) {
	var ps problems
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil || raw == nil {
		// Not a JSON object: the create's checks say so with their codes.
		_, _, err := Validate(body, m, now, EndpointPayouts)
		if err == nil {
			err = Errorf(KindInvalid, CodeMalformedJSON, "the body must be a JSON object")
		}
		return nil, err
	}
	if _, ok := raw["destination"]; ok {
		ps.add(CodeLinkNoDestination, "destination", "a payout link takes no destination: the beneficiary gives it on the link's page", nil)
	}
	link := &Link{Minutes: LinkMinutesDefault, Lang: "es"}
	var kinds []json.Number
	str := func(name string) (string, bool) {
		v, ok := raw[name]
		if !ok {
			return "", true
		}
		var s string
		return s, json.Unmarshal(v, &s) == nil
	}
	if v, ok := raw["expirationTime"]; ok {
		var n json.Number
		d := json.NewDecoder(bytes.NewReader(v))
		d.UseNumber()
		if err := d.Decode(&n); err != nil {
			var s string
			if json.Unmarshal(v, &s) == nil {
				n = json.Number(s)
			}
		}
		i, err := strconv.Atoi(string(n))
		if err != nil || i < LinkMinutesMin || i > LinkMinutesMax {
			ps.add(CodeLinkExpiration, "expirationTime", "must be a whole number of minutes from 5 to 43200 (30 days)", string(v))
		} else {
			link.Minutes = i
		}
	}
	offered := LinkKinds(countryOf(raw), m)
	v, explicit := raw["allowedDestinations"]
	if explicit {
		d := json.NewDecoder(bytes.NewReader(v))
		d.UseNumber()
		if err := d.Decode(&kinds); err != nil || len(kinds) == 0 {
			ps.add(CodeLinkDestinations, "allowedDestinations", "must be a non-empty array of account types", string(v))
		}
		for i, k := range kinds {
			n, err := strconv.Atoi(string(k))
			switch {
			case err != nil || !slices.Contains(offered, n):
				ps.addf(CodeLinkDestinations, "allowedDestinations["+strconv.Itoa(i)+"]", string(k),
					"must be an account type this country offers this merchant on a link: %s", joinInts(offered))
			case slices.Contains(link.Kinds, n):
				ps.add(CodeLinkDestinations, "allowedDestinations["+strconv.Itoa(i)+"]", "is listed twice", string(k))
			default:
				link.Kinds = append(link.Kinds, n)
			}
		}
	} else {
		link.Kinds = offered
	}
	if s, ok := str("returnUrl"); !ok || s != "" && !absoluteHTTP(s) {
		ps.add(CodeLinkReturnURL, "returnUrl", "must be an absolute http or https URL", s)
	} else {
		link.ReturnURL = s
	}
	if s, ok := str("merchantLogo"); !ok || s != "" && !LogoURLAllowed(s) {
		ps.add(CodeLogoNotHTTPS, "merchantLogo", "must be an https URL (or http on 127.0.0.1 or localhost)", s)
	} else {
		link.Logo = s
	}
	if s, ok := str("lang"); !ok || s != "" && s != "es" && s != "en" {
		ps.add(CodeLinkLang, "lang", "must be es or en", s)
	} else if s != "" {
		link.Lang = s
	}

	// The request is the rest, checked as a create's without the destination's errors.
	for _, name := range append(linkFields, "destination") {
		delete(raw, name)
	}
	rest, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	_, _, verr := Validate(rest, m, now, EndpointPayouts)
	var vp *Problem
	if verr != nil && !errors.As(verr, &vp) {
		return nil, verr
	}
	if vp != nil {
		var kept []*Error
		for _, e := range vp.Errors {
			if e.Field != "destination" && !strings.HasPrefix(e.Field, "destination.") {
				kept = append(kept, e)
			}
		}
		if len(kept) > 0 && len(ps.list) == 0 {
			vp.Errors = kept
			vp.Detail = fmt.Sprintf("%d of the payout link's fields break the rules", len(kept))
			return nil, vp
		}
		ps.list = append(ps.list, kept...)
	}
	if p := ps.problem(KindInvalid, "Missing or invalid data", "of the payout link"); p != nil {
		return nil, p
	}
	req, partial, _ := decode(rest)
	if req == nil {
		req = partial
	}
	if req == nil {
		return nil, Errorf(KindInvalid, CodeMalformedJSON, "the body could not be read")
	}
	p := NewPayout(m.ID, req, Route{Channel: ChannelLink, Amount: amountOf(req)}, now)
	p.Link = link
	p.SessionExpiresAt = now.Add(time.Duration(link.Minutes) * time.Minute)
	// A kind no bank can take this payout as (an amount over the cellphone limit, a wallet
	// that needs what the request lacks) is not offered: the beneficiary could not pass.
	var kept []int
	for i, k := range link.Kinds {
		if req.Country == "PER" && k == perCard {
			if _, _, err := CheckLinkCard(p, m, now); err == nil {
				kept = append(kept, k)
			} else if explicit {
				ps.addf(CodeLinkDestinations, "allowedDestinations["+strconv.Itoa(i)+"]", k,
					"a card needs the beneficiary's email, a returnUrl (the card's timeoutUrl) and an amount a card payout takes")
			}
			continue
		}
		if len(LinkBanks(p, m, k, bankCodes(req.Country), now)) > 0 {
			kept = append(kept, k)
		} else if explicit {
			ps.addf(CodeLinkDestinations, "allowedDestinations["+strconv.Itoa(i)+"]", k,
				"no bank takes this payout to account type %d (its amount, or what the request lacks for it)", k)
		}
	}
	if len(kept) == 0 && !explicit {
		ps.add(CodeLinkDestinations, "allowedDestinations", "no kind of destination can take this payout (its amount, or what the request lacks)", nil)
	}
	if p := ps.problem(KindInvalid, "Missing or invalid data", "of the payout link"); p != nil {
		return nil, p
	}
	link.Kinds = kept
	p.Fingerprint = linkFingerprint(req, link)
	return p, nil
}

// bankCodes are the codes of the country's banks.
func bankCodes(country string) []string {
	var out []string
	for _, b := range Banks(country) {
		out = append(out, b.Code)
	}
	return out
}

// amountOf is the request's amount in minor units (the generic contract checked it).
func amountOf(req *PayoutRequest) int64 {
	n, _ := strconv.ParseInt(string(req.Amount), 10, 64)
	return n
}

// linkFingerprint tells a replay of a link (same request, same link fields) from another
// request under the same orderId.
func linkFingerprint(req *PayoutRequest, link *Link) string {
	b, _ := json.Marshal(struct {
		R *PayoutRequest `json:"r"`
		L *Link          `json:"l"`
	}{req, link})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func countryOf(raw map[string]json.RawMessage) string {
	var c string
	json.Unmarshal(raw["country"], &c)
	return c
}

func absoluteHTTP(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

// CreateLink creates a payout link from its body (ValidateLink), idempotently on orderId
// as a create is; the payout is reserved as it is admitted and waits for its destination.
func (s *Service) CreateLink(ctx context.Context, m *Merchant, body []byte) (CreateResult, error) {
	p, err := ValidateLink(body, m, s.Now().UTC())
	if err != nil {
		return CreateResult{}, err
	}
	return s.create(ctx, m, p, Route{Channel: ChannelLink, Amount: p.Amount})
}

// CheckLinkDestination checks the destination a link's beneficiary gave for payout p: its
// account type must be one the link offers, and the request with it must pass the create's
// checks. It answers the route the payout then takes.
func CheckLinkDestination(p *Payout, m *Merchant, ba BankAccount, now time.Time) (*PayoutRequest, Route, error) {
	kind, _ := strconv.Atoi(string(ba.AccountType))
	if p.Link == nil || !slices.Contains(p.Link.Kinds, kind) {
		return nil, Route{}, &Problem{Kind: KindRejected, Title: "Data validation error", Errors: []*Error{{Kind: KindRejected,
			Code: CodeLinkDestinations, Field: fieldAccountType, Value: string(ba.AccountType), Message: "this link does not offer that kind of destination"}}}
	}
	req := p.Request
	req.Destination = Destination{BankAccount: ba}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, Route{}, err
	}
	full, route, err := Validate(body, m, now, EndpointPayouts)
	if err != nil {
		return nil, Route{}, err
	}
	return full, route, nil
}

// LinkDestination gives a payout link the destination its beneficiary gave (checked by
// CheckLinkDestination): the payout takes the route and goes on as any other. The link
// must still wait for it, unexpired. Merchant m, its owner, hears of it (LinkEvent) in the
// same transaction.
func (lc *Lifecycle) LinkDestination(ctx context.Context, m *Merchant, id int64, req *PayoutRequest, route Route) (*Payout, error) {
	return lc.linkDestination(ctx, m, id, req, route, nil)
}

// LinkCard gives a payout link the Peru card its beneficiary typed (checked by
// CheckLinkCard, tokenized as the card form's): the payout goes on as a card payout.
func (lc *Lifecycle) LinkCard(ctx context.Context, m *Merchant, id int64, req *PayoutRequest, route Route, card CardRef) (*Payout, error) {
	return lc.linkDestination(ctx, m, id, req, route, &card)
}

func (lc *Lifecycle) linkDestination(ctx context.Context, m *Merchant, id int64, req *PayoutRequest, route Route, card *CardRef) (*Payout, error) {
	lc.init()
	now := lc.Now().UTC()
	var result *Payout
	var stepErr error
	err := lc.Store.UpdatePayouts(ctx, []int64{id}, func(p *Payout, l Ledger) (time.Time, error) {
		// Once: the destination given, the payout leaves ChannelLink, and no other
		// submission, from this instance or another, finds the link open.
		if stepErr = linkOpen(p, m, now, "take a destination"); stepErr != nil {
			return time.Time{}, ErrNoChange
		}
		p.Request.Destination = req.Destination
		p.Channel, p.AccountType, p.BankCode, p.ClaimUntil = route.Channel, route.AccountType, route.BankCode, route.ClaimUntil
		if card != nil {
			c := *card
			p.Card, p.Request.TimeoutURL = &c, req.TimeoutURL
		}
		if p.Status == StatusAuthorized && p.Reserved > 0 {
			p.Move(StatusWaitingRouting, now, "", "destination given on the payout link")
		}
		if ev, ok := LinkEvent(p, m, LinkSubmitted, now); ok {
			if err := l.Enqueue(ev); err != nil {
				return time.Time{}, err
			}
		}
		result = p.Clone()
		return now, nil // not yet reserved: the worker reserves, then routes
	})
	if err != nil {
		return nil, err
	}
	if stepErr != nil {
		return nil, stepErr
	}
	lc.Kick()
	return result, nil
}

// LinkBanks are those of codes that a link's payout can go to with a destination of kind:
// a bank the rules refuse for this payout whatever the beneficiary types (a wallet that needs
// what only the merchant's request could give, a bank without a channel for the kind) is
// not offered. The account is left empty: only errors that no account can mend count.
func LinkBanks(p *Payout, m *Merchant, kind int, codes []string, now time.Time) []string {
	var out []string
	for _, code := range codes {
		_, _, err := CheckLinkDestination(p, m, BankAccount{AccountType: Text(strconv.Itoa(kind)), BankCode: code}, now)
		var pr *Problem
		if err != nil && !errors.As(err, &pr) {
			continue
		}
		usable := true
		if pr != nil {
			for _, e := range pr.Errors {
				if e.Field == "destination.bankAccount.bankCode" || !strings.HasPrefix(e.Field, "destination.") {
					usable = false
					break
				}
			}
		}
		if usable {
			out = append(out, code)
		}
	}
	return out
}
