package rules

import (
	"net/mail"
	"testing"
)

// FuzzBareAddress checks bareAddress's own reading of the common form against net/mail's:
// wherever the dot-atom path says yes, net/mail reads the very address, with no name.
func FuzzBareAddress(f *testing.F) {
	for _, s := range []string{"ana.rojas@correo.pe", "a@b", "x+tag@mail.example.co", ".a@b.c", "a..b@c.d", "a@b.", "a b@c.d",
		`"q"@x.y`, "a@[1.2.3.4]", "Ana <ana@x.pe>", "ana@x.pe (Ana)", "ñandú@x.pe", "a@b@c", "", "@", "a@", "@b", "{|}~@x-y.z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := bareAddress(s)
		a, err := mail.ParseAddress(s)
		want := err == nil && a.Address == s && a.Name == ""
		if got != want {
			t.Fatalf("bareAddress(%q) = %v, net/mail reads %+v, %v", s, got, a, err)
		}
	})
}

// TestBareAddressReadsTheCommonForm keeps the dot-atom path alive: the addresses of the
// examples and of everyday use are decided by it, without allocating.
func TestBareAddressReadsTheCommonForm(t *testing.T) {
	for _, s := range []string{"ana.rojas@correo.pe", "juan.perez+pagos@empresa.com.co", "o'brien@x.pe"} {
		if n := testing.AllocsPerRun(10, func() {
			if !bareAddress(s) {
				t.Fatalf("bareAddress(%q) = false", s)
			}
		}); n != 0 {
			t.Errorf("bareAddress(%q): %v allocations, want the dot-atom path's none", s, n)
		}
	}
}
