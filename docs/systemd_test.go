package docs_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The unit the operations guide installs (docs/payouts.service) is hardened as it says and
// systemd itself finds nothing wrong in it (that its command line is one `payouts serve`
// runs is internal/cli's test).
func TestSystemdUnitIsHardenedAndVerifies(t *testing.T) {
	unit := read(t, "docs/payouts.service")
	for _, directive := range []string{"User=payouts", "ProtectSystem=strict", "ReadWritePaths=/var/lib/payouts /var/backups/payouts",
		"AmbientCapabilities=CAP_NET_BIND_SERVICE", "CapabilityBoundingSet=CAP_NET_BIND_SERVICE", "NoNewPrivileges=yes",
		"PrivateTmp=yes", "ProtectHome=yes", "LoadCredential=admin-token:/etc/payouts/admin-token"} {
		if !strings.Contains(unit, "\n"+directive+"\n") {
			t.Errorf("docs/payouts.service has no line %q", directive)
		}
	}
	if guide := read(t, "docs/guides/operations.md"); !strings.Contains(guide, unit) {
		t.Error("docs/guides/operations.md does not show docs/payouts.service as it is")
	}

	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv("PAYOUTS_REQUIRE_SYSTEMD_ANALYZE") == "1" {
			t.Fatal("no systemd-analyze and PAYOUTS_REQUIRE_SYSTEMD_ANALYZE=1 (apt-get install -y systemd)")
		}
		t.Skip("no systemd-analyze: the unit's directives are not checked by systemd")
	}
	// systemd checks that the binary exists: a stand-in takes its place.
	dir := t.TempDir()
	bin := filepath.Join(dir, "payouts")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "payouts.service")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(unit, "/usr/local/bin/payouts", bin)), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	verify := exec.Command(analyze, "verify", "--man=no", path)
	verify.Stdout, verify.Stderr = &out, &out
	// An unknown or misspelt directive is only a warning to systemd: any output fails.
	if err := verify.Run(); err != nil || out.Len() > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out.String())
	}
	out.Reset()
	security := exec.Command(analyze, "security", "--offline=true", "--threshold=25", path)
	security.Stdout, security.Stderr = &out, &out
	err = security.Run()
	switch {
	case strings.Contains(out.String(), "unrecognized option"):
		t.Log("this systemd-analyze has no offline security check")
	case err != nil:
		t.Errorf("systemd-analyze security: the unit's exposure is above 2.5 (%v)\n%s", err, lastLines(out.String(), 3))
	default:
		t.Log(strings.TrimSpace(lastLines(out.String(), 1)))
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(len(lines)-n, 0):], "\n")
}
