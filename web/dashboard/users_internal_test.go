package dashboard

import (
	"strings"
	"testing"

	"github.com/alexedwards/argon2id"
)

// BenchmarkPasswordHash is what a sign-in or a password set costs in argon2id
// (passwordParams): the price of one guess.
func BenchmarkPasswordHash(b *testing.B) {
	for b.Loop() {
		if _, err := argon2id.CreateHash("correct horse battery", passwordParams); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPasswordHashingIsProductionsByDefault: a dashboard not given PasswordHashing (a
// server started from its flags; only tests set server.Options) stores passwords with the
// production parameters and compares an unknown email with a hash of the same cost; the
// option changes both.
func TestPasswordHashingIsProductionsByDefault(t *testing.T) {
	const production = "$argon2id$v=19$m=47104,t=1,p=1$"
	d := New(Config{})
	h, err := d.hashPassword("correct horse battery")
	if err != nil || !strings.HasPrefix(h, production) {
		t.Errorf("a password set: %q %v, want the prefix %q", h, err, production)
	}
	if !strings.HasPrefix(d.dummyHash, production) {
		t.Errorf("an unknown email is compared with %q, want the prefix %q", d.dummyHash, production)
	}
	cheap := New(Config{PasswordHashing: &argon2id.Params{Memory: 64, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32}})
	h, err = cheap.hashPassword("correct horse battery")
	if err != nil || !strings.HasPrefix(h, "$argon2id$v=19$m=64,t=1,p=1$") || !strings.HasPrefix(cheap.dummyHash, "$argon2id$v=19$m=64,t=1,p=1$") {
		t.Errorf("with the option: %q and %q", h, cheap.dummyHash)
	}
}
