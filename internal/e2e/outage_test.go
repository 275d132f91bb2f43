package e2e

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"payouts/rules"
	"payouts/store/postgres/pgtest"
)

// cutProxy stands between the server and PostgreSQL: cut closes its listener and every
// connection through it, as a database host going down would; restore listens again on the
// same address.
type cutProxy struct {
	t      *testing.T
	to     string
	addr   string
	mu     sync.Mutex
	ln     net.Listener
	conns  []net.Conn
	closed bool
}

// startBehindCutProxy starts one instance on a new PostgreSQL database reached through a
// proxy the test can cut, to play an outage.
func startBehindCutProxy(t *testing.T) (*testServer, *cutProxy) {
	t.Helper()
	u, err := url.Parse(pgtest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	proxy := newCutProxy(t, u.Host)
	u.Host = proxy.addr
	keys := t.TempDir()
	if err := writeKeys(keys); err != nil {
		t.Fatal(err)
	}
	inst := startInstances(t, u.String(), keys, 1)
	return &testServer{URL: inst[0].url, AdminToken: "test-admin-token-0123456789"}, proxy
}

func newCutProxy(t *testing.T, to string) *cutProxy {
	p := &cutProxy{t: t, to: to}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = ln.Addr().String()
	p.serve(ln)
	t.Cleanup(p.cut)
	return p
}

func (p *cutProxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln, p.closed = ln, false
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", p.to)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			if p.closed {
				p.mu.Unlock()
				c.Close()
				up.Close()
				return
			}
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go func() { io.Copy(up, c); up.Close() }()
			go func() { io.Copy(c, up); c.Close() }()
		}
	}()
}

func (p *cutProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.closed = true
	p.ln.Close()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func (p *cutProxy) restore() {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.t.Fatalf("listen again on %s: %v", p.addr, err)
	}
	p.serve(ln)
}

// During a database outage a correctly signed request is answered 503 with Retry-After and
// code 1925, never 401 1001 (a revoked key, to clients and alerting) nor, once there were
// many, 429; /readyz answers 503; once the database is back, the same requests succeed.
func TestDatabaseOutageAnswers503(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	s, proxy := startBehindCutProxy(t)
	m := s.newMerchant(t, nil)
	create := func(i int) (int, http.Header, []byte) {
		return m.do(t, "POST", "payouts", perBankRequest(fmt.Sprintf("OUT-%d", i)), "")
	}
	if code, _, raw := create(0); code != 201 {
		t.Fatalf("before the outage: %d %s", code, raw)
	}

	// Signed traffic throughout: the outage starts under it.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[int]int{}
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				code, _, _ := create(1000*(g+1) + i)
				mu.Lock()
				seen[code]++
				mu.Unlock()
			}
		}()
	}
	// However the test ends, the traffic stops before it does: a request failing after the
	// test has ended would fail a test that no longer exists.
	stopTraffic := sync.OnceFunc(func() { close(stop); wg.Wait() })
	t.Cleanup(stopTraffic)
	eventually(t, time.Minute, "signed creates answered 201 before the outage", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return seen[201] >= 8
	})
	proxy.cut()
	// Past the 2 s the instance trusts its cache of the merchant's keys: every request now
	// reads the database. This sleep stays: the traffic must run through that window of the
	// binary's real time, which a test cannot move, and nothing marks its end.
	time.Sleep(2500 * time.Millisecond)
	stopTraffic()
	for code, n := range seen {
		if code != 201 && code != 503 {
			t.Errorf("%d signed creates answered %d during the outage, want 201 before it and 503 in it", n, code)
		}
	}
	if seen[503] == 0 {
		t.Errorf("no signed create answered 503 during the outage: %v", seen)
	}

	// More than the 20 failures a minute that would turn into 429, on every kind of request.
	for i := range 25 {
		for _, req := range []func() (int, http.Header, []byte){
			func() (int, http.Header, []byte) { return create(100 + i) },
			func() (int, http.Header, []byte) { return m.do(t, "GET", "payouts/1", nil, "") },
		} {
			code, h, raw := req()
			if code != http.StatusServiceUnavailable {
				t.Fatalf("request %d during the outage: %d %s, want 503", i, code, raw)
			}
			if p := decodeProblem(t, raw); p.Code != rules.CodeUnavailable || len(p.Errors) == 0 || p.Errors[0].Code != rules.CodeUnavailable {
				t.Fatalf("request %d during the outage: code %q, want %s: %s", i, p.Code, rules.CodeUnavailable, raw)
			}
			if h.Get("Retry-After") == "" {
				t.Fatalf("request %d during the outage: no Retry-After", i)
			}
		}
	}
	if resp, err := http.Get(s.URL + "/readyz"); err != nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("/readyz during the outage: %v %v, want 503", resp, err)
	} else {
		resp.Body.Close()
	}

	// The database back: the same client's requests succeed again, and the payout created
	// before the outage reads as it was.
	proxy.restore()
	var code int
	var raw []byte
	if !poll(15*time.Second, func() bool {
		if code, _, raw = create(9999); code != 201 && code != 503 {
			t.Fatalf("after the outage: %d %s", code, raw)
		}
		return code == 201
	}) {
		t.Fatalf("after the outage: %d %s", code, raw)
	}
	if code, _, raw := m.do(t, "GET", "payouts/1", nil, ""); code != 200 {
		t.Errorf("the payout of before the outage: %d %s", code, raw)
	}
}
