package sandbox

import (
	"context"
	"errors"
	"hash/fnv"
	"strings"

	"payouts/rules"
)

// Directory is the sandbox's directory: an admin's entry wins; otherwise the
// answer follows from the last digit of a Peru cellphone (PeruDirectoryCases) and, for a
// Bre-B key, every key is known except those ending in 4027 or starting with "unknown"
// (after an @), with a holder, bank and account type derived from the key.
type Directory struct {
	Store rules.DirectoryStore
}

// PeruDirectoryCases are the simulated answers by the cellphone's last digit (README).
var PeruDirectoryCases = map[byte][]rules.WalletEntity{
	'0': {},
	'1': {{EntityBrand: "Yape", Status: rules.EntityAvailable}, {EntityBrand: "Plin", Status: rules.EntityAvailable}},
	'2': {{EntityBrand: "Yape", Status: rules.EntityAvailable}, {EntityBrand: "Interbank", Status: rules.EntityNotAvailable}},
	'3': {{EntityBrand: "Plin", Status: rules.EntityAvailable}},
	'4': {{EntityBrand: "Yape", Status: rules.EntityNotAvailable}},
	'5': {{EntityBrand: "BBVA", Status: rules.EntityAvailable}, {EntityBrand: "Interbank", Status: rules.EntityAvailable}, {EntityBrand: "Scotiabank", Status: rules.EntityNotAvailable}},
	'6': {{EntityBrand: "Yape", Status: rules.EntityAvailable}},
	'7': {{EntityBrand: "Yape", Status: rules.EntityAvailable}},
	'8': {{EntityBrand: "Yape", Status: rules.EntityAvailable}},
	'9': {{EntityBrand: "Yape", Status: rules.EntityAvailable}},
}

// PeruEntities is the admin's entry for phone, or the case of its last digit.
func (d *Directory) PeruEntities(ctx context.Context, phone string) ([]rules.WalletEntity, error) {
	e, err := d.Store.DirectoryEntry(ctx, "PER", phone)
	if err == nil {
		return append([]rules.WalletEntity{}, e.Entities...), nil
	}
	if !errors.Is(err, rules.ErrNotFound) {
		return nil, err
	}
	if phone == "" {
		return []rules.WalletEntity{}, nil
	}
	return append([]rules.WalletEntity{}, PeruDirectoryCases[phone[len(phone)-1]]...), nil
}

// PeruHolder is the holder's name of the admin's entry for phone, or one derived from the
// number; none for a number without entities.
func (d *Directory) PeruHolder(ctx context.Context, phone string) (string, error) {
	e, err := d.Store.DirectoryEntry(ctx, "PER", phone)
	if err == nil {
		if e.HolderName != "" || len(e.Entities) == 0 {
			return e.HolderName, nil
		}
	} else if !errors.Is(err, rules.ErrNotFound) {
		return "", err
	} else if phone == "" || len(PeruDirectoryCases[phone[len(phone)-1]]) == 0 {
		return "", nil
	}
	h := fnv.New32a()
	h.Write([]byte(phone))
	return peruDirectoryNames[h.Sum32()%uint32(len(peruDirectoryNames))], nil
}

// UnknownBreBKey reports whether the simulated directory knows no such key by default.
func UnknownBreBKey(key string) bool {
	k := strings.ToLower(strings.TrimPrefix(key, "@"))
	return strings.HasSuffix(key, "4027") || strings.HasPrefix(k, "unknown")
}

var (
	directoryNames = []string{"Andrea Martínez", "Juan Pérez", "Luisa Fernanda Gómez", "Carlos Rodríguez", "Valentina Ríos",
		"Santiago Herrera", "Camila Restrepo", "Mateo Castaño"}
	peruDirectoryNames = []string{"Ana Quispe", "Rosa Huamán", "Luis Mamani", "Carmen Flores", "Jorge Rojas",
		"María Torres", "José Chávez", "Lucía Vargas"}
	directoryBanks = []string{"001", "007", "013", "019", "051", "507", "551", "801"}
)

// BreBKey is the admin's entry for key, or the holder derived from the key.
func (d *Directory) BreBKey(ctx context.Context, key string) (*rules.BreBHolder, error) {
	e, err := d.Store.DirectoryEntry(ctx, "COL", key)
	if err == nil {
		if e.Absent {
			return nil, nil
		}
		return &rules.BreBHolder{Key: key, HolderName: e.HolderName, BankCode: e.BankCode, AccountType: e.AccountType}, nil
	}
	if !errors.Is(err, rules.ErrNotFound) {
		return nil, err
	}
	if UnknownBreBKey(key) {
		return nil, nil
	}
	h := fnv.New32a()
	h.Write([]byte(key))
	n := h.Sum32()
	kind := "SAVINGS"
	if n%5 == 0 {
		kind = "CURRENT"
	}
	return &rules.BreBHolder{Key: key, HolderName: directoryNames[n%uint32(len(directoryNames))],
		BankCode: directoryBanks[(n/7)%uint32(len(directoryBanks))], AccountType: kind}, nil
}
