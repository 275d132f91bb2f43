package main

// End-to-end tests of issue 11 (hardening): each item through the real server.

import (
	"net"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"
)

// tarpit accepts connections and never answers: a merchant endpoint that hangs every
// notification until the 15 s timeout.
type tarpit struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func newTarpit(t testing.TB) *tarpit {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tp := &tarpit{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			tp.mu.Lock()
			tp.conns = append(tp.conns, c)
			tp.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		tp.mu.Lock()
		for _, c := range tp.conns {
			c.Close()
		}
		tp.mu.Unlock()
	})
	return tp
}

func (tp *tarpit) accepted() int {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return len(tp.conns)
}

// Item 2: a merchant whose endpoint accepts and never answers, with 16 rejected payouts
// to notify, does not delay another merchant's notification by more than 2 s.
func TestTarpitMerchantDoesNotDelayAnotherMerchantsNotification(t *testing.T) {
	tp := newTarpit(t)
	hook := &hookReceiver{tries: map[string]int{}, accepted: map[string][][]byte{},
		verify: func([]byte, string) error { return nil }}
	recv := httptest.NewServer(hook)
	defer recv.Close()
	s := startServer(t, "", "--allow-private-notification-urls")
	slow := s.newMerchant(t, map[string]any{"notificationUrl": "http://" + tp.ln.Addr().String() + "/hook"})
	other := s.newMerchant(t, map[string]any{"notificationUrl": recv.URL + "/hook"})

	rejected := func(order string) map[string]any {
		r := perBankRequest(order)
		r["destination"] = map[string]any{"bankAccount": map[string]any{"bankCode": "002", "accountType": 2, "accountNumber": "19312345679999"}}
		return r
	}
	var ids []int64
	for i := 0; i < 16; i++ {
		ids = append(ids, slow.create(t, rejected("TARPIT-"+strconv.Itoa(i))).Payout.ID)
	}
	for _, id := range ids {
		slow.waitStage(t, id, "REJECTED", 10*time.Second)
	}
	waitFor(t, "the tarpit holds notifications", 5*time.Second, func() bool { return tp.accepted() >= 2 })
	time.Sleep(300 * time.Millisecond) // every worker the tarpit may take is taken

	id := other.create(t, rejected("OTHER-1")).Payout.ID
	other.waitStage(t, id, "REJECTED", 10*time.Second)
	finished := time.Now()
	waitFor(t, "the other merchant's notification", 2*time.Second, func() bool {
		_, _, _, n := hook.snapshot()
		return n > 0
	})
	t.Logf("other merchant notified %v after its payout finished; the tarpit holds %d connections",
		time.Since(finished).Round(time.Millisecond), tp.accepted())
	if n := tp.accepted(); n > 4 {
		t.Errorf("the tarpit merchant holds %d workers at once, want at most its share of 4", n)
	}
}
