package rules_test

import (
	"testing"

	"payouts/rules"
)

// LogoURLAllowed: an https logo, or an http one on the loopback (the server's own
// /static/logo-demo.svg on a developer's machine); nothing else.
func TestLogoURLAllowed(t *testing.T) {
	for raw, want := range map[string]bool{
		"https://tienda.pe/logo.png":                                   true,
		"http://127.0.0.1:8080/static/logo-demo.svg":                   true,
		"http://localhost:8080/static/logo-demo.svg":                   true,
		"http://[::1]:8080/logo.svg":                                   true,
		"http://tienda.pe/logo.png":                                    false,
		"http://127.0.0.1.nip.io/logo.png":                             false,
		"http://user:pw@127.0.0.1/logo.png":                            false,
		"ftp://127.0.0.1/logo.png":                                     false,
		"/static/logo-demo.svg":                                        false,
		"data:image/svg+xml,<svg xmlns='http://www.w3.org/2000/svg'/>": false,
	} {
		if got := rules.LogoURLAllowed(raw); got != want {
			t.Errorf("LogoURLAllowed(%q) = %v, want %v", raw, got, want)
		}
	}
}
