package rules

import (
	"context"
	"strings"
	"unicode/utf8"
)

// The simulated directory: who can be paid at a Peru cellphone (the wallets and
// banks behind it, for the original's beneficiary lookup) and who holds a Colombia Bre-B key.
// It moves no money. A real connector (a wallet scanner, the Bre-B directory) implements
// Directory; this binary ships only the sandbox's (rules/sandbox), deterministic from the
// number or key plus the entries an admin puts.

// Entity statuses of the Peru lookup (wire).
const (
	EntityAvailable    = "AVAILABLE"
	EntityNotAvailable = "NOT_AVAILABLE"
)

// WalletEntity is a wallet or bank that can (or cannot) take a payout to a Peru cellphone.
type WalletEntity struct {
	EntityBrand string `json:"entityBrand" doc:"1 to 40 characters: Yape, Plin, a bank"`
	Status      string `json:"status" doc:"AVAILABLE or NOT_AVAILABLE"`
}

// BreBHolder is what the directory knows of a Colombia Bre-B key.
type BreBHolder struct {
	Key         string `json:"key"`
	HolderName  string `json:"holderName"` // in full; shown masked
	BankCode    string `json:"bankCode"`
	AccountType string `json:"accountType"` // SAVINGS or CURRENT
}

// Directory answers who is behind a Peru cellphone or a Colombia Bre-B key.
type Directory interface {
	// PeruEntities lists the entities of a Peru cellphone; none is an empty list.
	PeruEntities(ctx context.Context, phone string) ([]WalletEntity, error)
	// BreBKey finds the holder of a Bre-B key; nil when the directory knows no such key.
	BreBKey(ctx context.Context, key string) (*BreBHolder, error)
	// PeruHolder is the name of the holder of a Peru cellphone's wallets, in full; "" when
	// the directory knows none.
	PeruHolder(ctx context.Context, phone string) (string, error)
}

// DirectoryEntry is an entry an admin put in the simulated directory: for Peru the entities
// of a cellphone (an empty list: none) and optionally their holder's name, for Colombia the
// holder of a key, or Absent.
type DirectoryEntry struct {
	Entities    []WalletEntity `json:"entities,omitempty"`
	HolderName  string         `json:"holderName,omitempty"`
	BankCode    string         `json:"bankCode,omitempty"`
	AccountType string         `json:"accountType,omitempty"`
	Absent      bool           `json:"absent,omitempty"`
}

// DirectoryStore keeps the admin's entries, by country (PER, COL) and phone or key.
type DirectoryStore interface {
	DirectoryEntry(ctx context.Context, country, id string) (*DirectoryEntry, error) // ErrNotFound when none
	PutDirectoryEntry(ctx context.Context, country, id string, e DirectoryEntry) error
	DeleteDirectoryEntry(ctx context.Context, country, id string) error
}

// CheckDirectoryEntry validates an admin's entry for country and id, reporting every problem.
func CheckDirectoryEntry(country, id string, e *DirectoryEntry) error {
	var ps problems
	switch country {
	case "PER":
		if !isPeruCellphone(id) {
			ps.add(CodeDirectoryEntry, "path.id", "a Peru cellphone has 9 digits and starts with 9", id)
		}
		if e.BankCode != "" || e.AccountType != "" || e.Absent {
			ps.add(CodeDirectoryEntry, "bankCode", "a Peru entry has only entities (an empty list: none) and their holder's name", nil)
		}
		if n := utf8.RuneCountInString(strings.TrimSpace(e.HolderName)); e.HolderName != "" && (n < 2 || n > 100) {
			ps.add(CodeDirectoryEntry, "holderName", "2 to 100 characters", e.HolderName)
		}
		for i, en := range e.Entities {
			if strings.TrimSpace(en.EntityBrand) == "" || utf8.RuneCountInString(en.EntityBrand) > 40 {
				ps.add(CodeDirectoryEntry, "entities["+itoa(int64(i))+"].entityBrand", "1 to 40 characters", en.EntityBrand)
			}
			if en.Status != EntityAvailable && en.Status != EntityNotAvailable {
				ps.add(CodeDirectoryEntry, "entities["+itoa(int64(i))+"].status", "AVAILABLE or NOT_AVAILABLE", en.Status)
			}
		}
		if len(e.Entities) > 20 {
			ps.add(CodeDirectoryEntry, "entities", "at most 20 entities", len(e.Entities))
		}
	case "COL":
		if _, why := breBKeyProblem(id); why != "" {
			ps.add(CodeDirectoryEntry, "path.id", why, id)
		}
		if len(e.Entities) > 0 {
			ps.add(CodeDirectoryEntry, "entities", "a Colombia entry is a key's holder, not entities", nil)
		}
		if e.Absent {
			if e.HolderName != "" || e.BankCode != "" || e.AccountType != "" {
				ps.add(CodeDirectoryEntry, "absent", "an absent key has no holder", true)
			}
			break
		}
		if n := utf8.RuneCountInString(strings.TrimSpace(e.HolderName)); n < 2 || n > 100 {
			ps.add(CodeDirectoryEntry, "holderName", "2 to 100 characters", e.HolderName)
		}
		if b, ok := LookupBank("COL", e.BankCode); !ok || !b.KeyRealTime {
			ps.add(CodeDirectoryEntry, "bankCode", "a Colombia bank that takes Bre-B keys", e.BankCode)
		}
		if e.AccountType != "SAVINGS" && e.AccountType != "CURRENT" {
			ps.add(CodeDirectoryEntry, "accountType", "SAVINGS or CURRENT", e.AccountType)
		}
	default:
		ps.add(CodeDirectoryEntry, "path.country", "PER or COL", country)
	}
	if p := ps.problem(KindInvalid, "Missing or invalid data", "of the directory entry"); p != nil {
		return p
	}
	return nil
}

// IsPeruCellphone reports whether s is a Peru cellphone: 9 digits starting with 9.
func IsPeruCellphone(s string) bool { return isPeruCellphone(s) }

// MaskName shows the first two letters of each word of a holder's name: "An**** Ma******".
func MaskName(name string) string {
	words := strings.Fields(name)
	for i, w := range words {
		r := []rune(w)
		keep := min(2, len(r))
		words[i] = string(r[:keep]) + strings.Repeat("*", max(len(r)-keep, 1))
	}
	return strings.Join(words, " ")
}

// BreBKeyProblem says what is wrong with a Bre-B key and its code, or "".
func BreBKeyProblem(k string) (code, why string) { return breBKeyProblem(k) }
