package dashboard

import (
	"net/http"
	"time"

	"payouts/templates"
)

// BackupProblem is a backup target whose last scheduled backup failed (--backup-every).
type BackupProblem struct {
	// Where is the backup directory, or s3://bucket/prefix/.
	Where    string
	FailedAt time.Time
	// Error says what failed; it names files and buckets, never a credential.
	Error string
	// LastGood is the time of the newest good backup there; zero when none is known.
	LastGood time.Time
}

// backupWarnings are the overview's warnings of failed backups: operators only, since a
// merchant's user has no say over the service's backups.
func (d *Dashboard) backupWarnings(r *http.Request, w templates.Words) []templates.BackupWarning {
	if d.cfg.Backups == nil || d.scope(r) != "" {
		return nil
	}
	var out []templates.BackupWarning
	for _, p := range d.cfg.Backups() {
		last := w.S("ov.backupNever")
		if !p.LastGood.IsZero() {
			last = timeText(p.LastGood)
		}
		out = append(out, templates.BackupWarning{Where: p.Where, FailedAt: timeText(p.FailedAt), Error: p.Error, LastGood: last})
	}
	return out
}
