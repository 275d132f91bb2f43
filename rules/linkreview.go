package rules

import (
	"context"
	"crypto/subtle"
	"strings"
	"unicode"
)

// A payout link's review: before a link takes the destination its beneficiary gave, the
// directory (where it knows the destination) names the holder, shown masked for the
// beneficiary to confirm, and says whether the bank chosen is one the destination is at;
// a merchant that gave the beneficiary's document has the beneficiary type its number.

// LinkOwnership is what the directory says of a link's destination.
type LinkOwnership struct {
	// Holder is the holder's name in full, "" when the directory knows none. It is shown
	// only masked (MaskName).
	Holder string
	// Unknown: the directory has no entry for the cellphone or key (the beneficiary may
	// have mistyped it).
	Unknown bool
	// OtherBank: the directory's entry does not list the bank the beneficiary chose.
	OtherBank bool
}

// Checked reports whether the directory answers for the destination at all.
func (o LinkOwnership) Checked() bool { return o.Holder != "" || o.Unknown || o.OtherBank }

// PeruCellphoneBrands are the directory's entity brands each Peru bank code reaches by
// cellphone in the simulated directory: a code whose brands are all missing, or not
// AVAILABLE, in a cellphone's entry is another bank than the one the number is at.
var PeruCellphoneBrands = map[string][]string{
	"002": {"Yape"}, // the bank behind Yape
	"037": {"Yape"},
	"040": {"Plin"},
	"003": {"Interbank", "Plin"},
	"011": {"BBVA", "Plin"},
}

// CheckLinkOwnership asks dir about the destination ba of a payout link in country: the
// Peru cellphone (account type 4) and the Colombia Bre-B key (account type 5) are in the
// directory; any other destination, or a nil directory, answers the zero LinkOwnership.
func CheckLinkOwnership(ctx context.Context, dir Directory, country string, ba BankAccount) (LinkOwnership, error) {
	var o LinkOwnership
	if dir == nil {
		return o, nil
	}
	number := string(ba.AccountNumber)
	switch {
	case country == "PER" && ba.AccountType == "4":
		entities, err := dir.PeruEntities(ctx, number)
		if err != nil {
			return o, err
		}
		if len(entities) == 0 {
			o.Unknown = true
			return o, nil
		}
		o.OtherBank = true
		for _, brand := range PeruCellphoneBrands[ba.BankCode] {
			for _, e := range entities {
				if strings.EqualFold(e.EntityBrand, brand) && e.Status == EntityAvailable {
					o.OtherBank = false
				}
			}
		}
		if o.Holder, err = dir.PeruHolder(ctx, number); err != nil {
			return o, err
		}
	case country == "COL" && ba.AccountType == "5":
		h, err := dir.BreBKey(ctx, number)
		if err != nil {
			return o, err
		}
		if h == nil {
			o.Unknown = true
			return o, nil
		}
		o.Holder = h.HolderName
		// The bank is optional with a key; one given must be the key's.
		o.OtherBank = ba.BankCode != "" && ba.BankCode != h.BankCode
	}
	return o, nil
}

// LinkDocument is the document the merchant gave in a link's beneficiary, masked but for
// its last two characters, and whether there is one the beneficiary must prove.
func LinkDocument(p *Payout) (masked string, ok bool) {
	n := []rune(normalDocument(p.Request.Beneficiary.Document.Number))
	if len(n) == 0 {
		return "", false
	}
	keep := min(2, len(n)/3)
	return strings.Repeat("•", len(n)-keep) + string(n[len(n)-keep:]), true
}

// LinkDocumentMatches reports whether typed is the number of the document the merchant gave
// in the link's beneficiary: spaces, dots and dashes aside, letters in any case; compared in
// constant time.
func LinkDocumentMatches(p *Payout, typed string) bool {
	want := normalDocument(p.Request.Beneficiary.Document.Number)
	got := normalDocument(typed)
	return want != "" && subtle.ConstantTimeCompare([]byte(want), []byte(got)) == 1
}

func normalDocument(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || r == '.' || r == '-' {
			return -1
		}
		return unicode.ToUpper(r)
	}, s)
}

// LinkOwnershipError is the error a review that fails ends in: the original's published
// message of 4041, then why, on field.
func LinkOwnershipError(field, why string) *Error {
	return &Error{Kind: KindRejected, Code: CodeLinkOwnership, Field: field, Message: WithPublished(CodeLinkOwnership, why)}
}
