package certify

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"payouts/rules"
)

// The grading of a client session, in process: a session's log, built as a client would
// make it, graded check by check. Each row breaks one behaviour of the well-behaved client
// and must fail exactly its check.

// sessionLog builds a session's log: a clock that moves only when told, and the faults
// injected where the plan puts them.
type sessionLog struct {
	t   *testing.T
	now time.Time
	log []*observed
	ts  int
}

func (l *sessionLog) wait(d time.Duration) { l.now = l.now.Add(d) }

func faultNamed(name string) *fault {
	for i := range faultPlan {
		if faultPlan[i].Name == name {
			return &faultPlan[i]
		}
	}
	panic(name)
}

// req records one request; signed anew unless sig is given.
func (l *sessionLog) req(method, rest, query string, body []byte, status int, answer string, headers http.Header, f string) *observed {
	l.ts++
	q, _ := url.ParseQuery(query)
	o := &observed{at: l.now, method: method, rest: rest, query: q, timestamp: fmt.Sprint(1_700_000_000_000 + l.ts),
		signature: fmt.Sprintf("%064x", l.ts), apiKey: "k_live_0123456789", body: body, authenticated: true,
		status: status, answer: []byte(answer), headers: headers}
	if o.headers == nil {
		o.headers = http.Header{}
	}
	if f != "" {
		o.fault = faultNamed(f)
	}
	l.log = append(l.log, o)
	l.wait(50 * time.Millisecond)
	return o
}

func example(t *testing.T, name, orderID string) []byte {
	for _, ex := range rules.Examples() {
		if ex.Name == name {
			var v map[string]any
			json.Unmarshal(ex.Body, &v)
			v["orderId"] = orderID
			b, _ := json.Marshal(v)
			return b
		}
	}
	t.Fatalf("no example %s", name)
	return nil
}

func created(id int) string {
	return fmt.Sprintf(`{"payout":{"Id":%d},"output":{"stage":"IN_PROGRESS"}}`, id)
}

// breakage changes how the well-behaved client acts at one point.
type breakage struct {
	newOrderOnCut, noResend, early503, early429, resend401, resend400, staleResend, badSignature, fastPolling, noStageList, oneKind bool
}

// goodLog is the session of the client of b: the steps, the faults where the plan puts them.
func goodLog(t *testing.T, b breakage) []*observed {
	l := &sessionLog{t: t, now: time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)}
	replayed := http.Header{"Idempotent-Replayed": {"true"}}
	// 1: the first create is cut, and resent.
	cut := l.req("POST", "payouts", "", example(t, "col-bank-account", "A-1"), 201, created(1), nil, FaultCut)
	cut.answer = []byte(created(1))
	switch {
	case b.noResend:
	case b.newOrderOnCut:
		l.req("POST", "payouts", "", example(t, "col-bank-account", "A-2"), 201, created(2), nil, "")
	default:
		l.req("POST", "payouts", "", example(t, "col-bank-account", "A-1"), 200, created(1), replayed, "")
	}
	l.wait(time.Second)
	l.req("GET", "payouts/1", "", nil, 200, created(1), nil, "")
	// 2: a 503, retried after Retry-After.
	l.req("POST", "payouts", "", example(t, "per-bank-account", "B-1"), 503, `{}`, http.Header{"Retry-After": {"2"}}, FaultUnavailable)
	if b.early503 {
		l.wait(300 * time.Millisecond)
	} else {
		l.wait(2 * time.Second)
	}
	l.req("POST", "payouts", "", example(t, "per-bank-account", "B-1"), 201, created(3), nil, "")
	// 3: a 429 on a read.
	l.wait(time.Second)
	l.req("GET", "payouts/3", "", nil, 429, `{}`, http.Header{"Retry-After": {"1"}}, FaultRateLimited)
	if !b.early429 {
		l.wait(time.Second)
	}
	l.req("GET", "payouts/3", "", nil, 200, created(3), nil, "")
	// 4 and 5: a 401 and a 400 on creates, each final for its orderId.
	l.req("POST", "payouts", "", example(t, "per-cci", "C-1"), 401, `{}`, nil, FaultBadSignature)
	if b.resend401 {
		l.req("POST", "payouts", "", example(t, "per-cci", "C-1"), 201, created(4), nil, "")
	}
	l.req("POST", "payouts", "", example(t, "per-cci", "C-2"), 400, `{}`, nil, FaultSeveralErrors)
	if b.resend400 {
		l.req("POST", "payouts", "", example(t, "per-cci", "C-2"), 201, created(4), nil, "")
	}
	if !b.oneKind && !b.resend401 && !b.resend400 {
		l.req("POST", "payouts", "", example(t, "per-cci", "C-3"), 201, created(4), nil, "")
	}
	// 6: a stale timestamp on a read, signed again.
	l.wait(time.Second)
	stale := l.req("GET", "payouts", "orderId=A-1", nil, 401, `{}`, nil, FaultStaleTimestamp)
	again := l.req("GET", "payouts", "orderId=A-1", nil, 200, `{"items":[]}`, nil, "")
	if b.staleResend {
		again.timestamp, again.signature = stale.timestamp, stale.signature
	}
	if b.badSignature {
		o := l.req("GET", "payouts/1", "", nil, 401, `{"code":"1001"}`, nil, "")
		o.authenticated = false
	}
	// The rejection, read once a second until it shows; the listing by stage.
	l.wait(time.Second)
	l.req("GET", "payouts/1", "", nil, 200, created(1), nil, "")
	if b.fastPolling {
		l.wait(200 * time.Millisecond)
	} else {
		l.wait(time.Second)
	}
	l.req("GET", "payouts/1", "", nil, 200, `{"payout":{"Id":1},"output":{"stage":"REJECTED","status":"REJECTED_BANK"}}`, nil, "")
	if !b.noStageList {
		l.req("GET", "payouts", "stage=REJECTED", nil, 200, `{"items":[]}`, nil, "")
	}
	return l.log
}

func TestClientGrading(t *testing.T) {
	m := &rules.Merchant{ID: "7", Settings: rules.DefaultSettings()}
	kinds := Kinds(m)
	if got := fmt.Sprint(kinds); got != "[COL BATCH PER BATCH PER REAL_TIME]" {
		t.Fatalf("a merchant with the default settings may create %s", got)
	}
	for _, tc := range []struct {
		name  string
		b     breakage
		fails string
	}{
		{"the well-behaved client passes every check", breakage{}, ""},
		{"a cut create resent with a new orderId: two payouts", breakage{newOrderOnCut: true}, "idempotent-resend"},
		{"a cut create never resent", breakage{noResend: true}, "idempotent-resend"},
		{"a 503 retried before Retry-After", breakage{early503: true}, "backoff-503"},
		{"a 429 retried at once", breakage{early429: true}, "backoff-429"},
		{"a 401 resent unchanged", breakage{resend401: true}, "no-retry-401"},
		{"a 400 resent unchanged", breakage{resend400: true}, "no-retry-400"},
		{"the refused signed URL resent", breakage{staleResend: true}, "fresh-timestamp"},
		{"a request the signature check refused", breakage{badSignature: true}, "signatures"},
		{"a payout read twice within a second", breakage{fastPolling: true}, "polling-rate"},
		{"no listing by stage", breakage{noStageList: true}, "read-by-stage"},
		{"a kind never created", breakage{oneKind: true}, "each-kind"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := goodLog(t, tc.b)
			rep := gradeClient("cs_test", m, kinds, log[0].at, log[len(log)-1].at, log)
			var failed []string
			for _, c := range rep.Checks {
				if c.Result != "pass" {
					failed = append(failed, c.Name)
				}
			}
			if got := strings.Join(failed, " "); got != tc.fails {
				t.Errorf("failed %q, want %q\n%s", got, tc.fails, Summary(rep))
			}
			if rep.Passed != (tc.fails == "") || rep.Summary.Checks != len(ClientChecks()) {
				t.Errorf("passed %v, %d checks", rep.Passed, rep.Summary.Checks)
			}
			raw, _ := json.Marshal(rep)
			for _, secret := range []string{"k_live_0123456789", "80123456", fmt.Sprintf("%064x", 1)} {
				if strings.Contains(string(raw), secret) {
					t.Errorf("the report shows %q whole", secret)
				}
			}
		})
	}
}

// TestClientSessionMiddleware: through the middlewares, a session's first create is served,
// stored and cut; a merchant without a session is not watched; a request the signature check
// refuses is recorded as such; the session ends once its steps are seen.
func TestClientSessionMiddleware(t *testing.T) {
	var stored atomic.Int32
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "POST" {
			stored.Add(1)
			w.WriteHeader(201)
			w.Write([]byte(created(int(stored.Load()))))
			return
		}
		w.Write([]byte(created(1)))
	})
	ss := &Sessions{Sign: func(string, []byte) (string, error) { return "sig", nil }}
	// The signature check stands in as a header: refused requests never reach Inner.
	auth := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("monnet-api-key") != "good" {
				w.WriteHeader(401)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	srv := httptest.NewServer(ss.Outer(auth(ss.Inner(app))))
	defer srv.Close()
	post := func(merchant, key string) (int, error) {
		req, _ := http.NewRequest("POST", srv.URL+"/api/v1/"+merchant+"/payouts?timestamp=1&signature=00",
			strings.NewReader(string(example(t, "col-bank-account", "X-1"))))
		req.Header.Set("monnet-api-key", key)
		resp, err := srv.Client().Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	if code, err := post("7", "good"); err != nil || code != 201 {
		t.Fatalf("without a session: %d %v", code, err)
	}
	m := &rules.Merchant{ID: "7", Settings: rules.DefaultSettings()}
	v, err := ss.Start(t.Context(), m, time.Minute)
	if err != nil || v.State != "open" || len(v.Steps) != len(ClientChecks()) {
		t.Fatalf("start: %+v %v", v, err)
	}
	if again, _ := ss.Start(t.Context(), m, time.Minute); again.SessionID != v.SessionID {
		t.Errorf("a second start opened %s beside %s", again.SessionID, v.SessionID)
	}
	if code, err := post("8", "good"); err != nil || code != 201 {
		t.Errorf("another merchant, no session: %d %v", code, err)
	}
	if code, err := post("7", "bad"); err != nil || code != 401 {
		t.Errorf("a bad signature: %d %v", code, err)
	}
	before := stored.Load()
	if _, err := post("7", "good"); err == nil {
		t.Fatal("the session's first create was answered: want its connection cut")
	}
	if stored.Load() != before+1 {
		t.Error("the cut create was not served (stored) first")
	}
	if code, err := post("7", "good"); err != nil || code != 201 {
		t.Errorf("the resend: %d %v (the 503 comes only once the resend was seen: the next create)", code, err)
	}
	v, _ = ss.Session("7", v.SessionID)
	seen := map[string]bool{}
	for _, st := range v.Steps {
		seen[st.Check] = st.Seen
	}
	if !seen["idempotent-resend"] || seen["backoff-503"] {
		t.Errorf("steps seen: %v", seen)
	}
	if _, err := ss.Session("8", v.SessionID); err != rules.ErrNotFound {
		t.Errorf("another merchant read the session: %v", err)
	}
	// At the deadline, the session ends graded and signed.
	ss.finish(time.Now().Add(2 * time.Minute))
	v, _ = ss.Session("7", v.SessionID)
	if v.State != "done" || v.Report == nil || v.Signature != "sig" || v.Report.Passed {
		t.Fatalf("after the deadline: %+v", v)
	}
	for _, c := range v.Report.Checks {
		if c.Name == "signatures" && (c.Result != "fail" || !strings.Contains(c.Reason, "1 of 3 requests")) {
			t.Errorf("signatures: %s %s", c.Result, c.Reason)
		}
	}
	if ss.open.Load() != 0 {
		t.Error("the session is still watched")
	}
}

// BenchmarkClientWatchIdle is what the watch costs a request while no session is open (the
// production case): the two middlewares around a handler that does nothing.
func BenchmarkClientWatchIdle(b *testing.B) {
	ss := &Sessions{}
	h := ss.Outer(ss.Inner(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
	r := httptest.NewRequest("POST", "/api/v1/7/payouts?timestamp=1&signature=00", nil)
	w := httptest.NewRecorder()
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(w, r)
	}
}

// BenchmarkClientWatchOtherMerchant: a session is open, for another merchant.
func BenchmarkClientWatchOtherMerchant(b *testing.B) {
	ss := &Sessions{}
	if _, err := ss.Start(b.Context(), &rules.Merchant{ID: "8", Settings: rules.DefaultSettings()}, time.Minute); err != nil {
		b.Fatal(err)
	}
	h := ss.Outer(ss.Inner(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
	r := httptest.NewRequest("POST", "/api/v1/7/payouts?timestamp=1&signature=00", nil)
	w := httptest.NewRecorder()
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(w, r)
	}
}
