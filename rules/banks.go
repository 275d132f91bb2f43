package rules

import (
	"fmt"
	"sort"
)

// Bank is one row of a country's bank table: the code and
// the channels it offers. A retired bank offers none.
type Bank struct {
	Country string
	Code    string
	Group   string // the letter of the spec table's group, or "Retired"
	// KeyRealTime: real-time by Bre-B key (Colombia only).
	KeyRealTime bool
	// RealTime: Colombia real-time by phone/account; Peru real-time.
	RealTime bool
	// Batch: non-real-time.
	Batch   bool
	Wallet  bool
	Retired bool
}

// bankGroup is one row of a spec bank table: codes that share their channel flags.
type bankGroup struct {
	name                  string
	keyRealTime, realTime bool
	batch, retired        bool
	codes                 []string
}

// colombiaBankGroups is the Colombia bank table (flags: key RT, phone/account RT, non-RT).
var colombiaBankGroups = []bankGroup{
	{name: "A", keyRealTime: true, realTime: true, batch: true, codes: []string{
		"001", "002", "006", "007", "013", "019", "023", "032", "051", "052", "059", "061", "062",
		"063", "066", "069", "283", "292", "507", "551", "801", "808"}},
	{name: "B", keyRealTime: true, batch: true, codes: []string{
		"012", "047", "053", "058", "070", "289", "303", "805", "809", "819", "1559", "1561"}},
	{name: "C", realTime: true, batch: true, codes: []string{"040", "803", "822"}},
	{name: "D", batch: true, codes: []string{
		"009", "031", "042", "060", "064", "065", "067", "071", "083", "084", "086", "087", "088",
		"089", "090", "121", "342", "370", "550", "560", "637", "683", "685", "812", "814", "824",
		"1053", "1291", "1558", "1560"}},
	{name: "E", realTime: true, codes: []string{"820", "821", "823"}},
	{name: "F", keyRealTime: true, codes: codeRange(826, 935)},
	// 099 is retired in the list but is the bank code of the spec's cash sample: the Colombia
	// rules accept it for cash (accountType 3) only.
	{name: "Retired", retired: true, codes: []string{"041", "099", "298", "1062", "1063", "1069", "1283", "1292"}},
}

// colombiaWallets are the Colombia wallet codes.
var colombiaWallets = []string{"507", "551"}

// colombiaCashBank is the bank code of Colombia cash payouts.
const colombiaCashBank = "099"

// peruBankGroups is the Peru bank table (flags: real-time, non-real-time).
var peruBankGroups = []bankGroup{
	{name: "A", realTime: true, batch: true, codes: []string{
		"001", "002", "003", "004", "005", "006", "007", "011", "018", "019", "020", "021", "023",
		"024", "028", "032", "034", "047"}},
	{name: "B", batch: true, codes: []string{"008", "014", "016", "017", "022", "027"}},
	{name: "C", realTime: true, codes: []string{
		"030", "031", "035", "036", "037", "038", "039", "040", "041", "043", "044", "045", "046"}},
	{name: "Retired", retired: true, codes: []string{"026", "029", "033", "042", "048", "049"}},
}

// peruWallets are the Peru wallet codes.
var peruWallets = []string{"037", "040", "043", "045"}

var (
	colombiaBanks = buildBanks("COL", colombiaBankGroups, colombiaWallets)
	peruBanks     = buildBanks("PER", peruBankGroups, peruWallets)
)

// codeRange lists the 3-digit codes from..to inclusive (group F of the Colombia table).
func codeRange(from, to int) []string {
	codes := make([]string, 0, to-from+1)
	for c := from; c <= to; c++ {
		codes = append(codes, fmt.Sprintf("%03d", c))
	}
	return codes
}

// buildBanks indexes a table by code. A code in two groups, or a wallet missing from the
// table, is a mistake in this file, so it panics at start-up (and in every test).
func buildBanks(country string, groups []bankGroup, wallets []string) map[string]Bank {
	banks := map[string]Bank{}
	for _, g := range groups {
		for _, c := range g.codes {
			if _, dup := banks[c]; dup {
				panic(fmt.Sprintf("rules: %s bank code %s is in two groups", country, c))
			}
			banks[c] = Bank{Country: country, Code: c, Group: g.name, KeyRealTime: g.keyRealTime,
				RealTime: g.realTime, Batch: g.batch, Retired: g.retired}
		}
	}
	for _, c := range wallets {
		b, ok := banks[c]
		if !ok {
			panic(fmt.Sprintf("rules: %s wallet %s is not in the bank table", country, c))
		}
		b.Wallet = true
		banks[c] = b
	}
	return banks
}

// LookupBank finds a code in the bank table of country (COL or PER), retired codes included.
func LookupBank(country, code string) (Bank, bool) {
	var b Bank
	var ok bool
	switch country {
	case "COL":
		b, ok = colombiaBanks[code]
	case "PER":
		b, ok = peruBanks[code]
	}
	return b, ok
}

// Banks lists the bank table of country (COL or PER) in code order, for documentation.
func Banks(country string) []Bank {
	var table map[string]Bank
	switch country {
	case "COL":
		table = colombiaBanks
	case "PER":
		table = peruBanks
	}
	list := make([]Bank, 0, len(table))
	for _, b := range table {
		list = append(list, b)
	}
	sort.Slice(list, func(i, j int) bool {
		if len(list[i].Code) != len(list[j].Code) {
			return len(list[i].Code) < len(list[j].Code)
		}
		return list[i].Code < list[j].Code
	})
	return list
}
