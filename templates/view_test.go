package templates_test

import (
	"testing"
	"time"

	"payouts/templates"
)

func TestFormatAmount(t *testing.T) {
	cases := []struct {
		currency string
		minor    int64
		want     string
	}{
		{"PEN", 100000, "S/ 1,000.00"},
		{"USD", 100000, "US$ 1,000.00"},
		{"PEN", 5, "S/ 0.05"},
		{"PEN", 99, "S/ 0.99"},
		{"PEN", 100, "S/ 1.00"},
		{"PEN", 123456789, "S/ 1,234,567.89"},
		{"USD", 800000, "US$ 8,000.00"},
		{"PEN", 3000000, "S/ 30,000.00"},
		{"COP", 5000000, "COP 50,000.00"},
		{"PEN", 0, "S/ 0.00"},
	}
	for _, tc := range cases {
		if got := templates.FormatAmount(tc.currency, tc.minor); got != tc.want {
			t.Errorf("FormatAmount(%s, %d) = %q, want %q", tc.currency, tc.minor, got, tc.want)
		}
	}
}

func TestClock(t *testing.T) {
	for d, want := range map[time.Duration]string{15 * time.Minute: "15:00", 61 * time.Second: "1:01", 9 * time.Second: "0:09", -time.Second: "0:00"} {
		if got := templates.Clock(d); got != want {
			t.Errorf("Clock(%v) = %q, want %q", d, got, want)
		}
	}
}
