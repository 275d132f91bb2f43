package docs_test

import (
	"regexp"
	"strings"
	"testing"
)

// What a new user following the docs literally needs comes before it is used: the scaling
// guide creates the role, the database and the --database-file file before an instance reads
// them; the operations guide's ACME trial has pebble's certificate, its resolver and its root;
// the README stops the first server before starting the binary and promises no test time.
func TestGuidesSetUpWhatTheirCommandsUse(t *testing.T) {
	before := func(name, first, then string) {
		t.Helper()
		doc := read(t, name)
		i, j := strings.Index(doc, first), strings.Index(doc, then)
		if i < 0 || j < 0 || i > j {
			t.Errorf("%s: %q (at %d) does not come before %q (at %d)", name, first, i, then, j)
		}
	}
	before("docs/guides/scaling.md", "CREATE ROLE payouts LOGIN", "--database-file /etc/payouts/database-url")
	before("docs/guides/scaling.md", "CREATE DATABASE payouts OWNER payouts", "--database-file /etc/payouts/database-url")
	before("docs/guides/scaling.md", "/etc/payouts/database-url >/dev/null", "--database-file /etc/payouts/database-url")
	before("docs/guides/operations.md", "-keyout pebble-key.pem -out pebble-cert.pem", "--acme-ca-root pebble-cert.pem")
	before("docs/guides/operations.md", "pebble-challtestsrv -defaultIPv4 127.0.0.1", "pebble -config pebble.json -dnsserver 127.0.0.1:8053")
	before("docs/guides/operations.md", "--acme-ca https://127.0.0.1:14000/dir", "https://127.0.0.1:15000/roots/0 > pebble-root.pem")
	before("README.md", "Stop the server `go run .` started", "go build -o payouts . && ./payouts\n")
	if m := regexp.MustCompile(`takes (about )?[0-9]+ minutes`).FindString(read(t, "README.md")); m != "" {
		t.Errorf("README.md states a test time it cannot keep: %q", m)
	}
}
