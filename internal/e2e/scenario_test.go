package e2e

import (
	"testing"

	"payouts/internal/servertest"
)

// scenario is one request to a running server and what its answer must be
// (servertest.Scenario). Each is its own subtest.
type scenario = servertest.Scenario

// run sends each scenario to s, as a subtest named after it.
func (s *testServer) run(t *testing.T, scenarios []scenario) {
	t.Helper()
	servertest.RunAt(t, nil, s.URL, s.AdminToken, scenarios)
}
