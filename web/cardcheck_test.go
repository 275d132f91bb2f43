package web

import (
	"testing"
	"time"
)

func TestCheckCard(t *testing.T) {
	now := time.Date(2026, 11, 21, 3, 0, 0, 0, time.UTC) // 20 November in Lima
	ok := cardInput{Holder: "Ana Quispe", PAN: "4111 1111 1111 1111", Expiry: "11/26", CVV: "123"}
	cases := []struct {
		name  string
		edit  func(*cardInput)
		field string
		key   string
	}{
		{"a good VISA", func(*cardInput) {}, "", ""},
		{"13 digits, Luhn-valid", func(c *cardInput) { c.PAN = "4222222222222" }, "", ""},
		{"19 digits, Luhn-valid", func(c *cardInput) { c.PAN = "4000000000000000006" }, "", ""},
		{"dashes are spacing", func(c *cardInput) { c.PAN = "4242-4242-4242-4242" }, "", ""},
		{"MM/YYYY", func(c *cardInput) { c.Expiry = "12/2030" }, "", ""},
		{"MMYY", func(c *cardInput) { c.Expiry = "1130" }, "", ""},
		{"Spanish name", func(c *cardInput) { c.Holder = "María José Núñez-O'Brien" }, "", ""},
		{"Mastercard is not VISA", func(c *cardInput) { c.PAN = "5555555555554444" }, "pan", "pan.visa"},
		{"Luhn", func(c *cardInput) { c.PAN = "4111111111111112" }, "pan", "pan.luhn"},
		{"12 digits", func(c *cardInput) { c.PAN = "411111111111" }, "pan", "pan.length"},
		{"20 digits", func(c *cardInput) { c.PAN = "41111111111111111111" }, "pan", "pan.length"},
		{"letters", func(c *cardInput) { c.PAN = "4111x11111111111" }, "pan", "pan.digits"},
		{"no number", func(c *cardInput) { c.PAN = "" }, "pan", "pan.required"},
		{"last month", func(c *cardInput) { c.Expiry = "10/26" }, "expiry", "expiry.past"},
		{"this month in Lima is still valid", func(c *cardInput) { c.Expiry = "11/26" }, "", ""},
		{"month 13", func(c *cardInput) { c.Expiry = "13/27" }, "expiry", "expiry.month"},
		{"month 00", func(c *cardInput) { c.Expiry = "00/27" }, "expiry", "expiry.month"},
		{"garbage expiry", func(c *cardInput) { c.Expiry = "soon" }, "expiry", "expiry.format"},
		{"no expiry", func(c *cardInput) { c.Expiry = " " }, "expiry", "expiry.required"},
		{"CVV of 4", func(c *cardInput) { c.CVV = "1234" }, "cvv", "cvv.format"},
		{"CVV of 2", func(c *cardInput) { c.CVV = "12" }, "cvv", "cvv.format"},
		{"CVV letters", func(c *cardInput) { c.CVV = "12a" }, "cvv", "cvv.format"},
		{"no CVV", func(c *cardInput) { c.CVV = "" }, "cvv", "cvv.required"},
		{"no holder", func(c *cardInput) { c.Holder = "  " }, "holder", "holder.required"},
		{"digits in the name", func(c *cardInput) { c.Holder = "Ana 4111" }, "holder", "holder.format"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := ok
			tc.edit(&in)
			c, errs := checkCard(in, now)
			if tc.field == "" {
				if len(errs) != 0 {
					t.Fatalf("errors %v, want none", errs)
				}
				if c.PAN == "" || c.ExpMonth == 0 || c.ExpYear < 2026 {
					t.Errorf("card %+v", c)
				}
				return
			}
			if errs[tc.field] != tc.key || len(errs) != 1 {
				t.Errorf("errors %v, want only %s: %s", errs, tc.field, tc.key)
			}
		})
	}
}

func TestLuhn(t *testing.T) {
	for _, pan := range []string{"4111111111111111", "4242424242424242", "4000000000000002", "79927398713"} {
		if !luhn(pan) {
			t.Errorf("%s should pass", pan)
		}
	}
	for _, pan := range []string{"4111111111111112", "4242424242424241", "79927398710"} {
		if luhn(pan) {
			t.Errorf("%s should fail", pan)
		}
	}
}
