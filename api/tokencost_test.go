package api

import (
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// TestTokensHashAtBcryptsDefaultCostUnlessTold: a server started from its flags gives no
// cost, and its integration users' passwords and the unknown user's comparison are hashed
// at bcrypt's default; only the tests' servers ask for less.
func TestTokensHashAtBcryptsDefaultCostUnlessTold(t *testing.T) {
	for _, c := range []struct{ given, want int }{{0, bcrypt.DefaultCost}, {bcrypt.MinCost, bcrypt.MinCost}} {
		tk := NewTokens(nil, time.Now, c.given)
		if got, err := bcrypt.Cost(tk.dummy); err != nil || got != c.want || tk.cost != c.want {
			t.Errorf("NewTokens(cost %d): the unknown user's hash at %d (%v), passwords at %d, want %d", c.given, got, err, tk.cost, c.want)
		}
	}
}
