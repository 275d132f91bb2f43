package api_test

import (
	"sync"
	"testing"

	"payouts/api"
	"payouts/rules"
)

// heldMerchants answers the merchant as stored when it was asked, and holds the answer of
// a read until the test lets it go.
type heldMerchants struct {
	mu      sync.Mutex
	m       rules.Merchant
	hold    bool
	read    chan struct{} // a held read has read the merchant
	release chan struct{} // lets it answer
}

func (s *heldMerchants) Merchant(id string) (*rules.Merchant, error) {
	s.mu.Lock()
	m, hold := s.m, s.hold
	s.hold = false
	s.mu.Unlock()
	if hold {
		s.read <- struct{}{}
		<-s.release
	}
	return &m, nil
}

func (s *heldMerchants) OpenSecret(*rules.Merchant, []byte) (string, error) { return "secret", nil }

// A merchant read before a change that Forget was told of is not cached: the next request
// reads the change (a revoked key does not stay valid until a restart).
func TestKeyringCachesNoMerchantReadBeforeAForget(t *testing.T) {
	src := &heldMerchants{m: rules.Merchant{ID: "7", Name: "before"}, hold: true, read: make(chan struct{}), release: make(chan struct{})}
	k := api.NewKeyring(src)
	done := make(chan *rules.Merchant)
	go func() {
		m, err := k.Merchant("7")
		if err != nil {
			t.Error(err)
		}
		done <- m
	}()
	<-src.read // read "before", not answered yet
	src.mu.Lock()
	src.m.Name = "after"
	src.mu.Unlock()
	k.Forget("7")
	close(src.release)
	if m := <-done; m == nil || m.Name != "before" {
		t.Fatalf("the read begun before the change answered %+v", m)
	}
	if m, err := k.Merchant("7"); err != nil || m.Name != "after" {
		t.Fatalf("after Forget the keyring answers %+v (%v), want the merchant as changed", m, err)
	}
}
