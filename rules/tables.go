package rules

import (
	"maps"
	"slices"
	"time"
)

// Tables is a read-only account of the rule tables the validator runs, for what documents
// them from the tables themselves rather than from a copy (the requirements schema,
// rules/requirements). Each call answers fresh values: writing to them changes neither the
// validator nor the next answer.
func Tables() RuleTables {
	return RuleTables{
		Shape:           shapeFields("", requestShape),
		MaxAmountDigits: maxAmountDigits,
		DummyEmail: DummyEmails{Addresses: sortedKeys(dummyAddresses), LocalParts: sortedKeys(dummyLocalParts),
			Domains: sortedKeys(dummyDomains)},
		Colombia: colombiaTables(),
		Peru:     peruTables(),
	}
}

// RuleTables are the tables both countries share and each country's own.
type RuleTables struct {
	Shape           []ShapeField // the generic contract, in name order
	MaxAmountDigits int          // the length limit of amount in both countries
	DummyEmail      DummyEmails
	Colombia        ColombiaTables
	Peru            PeruTables
}

// ShapeField is one field of the generic contract: its JSON types, whether the contract
// requires it, its limits and formats, each with the code the validator answers.
type ShapeField struct {
	Name        string
	Types       []string // JSON Schema type names: "string", "number", "integer", "object"
	Required    bool
	MissingCode string
	TypeCode    string // the code of a wrong JSON type; CodeWrongType when empty
	MaxLen      int    // in characters; 0 is no limit of its own
	Format      string // "alpha3", "url", "email" or ""
	FormatCode  string
	// Limited: MaxTextLength applies to the field; EachLimited: to every field of the object.
	Limited, EachLimited bool
	Fields               []ShapeField // an object's, in name order
}

// DummyEmails are the addresses, local parts and domains a beneficiary's email may not use,
// each sorted.
type DummyEmails struct {
	Addresses, LocalParts, Domains []string
}

// DocumentType is a row of a country's document table: lengths in digits, and the code of a
// number too short or too long (one code for both in Peru).
type DocumentType struct {
	Type                      int
	Min, Max                  int
	TooShortCode, TooLongCode string
	NoLeadingZero             bool
}

// ColombiaTables are the Colombia rules' tables and limits. Amounts are in minor units.
type ColombiaTables struct {
	Current, Savings, Cash, Cellphone, Key AccountType
	Documents                              []DocumentType // in type order
	WalletDocuments                        []int          // the document types wallets take, in order
	Wallets                                []ColombiaWallet
	CashBank                               string
	AccountRules                           map[string]AccountLength // by bank code, for accountType 1 and 2
	AccountMin, AccountMax                 int                      // digits of an account number
	CellphoneDigits                        int
	CellphonePrefix                        byte
	KeyMin, KeyMax                         int // the length of a Bre-B key
	BankMin, RealTimeMax, KeyAmountMax     int64
	WalletMin, WalletMax, CashMin, CashMax int64
	EmailMax                               int
}

// AccountType is an account type's value and the text forms a country also takes for it
// (Colombia: compared without case, spaces, hyphens, underscores and dots), sorted.
type AccountType struct {
	Value int
	Texts []string
}

// ColombiaWallet is a wallet's bank code and the codes of its refusals: an account type it
// does not take, a cellphone number of the wrong length or prefix.
type ColombiaWallet struct {
	Bank                             string
	TypeCode, LengthCode, PrefixCode string
}

// AccountLength is a bank's rule on the length of its account numbers: the lengths allowed
// when Only is set, else bounds (0 is none).
type AccountLength struct {
	Only     []int
	Min, Max int
	Code     string
}

// AccountType reads a Colombia accountType, numeric or text, as the validator does.
func (ColombiaTables) AccountType(s string) (int, bool) { return colombiaAccountTypeValue(s) }

// CashWindow is the day of sending in Colombia and the latest expirationDate a cash payout
// sent now may have: the claim's last day is after today and at most latest.
func (ColombiaTables) CashWindow(now time.Time) (today, latest time.Time) { return colCashWindow(now) }

func colombiaTables() ColombiaTables {
	texts := map[int][]string{}
	for w, t := range colAccountTypeText {
		texts[t] = append(texts[t], w)
	}
	at := func(v int) AccountType { return AccountType{Value: v, Texts: slices.Sorted(slices.Values(texts[v]))} }
	c := ColombiaTables{
		Current: at(colCurrent), Savings: at(colSavings), Cash: at(colCash), Cellphone: at(colCellphone), Key: at(colKey),
		WalletDocuments: slices.Sorted(maps.Keys(colWalletDocTypes)),
		CashBank:        colombiaCashBank,
		AccountRules:    map[string]AccountLength{},
		AccountMin:      colAccountMin, AccountMax: colAccountMax,
		CellphoneDigits: colCellphoneDigits, CellphonePrefix: colCellphonePrefix,
		KeyMin: breBKeyMin, KeyMax: breBKeyMax,
		BankMin: colBankMin, RealTimeMax: colRealTimeMax, KeyAmountMax: colKeyMax,
		WalletMin: colWalletMin, WalletMax: colWalletMax, CashMin: colCashMin, CashMax: colCashMax,
		EmailMax: colEmailMax,
	}
	for _, t := range slices.Sorted(maps.Keys(colDocTypes)) {
		d := colDocTypes[t]
		c.Documents = append(c.Documents, DocumentType{Type: t, Min: d.min, Max: d.max, TooShortCode: d.minCode, TooLongCode: d.maxCode, NoLeadingZero: d.noLeadingZero})
	}
	for _, code := range colombiaWallets {
		w := colWallets[code]
		c.Wallets = append(c.Wallets, ColombiaWallet{Bank: code, TypeCode: w.typeCode, LengthCode: w.lengthCode, PrefixCode: w.prefixCode})
	}
	for code, r := range colAccountRules {
		c.AccountRules[code] = AccountLength{Only: slices.Clone(r.only), Min: r.min, Max: r.max, Code: r.code}
	}
	return c
}

// PeruTables are the Peru rules' tables and limits. Amounts are in minor units.
type PeruTables struct {
	Current, Savings, Cellphone, Card int // account types
	Documents                         []DocumentType
	CCIDigits, EmailMax               int
	ExpirationMin, ExpirationMax      int // a card session's expirationTime, in minutes
	CellphoneDigits                   int
	CellphonePrefix                   byte
	PENMax, USDMax, CellphoneMax      int64
	// ExtrasWallet asks for a description and subMerchantInfo.name, and has its own maximum
	// for a cellphone payout.
	ExtrasWallet             string
	ExtrasWalletCellphoneMax int64
	CellphoneOnly            map[string]bool // wallets that take only accountType 4
	NoRUCBank                string          // a bank that takes no RUC document
	// CCIPrefix is the first 3 digits of a CCI at each bank of the table, CCIPrefixCode the
	// code of a CCI without its bank's prefix where it has its own, BankOfCCI a CCI prefix's bank.
	CCIPrefix, CCIPrefixCode, BankOfCCI map[string]string
	Accounts                            PeruAccounts
}

// PeruAccounts are the banks whose account numbers have rules of their own, and the digits
// of those numbers.
type PeruAccounts struct {
	Bank001, Bank002, Bank003                     string
	Digits001, LongDigits001                      int // a long 001 account has 00 at digits 9–10
	CurrentDigits002, SavingsDigits002, Digits003 int // 002's third-last digit is the currency
	DigitsNoRUCBank                               int
}

func peruTables() PeruTables {
	p := PeruTables{
		Current: perCurrent, Savings: perSavings, Cellphone: perCellphone, Card: perCard,
		CCIDigits: perCCIDigits, EmailMax: perEmailMax,
		ExpirationMin: perExpirationMin, ExpirationMax: perExpirationMax,
		CellphoneDigits: perCellphoneDigits, CellphonePrefix: perCellphonePrefix,
		PENMax: perPENMax, USDMax: perUSDMax, CellphoneMax: perCellphoneMax,
		ExtrasWallet: perWalletWithExtras, ExtrasWalletCellphoneMax: perWallet037PhoneMax,
		CellphoneOnly: maps.Clone(perWalletsCellphoneOnly),
		NoRUCBank:     perBankNoRUC,
		CCIPrefix:     map[string]string{},
		CCIPrefixCode: maps.Clone(perCCIPrefixCode),
		BankOfCCI:     maps.Clone(perBankOfCCI),
		Accounts: PeruAccounts{Bank001: perBank001, Bank002: perBank002, Bank003: perBank003,
			Digits001: per001Digits, LongDigits001: per001LongDigits,
			CurrentDigits002: per002CurrentDigits, SavingsDigits002: per002SavingsDigits, Digits003: per003Digits,
			DigitsNoRUCBank: per004Digits},
	}
	for _, t := range slices.Sorted(maps.Keys(perDocTypes)) {
		d := perDocTypes[t]
		p.Documents = append(p.Documents, DocumentType{Type: t, Min: d.min, Max: d.max, TooShortCode: d.code, TooLongCode: d.code})
	}
	for _, b := range Banks("PER") {
		p.CCIPrefix[b.Code] = cciPrefix(b.Code)
	}
	return p
}

// shapeFields is a shape's fields in name order; prefix is their location, with its dot.
func shapeFields(prefix string, shape map[string]field) []ShapeField {
	var out []ShapeField
	for _, name := range slices.Sorted(maps.Keys(shape)) {
		f, path := shape[name], prefix+name
		sf := ShapeField{Name: name, Required: f.required, MissingCode: f.missingCode, TypeCode: f.typeCode,
			MaxLen: f.maxLen, FormatCode: f.formatCode, Limited: f.typ != tObject && limited(path),
			EachLimited: f.typ == tObject && slices.Contains(limitedFields, path+".*")}
		switch f.typ {
		case tObject:
			sf.Types = []string{"object"}
			sf.Fields = shapeFields(path+".", f.shape)
		case tNumber:
			sf.Types = []string{"number"}
		case tInteger:
			sf.Types = []string{"integer"}
		case tStringOrNumber:
			sf.Types = []string{"string", "number"}
		default:
			sf.Types = []string{"string"}
		}
		sf.Format = map[format]string{fAlpha3: "alpha3", fURL: "url", fEmail: "email"}[f.format]
		out = append(out, sf)
	}
	return out
}

func sortedKeys(set map[string]bool) []string { return slices.Sorted(maps.Keys(set)) }
