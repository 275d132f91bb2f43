package templates

import (
	"strconv"
	"strings"
)

// FormatAmount writes an amount of minor units (two implied decimals) as the beneficiary
// reads it, on the card form and in emails: "S/ 1,000.00" and "US$ 1,000.00" in Peru, "COP $ 50.000,00" in Colombia (dot
// for thousands, comma for decimals). No floating point touches it.
func FormatAmount(currency string, minor int64) string {
	sign := ""
	u := uint64(minor)
	if minor < 0 {
		sign, u = "-", uint64(-(minor+1))+1 // also right for math.MinInt64
	}
	units, cents := u/100, u%100
	c := strconv.FormatUint(cents, 10)
	if cents < 10 {
		c = "0" + c
	}
	switch currency {
	case "PEN":
		return sign + "S/ " + group(units, ",") + "." + c
	case "USD":
		return sign + "US$ " + group(units, ",") + "." + c
	case "COP":
		return sign + "COP $ " + group(units, ".") + "," + c
	}
	return sign + currency + " " + group(units, ",") + "." + c
}

// group writes n with sep between groups of three digits.
func group(n uint64, sep string) string {
	s := strconv.FormatUint(n, 10)
	if len(s) <= 3 {
		return s
	}
	var b strings.Builder
	head := len(s) % 3
	if head > 0 {
		b.WriteString(s[:head])
	}
	for i := head; i < len(s); i += 3 {
		if b.Len() > 0 {
			b.WriteString(sep)
		}
		b.WriteString(s[i : i+3])
	}
	return b.String()
}
