package rules_test

import (
	"context"
	"testing"

	"payouts/rules"
	"payouts/rules/sandbox"
)

// memDirectory is an admin's entries in memory.
type memDirectory map[string]rules.DirectoryEntry

func (m memDirectory) DirectoryEntry(_ context.Context, country, id string) (*rules.DirectoryEntry, error) {
	e, ok := m[country+"/"+id]
	if !ok {
		return nil, rules.ErrNotFound
	}
	return &e, nil
}

func (m memDirectory) PutDirectoryEntry(_ context.Context, country, id string, e rules.DirectoryEntry) error {
	m[country+"/"+id] = e
	return nil
}

func (m memDirectory) DeleteDirectoryEntry(_ context.Context, country, id string) error {
	delete(m, country+"/"+id)
	return nil
}

// What the directory says of a payout link's destination before it is taken: the holder to
// show masked, a number or key it does not know, a bank the destination is not at.
func TestCheckLinkOwnership(t *testing.T) {
	dir := &sandbox.Directory{Store: memDirectory{
		"PER/987650001": {Entities: []rules.WalletEntity{{EntityBrand: "Plin", Status: rules.EntityAvailable}}, HolderName: "Ana Martínez"},
		"COL/@anaríos":  {HolderName: "Ana Ríos", BankCode: "007", AccountType: "SAVINGS"},
		"COL/@gone":     {Absent: true},
	}}
	ba := func(kind, bank, number string) rules.BankAccount {
		return rules.BankAccount{AccountType: rules.Text(kind), BankCode: bank, AccountNumber: rules.Text(number)}
	}
	for _, tc := range []struct {
		name    string
		country string
		ba      rules.BankAccount
		noDir   bool
		holder  string // "" none; "*" any derived name
		unknown bool
		other   bool
	}{
		{name: "2.5 PER cellphone at Yape (ending 1: Yape and Plin) through 002, the bank behind Yape", country: "PER", ba: ba("4", "002", "987654321"), holder: "*"},
		{name: "2.5 PER cellphone at Plin (ending 1) through 040", country: "PER", ba: ba("4", "040", "987654321"), holder: "*"},
		{name: "2.5 PER cellphone ending 3 is Plin only: Yape's 037 is another bank", country: "PER", ba: ba("4", "037", "987654323"), holder: "*", other: true},
		{name: "2.5 PER cellphone ending 3 through Interbank, a Plin bank", country: "PER", ba: ba("4", "003", "987654323"), holder: "*"},
		{name: "wire 6 PER cellphone ending 4: Yape NOT_AVAILABLE is another bank", country: "PER", ba: ba("4", "002", "987654324"), holder: "*", other: true},
		{name: "wire 6 PER cellphone ending 2: Interbank NOT_AVAILABLE is another bank", country: "PER", ba: ba("4", "003", "987654322"), holder: "*", other: true},
		{name: "2.5 PER cellphone through a bank the sandbox names no brand of", country: "PER", ba: ba("4", "030", "987654321"), holder: "*", other: true},
		{name: "wire 6 PER cellphone ending 0: no entity (PV002), unknown", country: "PER", ba: ba("4", "002", "987654320"), unknown: true},
		{name: "wire 6 PER admin entry names the holder", country: "PER", ba: ba("4", "040", "987650001"), holder: "Ana Martínez"},
		{name: "2.5 PER bank account: not in the directory", country: "PER", ba: ba("2", "002", "19112345678901")},
		{name: "2.4 COL Bre-B key without a bank: the key's holder", country: "COL", ba: ba("5", "", "@anaríos"), holder: "Ana Ríos"},
		{name: "2.4 COL Bre-B key with its own bank", country: "COL", ba: ba("5", "007", "@anaríos"), holder: "Ana Ríos"},
		{name: "2.4 COL Bre-B key with another bank", country: "COL", ba: ba("5", "001", "@anaríos"), holder: "Ana Ríos", other: true},
		{name: "2.4 COL Bre-B key the directory does not know (4027 ending)", country: "COL", ba: ba("5", "", "3001234027"), unknown: true},
		{name: "2.4 COL Bre-B key an admin made absent", country: "COL", ba: ba("5", "", "@gone"), unknown: true},
		{name: "2.4 COL savings account: not in the directory", country: "COL", ba: ba("2", "007", "12345678901")},
		{name: "COL Bre-B key without a directory (--sandbox=false)", country: "COL", ba: ba("5", "", "@anaríos"), noDir: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := rules.Directory(dir)
			if tc.noDir {
				d = nil
			}
			o, err := rules.CheckLinkOwnership(context.Background(), d, tc.country, tc.ba)
			if err != nil {
				t.Fatal(err)
			}
			if tc.holder == "*" && o.Holder == "" || tc.holder != "*" && o.Holder != tc.holder || o.Unknown != tc.unknown || o.OtherBank != tc.other {
				t.Errorf("got %+v, want holder %q unknown %v other bank %v", o, tc.holder, tc.unknown, tc.other)
			}
		})
	}
}

// The sandbox's derived Peru holder is the same name for the same number.
func TestPeruHolderIsDeterministic(t *testing.T) {
	dir := &sandbox.Directory{Store: memDirectory{}}
	a, _ := dir.PeruHolder(context.Background(), "987654321")
	b, _ := dir.PeruHolder(context.Background(), "987654321")
	if a == "" || a != b {
		t.Errorf("%q then %q", a, b)
	}
}

// The document the beneficiary types is the merchant's, whatever its spaces, dots, dashes
// or letters' case; it is shown masked but for its last characters.
func TestLinkDocument(t *testing.T) {
	p := &rules.Payout{}
	p.Request.Beneficiary.Document = rules.Document{Type: 1, Number: "1020304050"}
	if m, ok := rules.LinkDocument(p); !ok || m != "••••••••50" {
		t.Errorf("masked %q %v", m, ok)
	}
	for typed, want := range map[string]bool{
		"1020304050": true, "1.020.304.050": true, " 1020-304-050 ": true,
		"1020304051": false, "102030405": false, "": false, "10203040500": false,
	} {
		if got := rules.LinkDocumentMatches(p, typed); got != want {
			t.Errorf("%q: %v, want %v", typed, got, want)
		}
	}
	p.Request.Beneficiary.Document = rules.Document{Type: 7, Number: "ab-12345"}
	if !rules.LinkDocumentMatches(p, "AB12345") {
		t.Error("a passport's letters in another case")
	}
	p.Request.Beneficiary.Document = rules.Document{}
	if _, ok := rules.LinkDocument(p); ok || rules.LinkDocumentMatches(p, "") {
		t.Error("no document: nothing to prove, nothing matches")
	}
}

// A failed review's error begins with the original's published message of 4041.
func TestLinkOwnershipError(t *testing.T) {
	e := rules.LinkOwnershipError("document", "the document is not the one the merchant gave")
	if e.Code != "4041" || e.Message != rules.Published("4041")+": the document is not the one the merchant gave" {
		t.Errorf("%+v", e)
	}
}
