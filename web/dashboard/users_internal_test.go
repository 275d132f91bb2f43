package dashboard

import (
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
