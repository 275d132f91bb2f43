package api_test

import (
	"os"
	"testing"

	"payouts/internal/servertest"
)

// Four tests at once: the package's tests took 5.6 s instead of 8.2 s (six or eight at once
// gained little more).
func TestMain(m *testing.M) {
	servertest.Parallel(4)
	os.Exit(m.Run())
}
