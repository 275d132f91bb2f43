package storetest

import (
	"context"
	"testing"
)

// testKeyFingerprints: the fingerprints of the sealing keys are recorded once and never
// replaced, per key name.
func testKeyFingerprints(t *testing.T, e Engine) {
	t.Run("a fingerprint is recorded once, never replaced, per key", func(t *testing.T) {
		s := e.open(t)
		if fp, err := s.KeyFingerprint(context.Background(), "master"); err != nil || fp != "" {
			t.Fatalf("fresh store: %q %v", fp, err)
		}
		if got, err := s.RecordKeyFingerprint(context.Background(), "master", "aaaa"); err != nil || got != "aaaa" {
			t.Fatalf("first record: %q %v", got, err)
		}
		if got, err := s.RecordKeyFingerprint(context.Background(), "master", "bbbb"); err != nil || got != "aaaa" {
			t.Errorf("second record with another key: %q %v, want the first kept", got, err)
		}
		if fp, err := s.KeyFingerprint(context.Background(), "master"); err != nil || fp != "aaaa" {
			t.Errorf("read back: %q %v", fp, err)
		}
		if fp, err := s.KeyFingerprint(context.Background(), "card"); err != nil || fp != "" {
			t.Errorf("another key's: %q %v, want none", fp, err)
		}
	})
	t.Run("a rotation replaces the fingerprint it names, and only that one", func(t *testing.T) {
		s := e.open(t)
		if ok, err := s.ReplaceKeyFingerprint(context.Background(), "notification", "", "aaaa"); err != nil || !ok {
			t.Fatalf("first fingerprint by replacement: %v %v", ok, err)
		}
		if ok, err := s.ReplaceKeyFingerprint(context.Background(), "notification", "", "bbbb"); err != nil || ok {
			t.Errorf("replacing none while one is recorded: %v %v, want false", ok, err)
		}
		if ok, err := s.ReplaceKeyFingerprint(context.Background(), "notification", "cccc", "bbbb"); err != nil || ok {
			t.Errorf("replacing another than the one recorded: %v %v, want false", ok, err)
		}
		if ok, err := s.ReplaceKeyFingerprint(context.Background(), "notification", "aaaa", "bbbb"); err != nil || !ok {
			t.Errorf("replacing the one recorded: %v %v", ok, err)
		}
		if fp, err := s.KeyFingerprint(context.Background(), "notification"); err != nil || fp != "bbbb" {
			t.Errorf("read back: %q %v, want bbbb", fp, err)
		}
		if got, err := s.RecordKeyFingerprint(context.Background(), "notification", "dddd"); err != nil || got != "bbbb" {
			t.Errorf("recording after a rotation: %q %v, want the rotation's kept", got, err)
		}
		if fp, err := s.KeyFingerprint(context.Background(), "master"); err != nil || fp != "" {
			t.Errorf("another key's: %q %v, want none", fp, err)
		}
	})
}
