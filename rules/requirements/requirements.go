// Package requirements generates a JSON Schema (2020-12) of a payout body that passes the
// rules for one destination and one merchant, from the tables the validator runs as
// rules.Tables describes them (the generic contract and its length limits, the document,
// bank, account and limit tables of each country, the dummy email lists): copies made from
// those very tables, never a second table written by hand. Each constraint carries the code
// the validator answers when it fails, as the annotation "x-code" (a required field's in
// "x-required-codes"). What JSON Schema cannot say (an account number that repeats another
// field, an amount written 150000.00, which JSON Schema's integer accepts) is left to the
// validator; the test in rules/requirements_test.go lists those cases with the reason.
package requirements

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"payouts/rules"
)

// tables are the rule tables the schema is generated from (rules.Tables), read once: the
// generator's own copy, which nothing else can write.
var tables = sync.OnceValue(func() *rules.RuleTables {
	t := rules.Tables()
	return &t
})

func col() *rules.ColombiaTables { return &tables().Colombia }
func per() *rules.PeruTables     { return &tables().Peru }

// Field paths inside the body, as node paths.
const (
	fieldAmount       = "amount"
	fieldCurrency     = "currency"
	fieldDescription  = "description"
	fieldEmail        = "beneficiary.email"
	fieldDocType      = "beneficiary.document.type"
	fieldDocNumber    = "beneficiary.document.number"
	fieldAccountType  = "destination.bankAccount.accountType"
	fieldCCI          = "destination.bankAccount.cci"
	fieldSubMerchant  = "subMerchantInfo"
	fieldMerchantLogo = "merchantLogo"
	fieldExpTime      = "expirationTime"
)

// Query selects a destination; an empty field is any.
type Query struct {
	Country     string
	AccountType string
	BankCode    string
	Currency    string
	Endpoint    rules.Endpoint
}

// SchemaDialect is the JSON Schema version the requirements are written in.
const SchemaDialect = "https://json-schema.org/draft/2020-12/schema"

// Schema is a JSON Schema document as JSON values.
type Schema = map[string]any

// For answers the schema of a body that passes the rules for q and m at now (a
// Colombia cash claim's last day depends on the day). A query naming a country, account type
// or bank that does not exist is 400 (CodeRequirementsQuery); one whose destination no body
// can pass for this merchant (cash payouts not enabled, a bank without a channel for that
// account type) is 400 with CodeRequirementsNone and the reason.
func For(q Query, m *rules.Merchant, now time.Time) (Schema, error) {
	q.Country, q.Currency = strings.ToUpper(strings.TrimSpace(q.Country)), strings.ToUpper(strings.TrimSpace(q.Currency))
	q.AccountType, q.BankCode = strings.TrimSpace(q.AccountType), strings.TrimSpace(q.BankCode)
	var ps problems
	countries := []string{"COL", "PER"}
	switch {
	case q.Country == "" && q.Endpoint == rules.EndpointCard:
		countries = []string{"PER"}
	case q.Country == "COL" || q.Country == "PER":
		countries = []string{q.Country}
	case q.Country != "":
		ps.add(rules.CodeRequirementsQuery, "query.country", "COL or PER", q.Country)
	}
	if q.Country == "COL" && q.Endpoint == rules.EndpointCard {
		ps.add(rules.CodeRequirementsNone, "query.endpoint", "the card endpoint takes only Peru payouts", "card")
	}
	if q.BankCode != "" && !rules.IsDigits(q.BankCode) {
		ps.add(rules.CodeRequirementsQuery, "query.bankCode", "a bank code has 3 or 4 digits", q.BankCode)
	} else if q.BankCode != "" && !slices.ContainsFunc(countries, func(c string) bool { _, ok := rules.LookupBank(c, q.BankCode); return ok }) {
		ps.addf(rules.CodeRequirementsQuery, "query.bankCode", q.BankCode, "not in the bank list of %s", strings.Join(countries, " or "))
	}
	if p := ps.problem("Invalid requirements query", "of the query"); p != nil {
		return nil, p
	}
	root := newNode("object")
	generic(root, "", tables().Shape)
	title := "A payout request"
	var branches []*node
	var possible []string
	for _, c := range countries {
		n := newNode("")
		var err error
		if c == "COL" {
			err = colombiaSchema(n, q, m, now)
		} else {
			err = peruSchema(n, q, m, q.Endpoint)
		}
		if err != nil {
			if len(countries) == 1 {
				return nil, err
			}
			continue
		}
		branches = append(branches, n)
		possible = append(possible, c)
	}
	if len(branches) == 0 {
		return nil, &rules.Problem{Kind: rules.KindInvalid, Title: "Invalid requirements query", Errors: []*rules.Error{{Kind: rules.KindInvalid, Code: rules.CodeRequirementsNone,
			Field: "query.country", Message: "no payout to this destination passes the rules for this merchant"}}}
	}
	root.at("country").rule(Schema{"enum": toAny(possible)}, rules.CodeCountryNotSupported)
	if len(countries) == 1 {
		root.merge(branches[0])
		title += " to " + map[string]string{"COL": "Colombia", "PER": "Peru"}[countries[0]]
	} else {
		for i, b := range branches {
			root.when(has("country", Schema{"const": possible[i]}), b)
		}
	}
	if q.AccountType != "" {
		title += ", accountType " + q.AccountType
	}
	if q.BankCode != "" {
		title += ", bank " + q.BankCode
	}
	if q.Currency != "" {
		title += ", in " + q.Currency
	}
	if q.Endpoint == rules.EndpointCard {
		title += ", on the card endpoint"
	}
	s := root.render()
	s["$schema"] = SchemaDialect
	s["title"] = title + " that passes the rules for merchant " + m.ID
	s["description"] = "Generated from the rule tables the validator runs (this project's extension). " +
		"x-code is the error code the validator answers when a constraint fails; x-required-codes, when a required field is missing. " +
		"A body that passes the schema may still be refused for what JSON Schema cannot express (a field that repeats another, an amount written with a fraction of zeros, the directory and balance)."
	s["x-payouts-extension"] = true
	return s, nil
}

// ---- the generic contract (rules/shape.go, limits.go) ----

// generic turns the shape table into properties, types, required fields and lengths.
func generic(n *node, prefix string, shape []rules.ShapeField) {
	n.closed = rules.CodeUnknownField
	for _, f := range shape {
		path := prefix + f.Name
		c := n.child(f.Name)
		typeCode := f.TypeCode
		if typeCode == "" {
			typeCode = rules.CodeWrongType
		}
		if f.Types[0] == "object" {
			generic(c, path+".", f.Fields)
		}
		types := toAny(f.Types)
		if !f.Required {
			types = append(types, "null") // null is absent (checkObject)
		}
		c.typ, c.typeCode = types, typeCode
		if len(types) == 1 {
			c.typ = types[0]
		}
		text := f.Types[0] == "string" // a string, or a string or a number
		if f.Required {
			n.require(f.Name, f.MissingCode)
			if text && len(f.Types) == 1 {
				c.rule(Schema{"minLength": 1}, f.MissingCode) // "" is missing (checkObject)
			}
		}
		if text {
			c.rule(Schema{"pattern": noControl}, rules.CodeControlCharacter)
		}
		if f.MaxLen > 0 {
			c.rule(Schema{"maxLength": f.MaxLen}, rules.CodeTooLong)
		}
		if f.Limited {
			c.rule(Schema{"maxLength": rules.MaxTextLength}, rules.CodeTooLong)
		}
		switch f.Format {
		case "alpha3":
			c.rule(Schema{"pattern": `^\s*[A-Za-z]{3}\s*$`}, f.FormatCode)
		case "url":
			c.rule(Schema{"pattern": `^\s*[hH][tT][tT][pP][sS]?://[^/?#\s]+`}, f.FormatCode)
		case "email":
			c.rule(Schema{"pattern": `^[^@\s<>(),;:"\[\]]+@[^@\s<>(),;:"\[\]]+$`}, f.FormatCode)
		}
		if path == "amount" {
			c.rule(Schema{"exclusiveMinimum": 0}, rules.CodeAmountFormat)
		}
	}
	// The fields of an object whose every field is limited (an address), once more.
	for _, f := range shape {
		if f.EachLimited {
			c := n.props[f.Name]
			for _, k := range c.order {
				c.props[k].rule(Schema{"maxLength": rules.MaxTextLength}, rules.CodeTooLong)
			}
		}
	}
}

// noControl refuses control characters and U+FFFD (limits.go, badRune), written with the
// characters themselves so that any regular expression dialect reads it.
var noControl = "^[^\x00-\x1f\x7f-\u009f\ufffd]*$"

// ---- the rules both countries share (rules/common.go) ----

// Field paths inside the body, as node paths.
const (
	pBA = "destination.bankAccount."
)

func amountRules(n *node, decimalsCode string, multiple int) {
	a := n.at(fieldAmount)
	a.rule(Schema{"type": "integer"}, rules.CodeAmountNotNumeric)
	a.rule(Schema{"maximum": maxAmountValue()}, rules.CodeAmountLength)
	if multiple > 1 {
		a.rule(Schema{"multipleOf": multiple}, decimalsCode)
	}
}

// maxAmountValue is the largest amount of maxAmountDigits digits.
func maxAmountValue() int64 {
	v, _ := strconv.ParseInt(strings.Repeat("9", tables().MaxAmountDigits), 10, 64)
	return v
}

// amountRange is checkAmountRange's bounds as a rule.
func amountRange(n *node, lo, hi int64, belowCode, aboveCode string) {
	if lo > 0 {
		n.at(fieldAmount).rule(Schema{"minimum": lo}, belowCode)
	}
	if hi > 0 {
		n.at(fieldAmount).rule(Schema{"maximum": hi}, aboveCode)
	}
}

// emailRules are checkEmail's: the country's length and no dummy address.
func emailRules(n *node, max int) {
	e := n.at(fieldEmail)
	e.rule(Schema{"maxLength": max}, rules.CodeEmailTooLong)
	p := dummyPatterns()
	e.rule(Schema{"not": Schema{"anyOf": []any{Schema{"pattern": p[0]}, Schema{"pattern": p[1]}, Schema{"pattern": p[2]}}}}, rules.CodeEmailDummy)
}

// dummyPatterns are isDummyEmail's lists as patterns: the whole address, the local part
// before an optional +tag, the domain or a domain it is under. Made once: the lists are fixed.
var dummyPatterns = sync.OnceValue(func() [3]string {
	return [3]string{
		"^(" + ciAlternatives(tables().DummyEmail.Addresses) + ")$",
		"^(" + ciAlternatives(tables().DummyEmail.LocalParts) + `)(\+[^@]*)?@`,
		`@(.*\.)?(` + ciAlternatives(tables().DummyEmail.Domains) + ")$",
	}
})

// subMerchantRules are checkSubMerchant's for a PSP merchant, and nameWhy's.
func subMerchantRules(n *node, psp, nameRequired bool) {
	if psp {
		n.require(fieldSubMerchant, rules.CodeFieldRequired)
	}
	sm := n.at(fieldSubMerchant)
	for _, f := range []string{"code", "name", "url"} {
		if psp || f == "name" && nameRequired {
			sm.require(f, rules.CodeFieldRequired)
			sm.at(f).rule(Schema{"pattern": `\S`}, rules.CodeFieldRequired)
		}
	}
	if nameRequired && !psp {
		n.require(fieldSubMerchant, rules.CodeFieldRequired)
	}
}

// digitsRule: a string of digits (a JSON number is digits already).
func digitsRule(n *node, path, code string) {
	n.at(path).rule(Schema{"pattern": "^[0-9]+$"}, code)
}

// ---- Colombia (rules/colombia.go) ----

func colombiaSchema(n *node, q Query, m *rules.Merchant, now time.Time) error {
	if q.Endpoint == rules.EndpointCard {
		return queryNone("query.endpoint", "the card endpoint takes only Peru payouts")
	}
	if q.Currency != "" && q.Currency != "COP" {
		return queryNone("query.currency", "a Colombia payout is in COP")
	}
	n.at(fieldCurrency).rule(Schema{"const": "COP"}, rules.CodeCurrencyNotAllowed)
	amountRules(n, rules.CodeCOPDecimals, 100)
	emailRules(n, col().EmailMax)
	subMerchantRules(n, m.Settings.PSP, false)
	n.at(fieldDocType).rule(Schema{"enum": docTypes(col().Documents)}, rules.CodeDocumentType)
	for _, d := range col().Documents {
		c := newNode("")
		digitsRule(c, fieldDocNumber, rules.CodeDocumentNotNumeric)
		c.at(fieldDocNumber).rule(Schema{"minLength": d.Min}, d.TooShortCode)
		c.at(fieldDocNumber).rule(Schema{"maxLength": d.Max}, d.TooLongCode)
		if d.NoLeadingZero {
			c.at(fieldDocNumber).rule(Schema{"pattern": "^[1-9]"}, d.TooLongCode)
		}
		n.when(has(fieldDocType, Schema{"const": d.Type}), c)
	}
	n.require("destination.bankAccount.accountType", rules.CodeAccountTypeRequired)
	types := []int{col().Current.Value, col().Savings.Value, col().Cash.Value, col().Cellphone.Value, col().Key.Value}
	if q.AccountType != "" {
		t, ok := col().AccountType(q.AccountType)
		if !ok {
			return &rules.Problem{Kind: rules.KindInvalid, Title: "Invalid requirements query", Errors: []*rules.Error{{Kind: rules.KindInvalid, Code: rules.CodeRequirementsQuery,
				Field: "query.accountType", Value: q.AccountType, Message: "a Colombia account type: 1 to 5 or its text form"}}}
		}
		types = []int{t}
	}
	var matchers []any
	for _, t := range []int{col().Current.Value, col().Savings.Value, col().Cash.Value, col().Cellphone.Value, col().Key.Value} {
		matchers = append(matchers, colTypeIs(t))
	}
	n.at(fieldAccountType).rule(Schema{"anyOf": matchers}, rules.CodeAccountType)
	var why string
	built := 0
	for _, t := range types {
		c := newNode("")
		if w := colombiaType(c, t, q, m, now); w != "" {
			why = w
			n.at(fieldAccountType).rule(Schema{"not": colTypeIs(t)}, rules.CodeNotEnabled)
			continue
		}
		built++
		if len(types) == 1 {
			n.at(fieldAccountType).rule(colTypeIs(t), rules.CodeAccountType)
			n.merge(c)
		} else {
			n.when(has(fieldAccountType, colTypeIs(t)), c)
		}
	}
	if built == 0 {
		return queryNone(q.narrowest(), why)
	}
	return nil
}

// colTypeIs matches a Colombia accountType of value t: the number, its digits, or one of its
// text forms, compared as the validator reads it (rules.ColombiaTables.AccountType).
func colTypeIs(t int) Schema {
	return Schema{"anyOf": []any{Schema{"const": t}, Schema{"type": "string", "pattern": colTypePatterns()[t]}}}
}

// colTypePatterns are the text forms of each Colombia account type as patterns, made once.
var colTypePatterns = sync.OnceValue(func() map[int]string {
	out := map[int]string{}
	for _, t := range []rules.AccountType{col().Current, col().Savings, col().Cash, col().Cellphone, col().Key} {
		out[t.Value] = colTypePattern(t)
	}
	return out
})

func colTypePattern(t rules.AccountType) string {
	alts := []string{"0*" + strconv.Itoa(t.Value)}
	for _, w := range t.Texts {
		var b strings.Builder
		for i, r := range w {
			if i > 0 {
				b.WriteString("[ ._-]*")
			}
			b.WriteString(ciRune(r))
		}
		alts = append(alts, b.String())
	}
	return `^[ ._-]*(` + strings.Join(alts, "|") + `)[ ._-]*$`
}

// colombiaType adds the rules of one account type; it says why none passes, or "".
func colombiaType(n *node, t int, q Query, m *rules.Merchant, now time.Time) string {
	ba := func(f string) string { return pBA + f }
	switch t {
	case col().Key.Value:
		if !m.Settings.RealTimeKey {
			return "Bre-B key payouts are not enabled for this merchant (setting realTimeKey)"
		}
		n.require(ba("accountNumber"), rules.CodeAccountNumRequired)
		k := n.at(ba("accountNumber"))
		k.rule(Schema{"minLength": col().KeyMin, "maxLength": col().KeyMax}, rules.CodeBreBKeyLength)
		k.rule(Schema{"pattern": "^[\x00-\x7f]*$"}, rules.CodeBreBKeyAccents)
		k.rule(Schema{"anyOf": []any{
			Schema{"type": "number"},
			Schema{"pattern": `^(\+57)?` + colCellphonePattern()[1:]}, Schema{"pattern": "^[0-9]+$"},
			Schema{"pattern": "^@[A-Za-z0-9]+$"}, Schema{"pattern": `^[^@\s]+@[^@\s]+\.[^@\s]+$`},
		}}, rules.CodeBreBKey)
		_, ok := bankRules(n, q, "COL", func(b rules.Bank) string {
			switch {
			case b.Retired:
				return rules.CodeBankCode
			case b.Wallet:
				return wallet(b.Code).TypeCode
			case !b.KeyRealTime:
				return rules.CodeNoChannel
			}
			return ""
		})
		if !ok {
			return "bank " + q.BankCode + " takes no Bre-B key payouts"
		}
		amountRange(n, col().BankMin, col().KeyAmountMax, rules.CodeBelowMinimum, rules.CodeAboveMaximum)
		dateFormat(n)
	case col().Cash.Value:
		if !m.Settings.CashPayouts {
			return "cash payouts are not enabled for this merchant (setting cashPayouts)"
		}
		if q.BankCode != "" && q.BankCode != col().CashBank {
			return "a cash payout uses bank code " + col().CashBank
		}
		n.require(ba("bankCode"), rules.CodeBankCodeRequired)
		n.at(ba("bankCode")).rule(Schema{"const": col().CashBank}, rules.CodeCashBankCode)
		n.require(fieldEmail, rules.CodeEmailRequired)
		amountRange(n, col().CashMin, col().CashMax, rules.CodeCashBelowMin, rules.CodeCashAboveMax)
		today, latest := col().CashWindow(now)
		var days []any
		for d := today.AddDate(0, 0, 1); !d.After(latest); d = d.AddDate(0, 0, 1) {
			days = append(days, d.Format(time.DateOnly))
		}
		dateFormat(n)
		n.at(ba("expirationDate")).rule(Schema{"enum": days}, rules.CodeCashExpiration)
	default:
		return colombiaAccount(n, t, q, m)
	}
	return ""
}

func dateFormat(n *node) {
	n.at(pBA+"expirationDate").rule(Schema{"pattern": `^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$`}, rules.CodeDateFormat)
}

// colombiaAccount: accountType 1, 2 or 4 (colCheck.account, channel, cellphoneChannel, wallet).
func colombiaAccount(n *node, t int, q Query, m *rules.Merchant) string {
	rt := m.Settings.RealTimePhoneAccount
	// Why a bank cannot carry this account type (colCheck.account, channel, cellphoneChannel).
	refuse := func(b rules.Bank) string {
		switch {
		case b.Code == col().CashBank:
			return rules.CodeCashAccountType
		case b.Retired:
			return rules.CodeBankCode
		case b.Wallet && t != col().Savings.Value && t != col().Cellphone.Value:
			return wallet(b.Code).TypeCode
		case b.Wallet:
			return ""
		case t == col().Cellphone.Value && !b.RealTime:
			return rules.CodeNoChannel
		case t == col().Cellphone.Value && !rt:
			return rules.CodeNotEnabled
		case t == col().Cellphone.Value || b.Batch:
			return ""
		case b.RealTime && !rt:
			return rules.CodeNotEnabled
		case !b.RealTime:
			return rules.CodeNoChannel
		}
		return ""
	}
	banks, ok := bankRules(n, q, "COL", refuse)
	if !ok {
		return fmt.Sprintf("bank %s has no channel for accountType %d for this merchant", q.BankCode, t)
	}
	n.require(pBA+"bankCode", rules.CodeBankCodeRequired)
	n.require(pBA+"accountNumber", rules.CodeAccountNumRequired)
	dateFormat(n)
	num := pBA + "accountNumber"
	add := pBA + "AdittionalAccountInfo"
	cellphone := func(c *node, lengthCode, prefixCode string) {
		digitsRule(c, num, rules.CodeAccountNotNumeric)
		c.at(num).rule(Schema{"minLength": col().CellphoneDigits, "maxLength": col().CellphoneDigits}, lengthCode)
		c.at(num).rule(Schema{"pattern": "^" + string(col().CellphonePrefix)}, prefixCode)
	}
	for _, w := range col().Wallets {
		code := w.Bank
		if !slices.Contains(banks, code) {
			continue
		}
		c := newNode("")
		cellphone(c, w.LengthCode, w.PrefixCode)
		c.at(fieldDocType).rule(Schema{"enum": toAny(col().WalletDocuments)}, rules.CodeCOLWalletDocType)
		amountRange(c, col().WalletMin, col().WalletMax, rules.CodeBelowMinimum, rules.CodeAboveMaximum)
		c.at(add).rule(Schema{"pattern": fmt.Sprintf("^[0-9]{%d,%d}$", col().AccountMin, col().AccountMax)}, rules.CodeAdditionalAccount)
		n.whenBank(q, code, c)
	}
	var plain []string
	for _, code := range banks {
		if wallet(code).Bank == "" {
			plain = append(plain, code)
		}
	}
	if len(plain) == 0 || q.BankCode != "" && !slices.Contains(plain, q.BankCode) {
		return ""
	}
	c := newNode("")
	amountRange(c, col().BankMin, 0, rules.CodeBelowMinimum, "")
	if t == col().Cellphone.Value {
		cellphone(c, rules.CodeCOLCellphoneLength, rules.CodeCOLCellphonePrefix)
		amountRange(c, 0, col().RealTimeMax, "", rules.CodeAboveMaximum)
		c.at(add).rule(Schema{"pattern": fmt.Sprintf("^[0-9]{%d,%d}$", col().AccountMin, col().AccountMax)}, rules.CodeAdditionalAccount)
	} else {
		digitsRule(c, num, rules.CodeAccountNotNumeric)
		c.at(num).rule(Schema{"minLength": col().AccountMin, "maxLength": col().AccountMax}, rules.CodeCOLAccountNumber)
		c.at(add).rule(Schema{"pattern": colCellphonePattern()}, rules.CodeAdditionalCellphone)
		for _, code := range plain {
			r, ok := col().AccountRules[code]
			if !ok {
				continue
			}
			rc := newNode("")
			if r.Only != nil {
				var alts []string
				for _, l := range r.Only {
					alts = append(alts, fmt.Sprintf("[0-9]{%d}", l))
				}
				rc.at(num).rule(Schema{"pattern": "^(" + strings.Join(alts, "|") + ")$"}, r.Code)
			} else {
				lim := Schema{}
				if r.Min > 0 {
					lim["minLength"] = r.Min
				}
				if r.Max > 0 {
					lim["maxLength"] = r.Max
				}
				rc.at(num).rule(lim, r.Code)
			}
			n.whenBank(q, code, rc)
		}
		// A bank with real-time only takes up to the real-time maximum.
		var rtOnly []string
		for _, code := range plain {
			if b, _ := rules.LookupBank("COL", code); !b.Batch {
				rtOnly = append(rtOnly, code)
			}
		}
		if len(rtOnly) > 0 {
			rc := newNode("")
			amountRange(rc, 0, col().RealTimeMax, "", rules.CodeAboveMaximum)
			if q.BankCode != "" {
				if slices.Contains(rtOnly, q.BankCode) {
					n.merge(rc)
				}
			} else {
				n.when(has(pBA+"bankCode", Schema{"enum": toAny(rtOnly)}), rc)
			}
		}
	}
	if q.BankCode != "" {
		n.merge(c)
	} else {
		n.when(has(pBA+"bankCode", Schema{"enum": toAny(plain)}), c)
	}
	return ""
}

// ---- Peru (rules/peru.go) ----

func peruSchema(n *node, q Query, m *rules.Merchant, ep rules.Endpoint) error {
	currencies := []string{"PEN", "USD"}
	if q.Currency != "" {
		if !slices.Contains(currencies, q.Currency) {
			return queryNone("query.currency", "a Peru payout is in PEN or USD")
		}
		currencies = []string{q.Currency}
	}
	n.at(fieldCurrency).rule(Schema{"enum": toAny(currencies)}, rules.CodeCurrencyNotAllowed)
	amountRules(n, "", 1)
	emailRules(n, per().EmailMax)
	n.at(fieldDocType).rule(Schema{"enum": docTypes(per().Documents)}, rules.CodeDocumentType)
	for _, d := range per().Documents {
		c := newNode("")
		digitsRule(c, fieldDocNumber, rules.CodeDocumentNotNumeric)
		c.at(fieldDocNumber).rule(Schema{"minLength": d.Min, "maxLength": d.Max}, d.TooLongCode)
		n.when(has(fieldDocType, Schema{"const": d.Type}), c)
	}
	cciRules(n)
	perMax(n)
	if ep == rules.EndpointCard {
		return peruCard(n, q, m)
	}
	subMerchantRules(n, m.Settings.PSP, false)
	n.at(fieldAccountType).rule(Schema{"not": perTypeIs(per().Card)}, rules.CodeCardEndpointOnly)
	n.at(fieldAccountType).rule(Schema{"anyOf": []any{perTypeIs(per().Current), perTypeIs(per().Savings), perTypeIs(per().Cellphone), perTypeIs(per().Card)}}, rules.CodeAccountType)
	phone, other := true, true
	if q.AccountType != "" {
		v, ok := rules.Text(q.AccountType).Int()
		switch {
		case !ok || !rules.IsDigits(q.AccountType) || v != per().Current && v != per().Savings && v != per().Cellphone && v != per().Card:
			return &rules.Problem{Kind: rules.KindInvalid, Title: "Invalid requirements query", Errors: []*rules.Error{{Kind: rules.KindInvalid, Code: rules.CodeRequirementsQuery,
				Field: "query.accountType", Value: q.AccountType, Message: "a Peru account type: 1, 2 or 4 (5, card, with endpoint=card)"}}}
		case v == per().Card:
			return queryNone("query.accountType", "a Peru card payout (accountType 5) is made on the card endpoint: add endpoint=card")
		case v == per().Cellphone:
			other = false
			n.require(fieldAccountType, rules.CodePERCellphoneBank)
			n.at(fieldAccountType).rule(perTypeIs(per().Cellphone), rules.CodeAccountType)
		default:
			phone = false
			n.require(fieldAccountType, rules.CodeAccountType)
			n.at(fieldAccountType).rule(perTypeIs(v), rules.CodeAccountType)
		}
	}
	built := 0
	var why string
	if phone {
		c := newNode("")
		if w := peruPhone(c, q, currencies); w != "" {
			why = w
		} else if built++; !other {
			n.merge(c)
		} else {
			n.when(has(fieldAccountType, perTypeIs(per().Cellphone)), c)
		}
	}
	if other {
		c := newNode("")
		if w := peruTransfer(c, q); w != "" {
			why = w
		} else if built++; !phone {
			n.merge(c)
		} else {
			n.when(Schema{"not": has(fieldAccountType, perTypeIs(per().Cellphone))}, c)
		}
	}
	if built == 0 {
		return queryNone(q.narrowest(), why)
	}
	if phone && other && built == 1 {
		// One of the two is impossible here: the body must take the other.
		if why := peruPhone(newNode(""), q, currencies); why != "" {
			n.at(fieldAccountType).rule(Schema{"not": perTypeIs(per().Cellphone)}, rules.CodePERCellphonePEN)
		} else {
			n.require(fieldAccountType, rules.CodePERWalletCellphone)
			n.at(fieldAccountType).rule(perTypeIs(per().Cellphone), rules.CodePERWalletCellphone)
		}
	}
	return nil
}

// perTypeIs matches a Peru accountType of value t (peruAccountType: digits, as a number or a string).
func perTypeIs(t int) Schema {
	return Schema{"anyOf": []any{Schema{"const": t}, Schema{"type": "string", "pattern": "^0*" + strconv.Itoa(t) + "$"}}}
}

func cciRules(n *node) {
	digitsRule(n, fieldCCI, rules.CodeCCINotNumeric)
	n.at(fieldCCI).rule(Schema{"minLength": per().CCIDigits, "maxLength": per().CCIDigits}, rules.CodeCCILength)
}

// perMax is checkMax: 30,000 PEN, 8,000 USD.
func perMax(n *node) {
	usd := newNode("")
	amountRange(usd, 0, per().USDMax, "", rules.CodePERAboveLimit)
	pen := newNode("")
	amountRange(pen, 0, per().PENMax, "", rules.CodePERAboveLimit)
	n.when(has(fieldCurrency, Schema{"const": "USD"}), usd)
	n.when(has(fieldCurrency, Schema{"const": "PEN"}), pen)
}

// noRUC: RUC is not available at bank 004.
func noRUC(n *node, q Query) {
	c := newNode("")
	c.at(fieldDocType).rule(Schema{"not": Schema{"const": 4}}, rules.CodeRUCAtBank004)
	n.whenPeruBank(q, per().NoRUCBank, c)
}

// whenPeruBank is whenBank, and when the query names no bank, also for a body without
// bankCode whose cci names the bank by its first 3 digits (rules.PeruTables.BankOfCCI).
func (n *node) whenPeruBank(q Query, code string, then *node) {
	n.whenBank(q, code, then)
	if q.BankCode != "" {
		return
	}
	var prefixes []string
	for p, c := range per().BankOfCCI {
		if c == code {
			prefixes = append(prefixes, p)
		}
	}
	if len(prefixes) == 0 {
		return
	}
	sort.Strings(prefixes)
	n.when(Schema{"allOf": []any{
		Schema{"not": has(pBA+"bankCode", Schema{"minLength": 1})},
		has(pBA+"cci", Schema{"pattern": "^(" + strings.Join(prefixes, "|") + ")[0-9]{17}$"}),
	}}, then)
}

func peruCard(n *node, q Query, m *rules.Merchant) error {
	if !m.Settings.CardPayouts {
		return queryNone("query.endpoint", "card payouts are not enabled for this merchant (setting cardPayouts)")
	}
	if q.AccountType != "" && q.AccountType != "5" {
		return queryNone("query.accountType", "the card endpoint takes accountType 5 only")
	}
	subMerchantRules(n, m.Settings.PSP, false)
	n.require(fieldAccountType, rules.CodeAccountType)
	n.at(fieldAccountType).rule(perTypeIs(per().Card), rules.CodeAccountType)
	n.require(fieldEmail, rules.CodeEmailRequired)
	n.rule(Schema{"anyOf": []any{
		Schema{"required": []any{"timeoutUrl"}, "properties": Schema{"timeoutUrl": Schema{"pattern": `\S`}}},
		Schema{"required": []any{"TimeoutURL"}, "properties": Schema{"TimeoutURL": Schema{"pattern": `\S`}}},
	}}, rules.CodeTimeoutURLRequired)
	// LogoURLAllowed's rule: https, or http on the loopback (a developer's own server).
	n.at(fieldMerchantLogo).rule(Schema{"pattern": `^\s*(https://[^/?#\s]+|http://([Ll][Oo][Cc][Aa][Ll][Hh][Oo][Ss][Tt]|127(\.[0-9]{1,3}){3}|\[::1\])(:[0-9]+)?([/?#]|\s*$))`}, rules.CodeLogoNotHTTPS)
	n.at(fieldExpTime).rule(Schema{"anyOf": []any{
		Schema{"type": "integer", "minimum": per().ExpirationMin, "maximum": per().ExpirationMax},
		Schema{"type": "string", "pattern": `^\s*0*([5-9]|[12][0-9]|30)\s*$`},
	}}, rules.CodeExpirationTime)
	if _, ok := bankRules(n, q, "PER", func(b rules.Bank) string {
		if b.Retired {
			return rules.CodeBankCode
		}
		return ""
	}); !ok {
		return queryNone("query.bankCode", "bank "+q.BankCode+" is not in the Peru list or is retired")
	}
	noRUC(n, q)
	return nil
}

// peruPhone: accountType 4 (perCheck.transfer, channel).
func peruPhone(n *node, q Query, currencies []string) string {
	if !slices.Contains(currencies, "PEN") {
		return "a payout by cellphone number (accountType 4) is in PEN only"
	}
	if _, ok := bankRules(n, q, "PER", func(b rules.Bank) string {
		switch {
		case b.Retired:
			return rules.CodeBankCode
		case !b.RealTime:
			return rules.CodeNoChannel
		}
		return ""
	}); !ok {
		return "bank " + q.BankCode + " takes no real-time payouts, and a cellphone payout goes only real-time"
	}
	n.require(pBA+"bankCode", rules.CodePERCellphoneBank)
	n.require(pBA+"accountNumber", rules.CodePERCellphoneAccount)
	n.at(pBA+"accountNumber").rule(Schema{"pattern": perCellphonePattern()}, rules.CodePERCellphone)
	n.at(fieldCurrency).rule(Schema{"const": "PEN"}, rules.CodePERCellphonePEN)
	w := newNode("")
	amountRange(w, 0, per().ExtrasWalletCellphoneMax, "", rules.CodePERAboveLimit)
	n.whenBank(q, per().ExtrasWallet, w)
	wallet037 := newNode("")
	wallet037.require(fieldDescription, rules.CodeFieldRequired)
	wallet037.at(fieldDescription).rule(Schema{"pattern": `\S`}, rules.CodeFieldRequired)
	subMerchantRules(wallet037, false, true)
	n.whenBank(q, per().ExtrasWallet, wallet037)
	other := newNode("")
	amountRange(other, 0, per().CellphoneMax, "", rules.CodePERCellphoneMax)
	if q.BankCode == "" {
		n.when(Schema{"not": has(pBA+"bankCode", Schema{"const": per().ExtrasWallet})}, other)
	} else if q.BankCode != per().ExtrasWallet {
		n.merge(other)
	}
	noRUC(n, q)
	return ""
}

// peruTransfer: accountType 1, 2 or omitted (perCheck.transfer, accountNumber, cci002, channel).
func peruTransfer(n *node, q Query) string {
	refuse := func(b rules.Bank) string {
		switch {
		case b.Retired:
			return rules.CodeBankCode
		case per().CellphoneOnly[b.Code]:
			return rules.CodePERWalletCellphone
		}
		return ""
	}
	banks, ok := bankRules(n, q, "PER", refuse)
	if !ok {
		return "bank " + q.BankCode + " takes only cellphone payouts (accountType 4), or is retired"
	}
	bank, num, cci := pBA+"bankCode", pBA+"accountNumber", pBA+"cci"
	// Without cci, bankCode and accountNumber are required.
	req := newNode("")
	req.require(bank, rules.CodeBankCodeRequired)
	req.require(num, rules.CodeAccountNumRequired)
	n.when(Schema{"not": has(cci, Schema{"minLength": 1})}, req)
	// None of the three: cci is what is missing (1026).
	n.at("destination.bankAccount").rule(Schema{"anyOf": []any{
		Schema{"required": []any{"cci"}}, Schema{"required": []any{"bankCode"}}, Schema{"required": []any{"accountNumber"}},
	}}, rules.CodeCCIRequired)
	// Only cci: its first 3 digits name a bank of the list (rules.PeruTables.BankOfCCI), one that can take
	// the payout.
	var prefixes []string
	refused := map[string][]string{}
	for prefix, code := range per().BankOfCCI {
		prefixes = append(prefixes, prefix)
		if b, _ := rules.LookupBank("PER", code); refuse(b) != "" {
			refused[refuse(b)] = append(refused[refuse(b)], prefix)
		}
	}
	sort.Strings(prefixes)
	onlyCCI := newNode("")
	onlyCCI.at(cci).rule(Schema{"pattern": "^(" + strings.Join(prefixes, "|") + ")"}, rules.CodeCCIUnknownBank)
	for _, c := range keysOf(refused) {
		ps := refused[c]
		sort.Strings(ps)
		onlyCCI.at(cci).rule(Schema{"not": Schema{"pattern": "^(" + strings.Join(ps, "|") + ")"}}, c)
	}
	if q.BankCode == "" {
		n.when(Schema{"not": has(bank, Schema{"minLength": 1})}, onlyCCI)
	}
	for _, code := range banks {
		if q.BankCode != "" && code != q.BankCode {
			continue
		}
		b, _ := rules.LookupBank("PER", code)
		c := newNode("")
		prefixCode, ok := per().CCIPrefixCode[code]
		if !ok {
			prefixCode = rules.CodeCCIBankMismatch
		}
		c.at(cci).rule(Schema{"pattern": "^" + per().CCIPrefix[code]}, prefixCode)
		if !b.Batch {
			c.require(cci, rules.CodeRealTimeNeedsCCI)
		}
		n.whenBank(q, code, c)
		an := newNode("")
		peruAccountNumber(an, b)
		n.whenPeruBank(q, code, an)
	}
	noRUC(n, q)
	return ""
}

// peruAccountNumber is perCheck.accountNumber's format by bank, and cci002's.
func peruAccountNumber(n *node, b rules.Bank) {
	num, cci := pBA+"accountNumber", pBA+"cci"
	if !b.Wallet {
		digitsRule(n, num, rules.CodeAccountNotNumeric)
	}
	switch {
	case b.Wallet:
		n.at(num).rule(Schema{"pattern": perCellphonePattern()}, rules.CodePERCellphone)
	case b.Code == per().Accounts.Bank001:
		n.at(num).rule(Schema{"pattern": fmt.Sprintf("^([0-9]{%d}|[0-9]{%d})$", per().Accounts.Digits001, per().Accounts.LongDigits001)}, rules.CodePER001Account)
		n.at(num).rule(Schema{"pattern": fmt.Sprintf("^([0-9]{%d}|[0-9]{8}00[0-9]{%d})$", per().Accounts.Digits001, per().Accounts.LongDigits001-10)}, rules.CodePER001Account20)
	case b.Code == per().Accounts.Bank002:
		// The account type: sent, or said by the length (13 digits current) when omitted.
		for _, cur := range []struct {
			currency, digit string
			cur, sav        string
			cciCur, cciSav  string
		}{{"PEN", "0", rules.CodePER002CurrentPEN, rules.CodePER002SavingsPEN, rules.CodeCCI002CurrentPEN, rules.CodeCCI002SavingsPEN},
			{"USD", "1", rules.CodePER002CurrentUSD, rules.CodePER002SavingsUSD, rules.CodeCCI002CurrentUSD, rules.CodeCCI002SavingsUSD}} {
			c := newNode("")
			current := newNode("")
			current.at(num).rule(Schema{"pattern": fmt.Sprintf("^[0-9]{%d}$", per().Accounts.CurrentDigits002)}, rules.CodePER002Current)
			current.at(num).rule(Schema{"pattern": fmt.Sprintf("^[0-9]{%d}%s", per().Accounts.CurrentDigits002-3, cur.digit)}, cur.cur)
			current.at(cci).rule(Schema{"pattern": "^[0-9]{6}00"}, rules.CodeCCI002Current)
			current.at(cci).rule(Schema{"pattern": "^[0-9]{15}" + cur.digit}, cur.cciCur)
			c.when(has(fieldAccountType, perTypeIs(per().Current)), current)
			savings := newNode("")
			savings.at(num).rule(Schema{"pattern": fmt.Sprintf("^[0-9]{%d}$", per().Accounts.SavingsDigits002)}, rules.CodePER002Savings)
			savings.at(num).rule(Schema{"pattern": fmt.Sprintf("^[0-9]{%d}%s", per().Accounts.SavingsDigits002-3, cur.digit)}, cur.sav)
			savings.at(cci).rule(Schema{"pattern": "^[0-9]{6}1"}, rules.CodeCCI002Savings)
			savings.at(cci).rule(Schema{"pattern": "^[0-9]{15}" + cur.digit}, cur.cciSav)
			c.when(has(fieldAccountType, perTypeIs(per().Savings)), savings)
			omitted := newNode("")
			// Omitted: 13 digits are a current account, anything else is read as savings.
			omitted.at(num).rule(Schema{"pattern": fmt.Sprintf("^([0-9]{%d}%s[0-9]{2}|[0-9]{%d}%s[0-9]{2})$",
				per().Accounts.CurrentDigits002-3, cur.digit, per().Accounts.SavingsDigits002-3, cur.digit)}, rules.CodePER002Savings)
			c.when(Schema{"not": has(fieldAccountType, Schema{})}, omitted)
			n.when(has(fieldCurrency, Schema{"const": cur.currency}), c)
		}
	case b.Code == per().Accounts.Bank003:
		n.at(num).rule(Schema{"minLength": per().Accounts.Digits003, "maxLength": per().Accounts.Digits003}, rules.CodePER003Account)
	case b.Code == per().NoRUCBank:
		n.at(num).rule(Schema{"minLength": per().Accounts.DigitsNoRUCBank, "maxLength": per().Accounts.DigitsNoRUCBank}, rules.CodePER004Account)
	default:
		n.at(num).rule(Schema{"minLength": per().CCIDigits, "maxLength": per().CCIDigits}, rules.CodeCCILength)
	}
}

// colCellphonePattern and perCellphonePattern are isColombiaCellphone and isPeruCellphone.
func colCellphonePattern() string {
	return fmt.Sprintf("^%c[0-9]{%d}$", col().CellphonePrefix, col().CellphoneDigits-1)
}

func perCellphonePattern() string {
	return fmt.Sprintf("^%c[0-9]{%d}$", per().CellphonePrefix, per().CellphoneDigits-1)
}

// ---- helpers ----

// narrowest is the query parameter a destination no body can pass is blamed on: the bank,
// else the account type, else the country.
func (q Query) narrowest() string {
	switch {
	case q.BankCode != "":
		return "query.bankCode"
	case q.AccountType != "":
		return "query.accountType"
	}
	return "query.country"
}

func queryNone(field, why string) error {
	return &rules.Problem{Kind: rules.KindInvalid, Title: "Invalid requirements query", Errors: []*rules.Error{{Kind: rules.KindInvalid, Code: rules.CodeRequirementsNone, Field: field,
		Message: "no payout to this destination passes the rules for this merchant: " + why}}}
}

// bankRules restricts bankCode to the country's table (CodeBankCode), and refuses the banks
// refuse gives a code for, each group with its code; when the query names a bank, to that one.
// It returns the banks refuse accepts, in code order, and false when the query's is not one.
func bankRules(n *node, q Query, country string, refuse func(rules.Bank) string) ([]string, bool) {
	var all, ok []string
	groups := map[string][]any{}
	for _, b := range rules.Banks(country) {
		all = append(all, b.Code)
		if c := refuse(b); c != "" {
			groups[c] = append(groups[c], b.Code)
		} else {
			ok = append(ok, b.Code)
		}
	}
	bank := n.at(pBA + "bankCode")
	if q.BankCode != "" {
		if !slices.Contains(ok, q.BankCode) {
			return ok, false
		}
		bank.rule(Schema{"const": q.BankCode}, rules.CodeBankCode)
		return ok, true
	}
	bank.rule(Schema{"enum": toAny(all)}, rules.CodeBankCode)
	codes := make([]string, 0, len(groups))
	for c := range groups {
		codes = append(codes, c)
	}
	sort.Strings(codes)
	for _, c := range codes {
		bank.rule(Schema{"not": Schema{"enum": groups[c]}}, c)
	}
	return ok, true
}

// whenBank adds then for the bank code: at once when the query names that bank, under an if
// on bankCode when it names none.
func (n *node) whenBank(q Query, code string, then *node) {
	switch q.BankCode {
	case code:
		n.merge(then)
	case "":
		n.when(has(pBA+"bankCode", Schema{"const": code}), then)
	}
}

func toAny[T any](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// wallet is the Colombia wallet of bank code, or none.
func wallet(code string) rules.ColombiaWallet {
	for _, w := range col().Wallets {
		if w.Bank == code {
			return w
		}
	}
	return rules.ColombiaWallet{}
}

func docTypes(ds []rules.DocumentType) []any {
	out := make([]any, len(ds))
	for i, d := range ds {
		out[i] = d.Type
	}
	return out
}

// ciAlternatives is words as case-insensitive alternatives of a regular expression, without
// flags that some dialects lack.
func ciAlternatives(words []string) string {
	alts := make([]string, len(words))
	for i, w := range words {
		var b strings.Builder
		for _, r := range w {
			b.WriteString(ciRune(r))
		}
		alts[i] = b.String()
	}
	return strings.Join(alts, "|")
}

func ciRune(r rune) string {
	lo, up := strings.ToLower(string(r)), strings.ToUpper(string(r))
	if lo != up {
		return "[" + lo + up + "]"
	}
	return regexp.QuoteMeta(string(r))
}

// has is a condition: the field at path is present and matches s.
func has(path string, s Schema) Schema {
	parts := strings.Split(path, ".")
	cur := s
	for i := len(parts) - 1; i >= 0; i-- {
		cur = Schema{"properties": Schema{parts[i]: cur}, "required": []any{parts[i]}}
	}
	return cur
}

// problems collects a query's errors as the validator collects a body's.
type problems struct {
	list []*rules.Error
}

func (ps *problems) add(code, field, msg string, value any) {
	ps.list = append(ps.list, &rules.Error{Code: code, Field: field, Message: rules.WithPublished(code, msg), Value: value})
}

func (ps *problems) addf(code, field string, value any, format string, args ...any) {
	ps.add(code, field, fmt.Sprintf(format, args...), value)
}

func (ps *problems) problem(title, subject string) *rules.Problem {
	if len(ps.list) == 0 {
		return nil
	}
	for _, e := range ps.list {
		e.Kind = rules.KindInvalid
	}
	noun := "fields break"
	if len(ps.list) == 1 {
		noun = "field breaks"
	}
	return &rules.Problem{Kind: rules.KindInvalid, Title: title, Detail: fmt.Sprintf("%d %s %s", len(ps.list), noun, subject), Errors: ps.list}
}

// node is an object location of the schema being built: its type, properties, required
// fields with their codes, and constraints each with its code.
type node struct {
	typ      any
	typeCode string
	props    map[string]*node
	order    []string
	required []string
	reqCodes map[string]string
	rules    []Schema
	closed   string // the code of an unknown property, when additionalProperties is false
}

func newNode(typ string) *node {
	n := &node{props: map[string]*node{}, reqCodes: map[string]string{}}
	if typ != "" {
		n.typ = typ
	}
	return n
}

func (n *node) child(name string) *node {
	c, ok := n.props[name]
	if !ok {
		c = newNode("")
		n.props[name] = c
		n.order = append(n.order, name)
	}
	return c
}

// at is the node at a dotted path below n.
func (n *node) at(path string) *node {
	c := n
	for _, p := range strings.Split(path, ".") {
		c = c.child(p)
	}
	return c
}

// require makes the last name of path required in its parent.
func (n *node) require(path, code string) {
	parent, name := n, path
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		parent, name = n.at(path[:i]), path[i+1:]
	}
	if !slices.Contains(parent.required, name) {
		parent.required = append(parent.required, name)
	}
	parent.reqCodes[name] = code
}

func (n *node) rule(s Schema, code string) {
	// null is absent (checkObject): an enum lets it through, the field's type decides.
	if v, ok := s["const"]; ok && len(s) == 1 {
		s = Schema{"enum": []any{v}}
	}
	if e, ok := s["enum"].([]any); ok {
		s["enum"] = append(e, nil)
	}
	if code != "" {
		s["x-code"] = code
	}
	n.rules = append(n.rules, s)
}

// when adds "if cond then then" at n.
func (n *node) when(cond Schema, then *node) {
	n.rules = append(n.rules, Schema{"if": cond, "then": then.render()})
}

// merge adds what o says to n.
func (n *node) merge(o *node) {
	if o.typ != nil {
		n.typ, n.typeCode = o.typ, o.typeCode
	}
	for _, name := range o.order {
		n.child(name).merge(o.props[name])
	}
	for _, r := range o.required {
		if !slices.Contains(n.required, r) {
			n.required = append(n.required, r)
		}
		n.reqCodes[r] = o.reqCodes[r]
	}
	n.rules = append(n.rules, o.rules...)
	if o.closed != "" {
		n.closed = o.closed
	}
}

func (n *node) render() Schema {
	s := Schema{}
	if n.typ != nil {
		s["type"] = n.typ
		if n.typeCode != "" {
			s["x-type-code"] = n.typeCode
		}
	}
	if len(n.order) > 0 {
		props := Schema{}
		for _, name := range n.order {
			props[name] = n.props[name].render()
		}
		s["properties"] = props
	}
	if n.closed != "" {
		s["additionalProperties"] = false
		s["x-additional-code"] = n.closed
	}
	if len(n.required) > 0 {
		s["required"] = toAny(n.required)
		codes := Schema{}
		for _, r := range n.required {
			codes[r] = n.reqCodes[r]
		}
		s["x-required-codes"] = codes
	}
	if len(n.rules) > 0 {
		s["allOf"] = toAny(n.rules)
	}
	return s
}
