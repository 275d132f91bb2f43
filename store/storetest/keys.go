package storetest

import "testing"

// testKeyFingerprints: the fingerprints of the sealing keys are recorded once and never
// replaced, per key name.
func testKeyFingerprints(t *testing.T, e Engine) {
	t.Run("a fingerprint is recorded once, never replaced, per key", func(t *testing.T) {
		s := e.open(t)
		if fp, err := s.KeyFingerprint("master"); err != nil || fp != "" {
			t.Fatalf("fresh store: %q %v", fp, err)
		}
		if got, err := s.RecordKeyFingerprint("master", "aaaa"); err != nil || got != "aaaa" {
			t.Fatalf("first record: %q %v", got, err)
		}
		if got, err := s.RecordKeyFingerprint("master", "bbbb"); err != nil || got != "aaaa" {
			t.Errorf("second record with another key: %q %v, want the first kept", got, err)
		}
		if fp, err := s.KeyFingerprint("master"); err != nil || fp != "aaaa" {
			t.Errorf("read back: %q %v", fp, err)
		}
		if fp, err := s.KeyFingerprint("card"); err != nil || fp != "" {
			t.Errorf("another key's: %q %v, want none", fp, err)
		}
	})
}
