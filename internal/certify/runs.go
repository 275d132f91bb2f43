package certify

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"sync"
	"time"

	"payouts/api"
	"payouts/rules"
)

// Runs keeps the receiver certification runs of this instance, in memory: at most MaxRuns,
// each for RunTTL after it started. A run is not stored: another instance, or a restart,
// does not know it, and its merchant starts a new one.
type Runs struct {
	Receiver *Receiver
	Logger   *slog.Logger

	mu   sync.Mutex
	base context.Context // the server's: ends the runs going at shutdown
	runs map[string]*run
}

// MaxRuns and RunTTL bound what Runs keeps.
const (
	MaxRuns = 100
	RunTTL  = time.Hour
	// runLimit ends a run whose receiver keeps timing out: every request times out well before.
	runLimit = 10 * time.Minute
)

type run struct {
	merchant string
	started  time.Time
	view     api.CertificationRunView
}

// Serve holds the server's context for the runs until it ends (a worker of the server).
func (rs *Runs) Serve(ctx context.Context) {
	rs.mu.Lock()
	rs.base = ctx
	rs.mu.Unlock()
	<-ctx.Done()
}

// Start begins a run for m against target, or answers the run m has going.
func (rs *Runs) Start(_ context.Context, m *rules.Merchant, target string) (api.CertificationRunView, error) {
	var idb [6]byte
	if _, err := rand.Read(idb[:]); err != nil {
		return api.CertificationRunView{}, err
	}
	now := time.Now()
	rs.mu.Lock()
	if rs.runs == nil {
		rs.runs = map[string]*run{}
	}
	for id, r := range rs.runs {
		if now.Sub(r.started) > RunTTL && r.view.State == "done" {
			delete(rs.runs, id)
		}
	}
	for _, r := range rs.runs {
		if r.merchant == m.ID && r.view.State == "running" {
			v := r.view
			rs.mu.Unlock()
			return v, nil
		}
	}
	for len(rs.runs) >= MaxRuns && rs.dropOldestDone() {
	}
	if len(rs.runs) >= MaxRuns {
		rs.mu.Unlock()
		return api.CertificationRunView{}, rules.Errorf(rules.KindRateLimited, rules.CodeRateLimited, "too many certification runs going on this instance; try again in a minute")
	}
	id := "cr_" + hex.EncodeToString(idb[:])
	r := &run{merchant: m.ID, started: now, view: api.CertificationRunView{RunID: id, State: "running",
		URL: MaskURL(target), StartedAt: wireTime(now)}}
	rs.runs[id] = r
	base := rs.base
	rs.mu.Unlock()
	if base == nil {
		base = context.Background()
	}
	go rs.run(base, id, m.ID, target)
	return r.view, nil
}

// dropOldestDone forgets the oldest finished run; false when none is finished.
func (rs *Runs) dropOldestDone() bool {
	oldest := ""
	for id, r := range rs.runs {
		if r.view.State == "done" && (oldest == "" || r.started.Before(rs.runs[oldest].started)) {
			oldest = id
		}
	}
	if oldest == "" {
		return false
	}
	delete(rs.runs, oldest)
	return true
}

func (rs *Runs) run(base context.Context, id, merchant, target string) {
	ctx, cancel := context.WithTimeout(base, runLimit)
	defer cancel()
	rep, err := rs.Receiver.Run(ctx, id, merchant, target)
	var sig string
	if err == nil {
		var canon []byte
		if canon, err = CanonicalReport(rep); err == nil {
			sig, err = rs.Receiver.Sign(merchant, canon)
		}
	}
	if err != nil {
		rs.logger().Error("receiver certification: the run failed", "run", id, "merchant_id", merchant, "err", err)
		rs.mu.Lock()
		delete(rs.runs, id) // the merchant starts another; reading this one answers 404
		rs.mu.Unlock()
		return
	}
	rs.mu.Lock()
	if r := rs.runs[id]; r != nil {
		r.view.State, r.view.Report, r.view.Signature = "done", &rep, sig
	}
	rs.mu.Unlock()
}

// Run reads a run of merchant.
func (rs *Runs) Run(merchant, id string) (api.CertificationRunView, error) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	r := rs.runs[id]
	if r == nil || r.merchant != merchant || time.Since(r.started) > RunTTL && r.view.State == "done" {
		return api.CertificationRunView{}, rules.ErrNotFound
	}
	return r.view, nil
}

func (rs *Runs) logger() *slog.Logger {
	if rs.Logger != nil {
		return rs.Logger
	}
	return slog.Default()
}
