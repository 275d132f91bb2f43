package certify

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"payouts/api"
	"payouts/rules"
)

// Client certification: a session watches one merchant's signed requests while its own code
// does the steps the session lists, and injects faults into them one at a time. Sessions
// live in memory on the instance that opened them, like receiver runs.

// Sessions keeps the client certification sessions of this instance and is the middleware
// that watches them (api.ClientWatch). While none is open each request costs one atomic load.
type Sessions struct {
	// Sign signs a report: the notification key's signature over merchantId and its bytes.
	Sign   func(merchantID string, body []byte) (string, error)
	Logger *slog.Logger
	// Now is the wall clock the grades are timed by (time.Now when nil): Retry-After and the
	// polling rate are the merchant's real seconds, never the sandbox's test clock.
	Now func() time.Time
	// Quiet is how long a session stays open after its last step was seen, so that a client
	// that resends what it must not is still seen doing it. 0 is DefaultQuiet.
	Quiet time.Duration

	open atomic.Int32 // sessions open: the middleware's one load

	mu         sync.Mutex
	byMerchant map[string]*session // the open session of each merchant
	byID       map[string]*session // every session kept, open or done
}

// DefaultQuiet is how long a session waits after its last step before it ends.
const DefaultQuiet = 3 * time.Second

// MaxSessions bounds the sessions kept (open and done) on one instance.
const MaxSessions = 100

// session is one merchant's client certification. Its fields are guarded by Sessions.mu.
type session struct {
	id       string
	merchant *rules.Merchant
	started  time.Time
	deadline time.Time
	kinds    []Kind // what the merchant's settings let it create at /payouts
	log      []*observed
	plan     []fault // the faults not yet injected, in order
	awaiting *observed
	lastSeen time.Time // when the last step was first seen complete (zero: not yet)
	done     bool
	view     api.ClientSessionView
}

// observed is one request of the merchant during a session and what it was answered.
type observed struct {
	at            time.Time
	method, rest  string     // rest: the path below /api/v1/{merchantId}/
	query         url.Values // without timestamp and signature
	timestamp     string
	signature     string
	apiKey        string
	body          []byte
	authenticated bool
	status        int
	headers       http.Header
	answer        []byte // the first bytes of the answer
	durationMS    int64
	fault         *fault // the fault injected in its answer, if any
}

// isCreate, isRead: what the faults and the checks look at.
func (o *observed) isCreate() bool { return o.method == http.MethodPost && o.rest == "payouts" }
func (o *observed) isRead() bool {
	return o.method == http.MethodGet && (o.rest == "payouts" || strings.HasPrefix(o.rest, "payouts/") && !strings.Contains(o.rest[len("payouts/"):], "/"))
}

// Start opens a session for m lasting at most d, or answers the one m has open.
func (ss *Sessions) Start(_ context.Context, m *rules.Merchant, d time.Duration) (api.ClientSessionView, error) {
	var idb [6]byte
	if _, err := rand.Read(idb[:]); err != nil {
		return api.ClientSessionView{}, err
	}
	d = min(max(d, 30*time.Second), api.ClientSessionMax)
	now := ss.now()
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.byID == nil {
		ss.byID, ss.byMerchant = map[string]*session{}, map[string]*session{}
	}
	if s := ss.byMerchant[m.ID]; s != nil {
		return s.viewLocked(), nil
	}
	for id, s := range ss.byID {
		if s.done && now.Sub(s.started) > RunTTL {
			delete(ss.byID, id)
		}
	}
	for len(ss.byID) >= MaxSessions && ss.dropOldestDoneLocked() {
	}
	if len(ss.byID) >= MaxSessions {
		return api.ClientSessionView{}, rules.Errorf(rules.KindRateLimited, rules.CodeRateLimited, "too many certification sessions on this instance; try again in a minute")
	}
	s := &session{id: "cs_" + hex.EncodeToString(idb[:]), merchant: m, started: now, deadline: now.Add(d),
		kinds: Kinds(m), plan: append([]fault(nil), faultPlan...)}
	s.view = api.ClientSessionView{SessionID: s.id, State: "open", StartedAt: wireTime(now), Deadline: wireTime(s.deadline)}
	ss.byID[s.id], ss.byMerchant[m.ID] = s, s
	ss.open.Add(1)
	return s.viewLocked(), nil
}

func (ss *Sessions) dropOldestDoneLocked() bool {
	var oldest *session
	for _, s := range ss.byID {
		if s.done && (oldest == nil || s.started.Before(oldest.started)) {
			oldest = s
		}
	}
	if oldest == nil {
		return false
	}
	delete(ss.byID, oldest.id)
	return true
}

// Session reads a session of merchant; a session whose steps are done, or whose deadline
// passed, is graded and signed first.
func (ss *Sessions) Session(merchant, id string) (api.ClientSessionView, error) {
	ss.finish(ss.now())
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s := ss.byID[id]
	if s == nil || s.merchant.ID != merchant {
		return api.ClientSessionView{}, rules.ErrNotFound
	}
	return s.viewLocked(), nil
}

// Serve ends the sessions whose steps are done or whose deadline passed, every second,
// until ctx ends (a worker of the server).
func (ss *Sessions) Serve(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			ss.finish(ss.now())
		}
	}
}

// finish grades and signs the sessions due at now. The grading is on a copy of the log,
// the signing outside the lock.
func (ss *Sessions) finish(now time.Time) {
	if ss.open.Load() == 0 {
		return
	}
	type due struct {
		s   *session
		log []*observed
	}
	var dues []due
	ss.mu.Lock()
	for _, s := range ss.byMerchant {
		complete := s.complete()
		if complete && s.lastSeen.IsZero() {
			s.lastSeen = now
		}
		if now.After(s.deadline) || complete && now.Sub(s.lastSeen) >= ss.quiet() {
			delete(ss.byMerchant, s.merchant.ID)
			ss.open.Add(-1)
			s.done = true
			dues = append(dues, due{s, append([]*observed(nil), s.log...)})
		}
	}
	ss.mu.Unlock()
	for _, d := range dues {
		rep := gradeClient(d.s.id, d.s.merchant, d.s.kinds, d.s.started, now, d.log)
		canon, err := CanonicalReport(rep)
		var sig string
		if err == nil {
			sig, err = ss.Sign(d.s.merchant.ID, canon)
		}
		ss.mu.Lock()
		if err != nil {
			ss.logger().Error("client certification: the report could not be signed", "session", d.s.id, "merchant_id", d.s.merchant.ID, "err", err)
			delete(ss.byID, d.s.id) // reading it answers 404; the merchant opens another
		} else {
			d.s.view.State, d.s.view.Report, d.s.view.Signature = "done", &rep, sig
		}
		ss.mu.Unlock()
	}
}

// complete: every step of the session was seen (graded or not).
func (s *session) complete() bool {
	for _, st := range progress(s.merchant, s.kinds, s.log) {
		if !st.Seen {
			return false
		}
	}
	return len(s.plan) == 0 && s.awaiting == nil
}

func (s *session) viewLocked() api.ClientSessionView {
	v := s.view
	if !s.done {
		v.Steps = progress(s.merchant, s.kinds, s.log)
	} else if v.Report != nil {
		v.Steps = progress(s.merchant, s.kinds, nil)
		for i := range v.Steps {
			v.Steps[i].Seen = true
		}
	}
	return v
}

func (ss *Sessions) quiet() time.Duration {
	if ss.Quiet > 0 {
		return ss.Quiet
	}
	return DefaultQuiet
}

func (ss *Sessions) now() time.Time {
	if ss.Now != nil {
		return ss.Now()
	}
	return time.Now()
}

func (ss *Sessions) logger() *slog.Logger {
	if ss.Logger != nil {
		return ss.Logger
	}
	return slog.Default()
}

type watchKey struct{}

// Outer sees every request to the path of a merchant with a session open, before its
// signature is checked: a request that never reaches Inner was refused by the check.
func (ss *Sessions) Outer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ss.open.Load() == 0 {
			next.ServeHTTP(w, r)
			return
		}
		merchant, rest, ok := signedPath(r.URL.Path)
		if !ok || strings.HasPrefix(rest, "certifications/") {
			next.ServeHTTP(w, r)
			return
		}
		ss.mu.Lock()
		s := ss.byMerchant[merchant]
		ss.mu.Unlock()
		if s == nil {
			next.ServeHTTP(w, r)
			return
		}
		// The first 64 KiB are kept (a payout's body is less); the rest of a larger one (a
		// batch's) is left to be read as it was.
		body, err := io.ReadAll(io.LimitReader(r.Body, api.MaxBody))
		if err != nil {
			next.ServeHTTP(w, r)
			return
		}
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
		q := r.URL.Query()
		o := &observed{at: ss.now(), method: r.Method, rest: rest, query: q, timestamp: q.Get("timestamp"), signature: q.Get("signature"),
			apiKey: r.Header.Get("monnet-api-key"), body: body}
		q.Del("timestamp")
		q.Del("signature")
		if o.apiKey == "" {
			o.apiKey = r.Header.Get("X-Api-Key")
		}
		rec := &recorder{ResponseWriter: w}
		defer func() {
			o.durationMS = ss.now().Sub(o.at).Milliseconds()
			if o.status == 0 {
				o.status, o.headers, o.answer = rec.status, rec.Header().Clone(), rec.head.Bytes()
			}
			ss.mu.Lock()
			if ss.byMerchant[merchant] == s {
				s.log = append(s.log, o)
				if s.awaiting != nil && s.awaiting != o && s.awaiting.fault.resolvedBy(s.awaiting, o) {
					s.awaiting = nil
				}
			}
			ss.mu.Unlock()
		}()
		next.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), watchKey{}, &watched{s: s, o: o})))
	})
}

// watched is a request Outer recorded, handed to Inner through the context.
type watched struct {
	s *session
	o *observed
}

// Inner injects the session's next fault into an authenticated request that it fits.
func (ss *Sessions) Inner(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		wt, _ := r.Context().Value(watchKey{}).(*watched)
		if wt == nil {
			next.ServeHTTP(w, r)
			return
		}
		o := wt.o
		o.authenticated = true
		ss.mu.Lock()
		var f *fault
		if wt.s.awaiting == nil && len(wt.s.plan) > 0 && wt.s.plan[0].fits(o) && !wt.s.done {
			f = &wt.s.plan[0]
			wt.s.plan = wt.s.plan[1:]
			o.fault = f
			if f.awaits {
				wt.s.awaiting = o
			}
		}
		ss.mu.Unlock()
		if f == nil {
			next.ServeHTTP(w, r)
			return
		}
		if !f.inject(f, w, r, next, o) {
			// It did not apply (the create was refused, so nothing was stored): the next one gets it.
			ss.mu.Lock()
			o.fault = nil
			if wt.s.awaiting == o {
				wt.s.awaiting = nil
			}
			wt.s.plan = append([]fault{*f}, wt.s.plan...)
			ss.mu.Unlock()
		}
	})
}

// signedPath splits /api/v1/{merchantId}/rest.
func signedPath(p string) (merchant, rest string, ok bool) {
	after, found := strings.CutPrefix(p, "/api/v1/")
	if !found {
		return "", "", false
	}
	merchant, rest, _ = strings.Cut(after, "/")
	return merchant, rest, merchant != "" && merchant != "notifications"
}

// recorder passes an answer through and keeps its status, headers and first bytes.
type recorder struct {
	http.ResponseWriter
	status int
	head   bytes.Buffer
}

func (w *recorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *recorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if room := answerKept - w.head.Len(); room > 0 {
		w.head.Write(b[:min(room, len(b))])
	}
	return w.ResponseWriter.Write(b)
}

func (w *recorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// answerKept is how much of an answer a session keeps: a payout's detail fits.
const answerKept = 16 << 10

// buffer holds an answer that is not sent (the cut create's).
type buffer struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *buffer) Header() http.Header { return b.header }
func (b *buffer) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}
func (b *buffer) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}
