package e2e

// Named users made offline by the command line (payouts user add); the dashboard's users'
// own tests run in process (web/dashboard_users_test.go).

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"payouts/internal/cli"
	"payouts/internal/servertest"
)

// The dashboard's users as the end-to-end tests use them (servertest's): a user's code of a
// step, its set-up link followed, its sign-in.
type dashUser = servertest.User

var (
	codeAt       = servertest.CodeAt
	page         = servertest.GetPage
	postForm     = servertest.PostValues
	secretOnPage = servertest.SecretOnPage
)

// setUp follows a user's set-up link (servertest.SetUpUser).
func setUp(t *testing.T, s *testServer, link string, u *dashUser, step int64) {
	t.Helper()
	servertest.SetUpUser(t, dashClient(nil), s.URL, link, u, step)
}

// payouts user add creates a user offline: its link works once the server starts on the data,
// and the audit log names the CLI; a bad role is a usage error with its code, and nothing is stored.
func TestCLIUserAdd(t *testing.T) {
	t.Parallel()
	boltOnly(t, "the offline user add writes the data directory's file")
	dir := t.TempDir()
	out, err := runCLI(t, nil, "user", "add", "--data", dir, "--email", "olga@example.com", "--role", "boss")
	if err == nil || !strings.Contains(out+err.Error(), "2955") || cli.ExitCode(err) != 2 {
		t.Errorf("a bad role: %v\n%s", err, out)
	}
	if _, err := runCLI(t, nil, "user", "add", "--data", dir); cli.ExitCode(err) != 2 {
		t.Errorf("no --email: %v, want a usage error", err)
	}
	out, err = runCLI(t, nil, "user", "add", "--data", dir, "--email", "olga@example.com", "--role", "operator", "--name", "Olga")
	if err != nil {
		t.Fatalf("user add: %v\n%s", err, out)
	}
	var u struct{ ID, Status, SetupLink string }
	if err := json.Unmarshal([]byte(out), &u); err != nil || u.Status != "pending" || !strings.HasPrefix(u.SetupLink, "http://127.0.0.1:8080/dashboard/setup?t=") {
		t.Fatalf("user add printed %v %s", err, out)
	}
	s := startServer(t, dir)
	lu, _ := url.Parse(u.SetupLink)
	if code, body, _ := page(t, dashClient(nil), s.URL+lu.RequestURI()); code != 200 || secretOnPage.FindStringSubmatch(body) == nil {
		t.Errorf("the CLI's link on the server: %d", code)
	}
	var au struct {
		Entries []struct{ Action, Principal, Target string }
	}
	s.admin(t, "GET", "/admin/v1/audit", nil, &au)
	if len(au.Entries) == 0 || au.Entries[len(au.Entries)-1].Action != "user.create" || au.Entries[len(au.Entries)-1].Principal != "cli" ||
		au.Entries[len(au.Entries)-1].Target != "user:"+u.ID {
		t.Errorf("the audit log: %+v", au.Entries)
	}
}
