package templates_test

import (
	"math"
	"testing"

	"payouts/templates"
)

func TestFormatAmountPerCurrencyFromMinorUnits(t *testing.T) {
	for _, tc := range []struct {
		minor    int64
		currency string
		want     string
	}{
		{100000, "PEN", "S/ 1,000.00"},
		{100000, "USD", "US$ 1,000.00"},
		{5000000, "COP", "COP $ 50.000,00"},
		{1211000000, "COP", "COP $ 12.110.000,00"},
		{5, "PEN", "S/ 0.05"},
		{99, "USD", "US$ 0.99"},
		{123456789, "PEN", "S/ 1,234,567.89"},
		{100, "COP", "COP $ 1,00"},
		{100050, "EUR", "EUR 1,000.50"},
		{-2500, "PEN", "-S/ 25.00"},
		{math.MinInt64, "USD", "-US$ 92,233,720,368,547,758.08"},
		{800000, "USD", "US$ 8,000.00"},
		{3000000, "PEN", "S/ 30,000.00"},
		{0, "PEN", "S/ 0.00"},
	} {
		if got := templates.FormatAmount(tc.currency, tc.minor); got != tc.want {
			t.Errorf("FormatAmount(%d, %s) = %q, want %q", tc.minor, tc.currency, got, tc.want)
		}
	}
}
