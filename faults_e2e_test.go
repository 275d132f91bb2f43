package main

// The faults an operator met (issue 21), each end to end on the server: nothing wedges,
// nothing is silently replaced.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// timedCall sends one request and reports its status, its body and how long it took; a
// request that does not answer within the client's timeout is an error.
func timedCall(client *http.Client, req *http.Request) (int, []byte, time.Duration, error) {
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, time.Since(start), err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, time.Since(start), err
}

// adminRequest builds an admin API request with the server's token.
func (s *testServer) adminRequest(method, path string, body any) *http.Request {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, s.URL+path, rd)
	req.Header.Set("Authorization", "Bearer "+s.AdminToken)
	req.Header.Set("Content-Type", "application/json")
	return req
}

// Item 1: clock advances and resets while payouts are created, cancelled and simulated:
// every call answers within its deadline (on 4d6e226 the first advance under create traffic
// wedged every write for good), and the server still stops within its drain timeout.
func TestClockChangesUnderWriteTrafficNeverWedge(t *testing.T) {
	s := startServer(t, "")
	c := s.newMerchant(t, nil)
	const deadline = 5 * time.Second
	client := &http.Client{Timeout: deadline}
	stop := time.Now().Add(3 * time.Second)

	var (
		mu       sync.Mutex
		failures []string
		ids      []int64
		calls    atomic.Int64
		slowest  atomic.Int64
	)
	fail := func(format string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(failures) < 20 {
			failures = append(failures, fmt.Sprintf(format, a...))
		}
	}
	call := func(what string, req *http.Request, ok ...int) []byte {
		code, raw, took, err := timedCall(client, req)
		calls.Add(1)
		for {
			old := slowest.Load()
			if int64(took) <= old || slowest.CompareAndSwap(old, int64(took)) {
				break
			}
		}
		if err != nil {
			fail("%s: no answer within %v: %v", what, deadline, err)
			return nil
		}
		for _, want := range ok {
			if code == want {
				return raw
			}
		}
		fail("%s: %d %s", what, code, raw)
		return nil
	}
	recent := func() (int64, bool) {
		mu.Lock()
		defer mu.Unlock()
		if len(ids) == 0 {
			return 0, false
		}
		return ids[len(ids)-1], true
	}
	var wg sync.WaitGroup
	loop := func(pause time.Duration, step func(i int)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(stop); i++ {
				step(i)
				time.Sleep(pause)
			}
		}()
	}
	for w := range 4 {
		loop(0, func(i int) {
			body, _ := json.Marshal(perBankRequest(fmt.Sprintf("WEDGE-%d-%d", w, i)))
			raw := call("create", c.request("POST", "payouts", body, ""), 201)
			if raw != nil {
				p := decodePayout(t, raw)
				mu.Lock()
				ids = append(ids, p.Payout.ID)
				mu.Unlock()
			}
		})
	}
	loop(20*time.Millisecond, func(int) {
		if id, ok := recent(); ok {
			call("cancel", c.request("POST", "payouts/"+strconv.FormatInt(id, 10)+"/cancel", nil, ""), 200, 409)
		}
	})
	loop(20*time.Millisecond, func(int) {
		if id, ok := recent(); ok {
			body := []byte(`{"stage":"SUCCESS"}`)
			call("simulate", c.request("POST", "payouts/"+strconv.FormatInt(id, 10)+"/simulate", body, ""), 200, 409)
		}
	})
	loop(50*time.Millisecond, func(int) {
		call("advance", s.adminRequest("POST", "/admin/v1/sandbox/clock", map[string]string{"advance": "1s"}), 200)
	})
	loop(300*time.Millisecond, func(int) {
		call("reset", s.adminRequest("DELETE", "/admin/v1/sandbox/clock", nil), 200)
	})
	wg.Wait()
	for _, f := range failures {
		t.Error(f)
	}
	if len(ids) < 20 {
		t.Errorf("only %d payouts created in 3 s", len(ids))
	}
	t.Logf("%d calls, %d payouts created, slowest call %v", calls.Load(), len(ids), time.Duration(slowest.Load()))
	stopped := time.Now()
	s.Stop(t)
	if took := time.Since(stopped); took > 20*time.Second {
		t.Errorf("the server took %v to stop", took)
	}
}
