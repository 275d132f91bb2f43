package api

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// BackupMetrics are the scheduled backups' metrics (--backup-every), by target: dir (the
// verified copy in --backup-dir) or s3 (its off-site copy).
type BackupMetrics struct {
	failures    *prometheus.CounterVec
	lastSuccess *prometheus.GaugeVec
}

// Backups registers the backups' metrics for the given targets; a server without scheduled
// backups has none of them. Every target's series exist from the start (failures at 0, the
// last success at 0 until one is known), so that an alert sees a target that never succeeds.
func (m *Metrics) Backups(targets ...string) *BackupMetrics {
	b := &BackupMetrics{
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "payouts_backup_failures_total",
			Help: "Scheduled backups that failed, by target: dir (written and verified in --backup-dir, old ones removed) or s3 (copied, old ones removed)."},
			[]string{"target"}),
		lastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "payouts_backup_last_success_timestamp_seconds",
			Help: "Unix time of the snapshot of the newest good backup, by target (0: none known yet)."},
			[]string{"target"}),
	}
	m.reg.MustRegister(b.failures, b.lastSuccess)
	for _, t := range targets {
		b.failures.WithLabelValues(t)
		b.lastSuccess.WithLabelValues(t)
	}
	return b
}

// Failed counts a failed backup of target.
func (b *BackupMetrics) Failed(target string) { b.failures.WithLabelValues(target).Inc() }

// Succeeded records a good backup of target, whose snapshot was taken at.
func (b *BackupMetrics) Succeeded(target string, at time.Time) {
	b.lastSuccess.WithLabelValues(target).Set(float64(at.UnixNano()) / 1e9)
}
