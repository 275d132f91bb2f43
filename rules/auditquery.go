package rules

import (
	"strconv"
	"strings"
	"time"
)

// AuditCSVHeader is the header row of the audit log's CSV export (admin API and dashboard).
var AuditCSVHeader = []string{"id", "at", "principal", "actor", "action", "target", "merchantId", "detail", "remoteAddr", "userAgent"}

// WriteAuditCSV writes entries as CSV rows (the header first when header is set).
func WriteAuditCSV(w *CSVWriter, es []AuditEntry, header bool) error {
	if header {
		if err := w.Write(AuditCSVHeader); err != nil {
			return err
		}
	}
	for _, e := range es {
		row := []string{strconv.FormatInt(e.ID, 10), e.At.UTC().Format(time.RFC3339Nano), e.Principal, e.ActorName, e.Action, e.Target,
			e.MerchantID, string(e.Detail), e.RemoteAddr, e.UserAgent}
		if err := w.Write(row); err != nil {
			return err
		}
	}
	w.Flush()
	return w.Error()
}

// AuditQuery is the audit log's filter as a query string gives it (admin API and dashboard).
type AuditQuery struct {
	Actor      string `query:"actor" doc:"A principal, its prefix (user:<id>), or an actor's name"`
	Action     string `query:"action" doc:"An action (user.create), or its first part (user)"`
	MerchantID string `query:"merchantId" doc:"Only entries about this merchant"`
	From       string `query:"from" doc:"At or after (RFC 3339, or a date YYYY-MM-DD in UTC)"`
	To         string `query:"to" doc:"Before (RFC 3339, or a date YYYY-MM-DD: the day included)"`
	Cursor     string `query:"cursor" doc:"nextCursor of the previous page"`
	Limit      int    `query:"limit" doc:"1–1000; 100 when absent"`
}

// Filter checks the query: 2959 with the parameter at fault.
func (q AuditQuery) Filter() (AuditFilter, error) {
	f := AuditFilter{Actor: strings.TrimSpace(q.Actor), Action: strings.TrimSpace(q.Action), MerchantID: strings.TrimSpace(q.MerchantID), Limit: q.Limit}
	bad := func(field, msg string, v any) error {
		return &Error{Kind: KindInvalid, Code: CodeAuditQuery, Field: "query." + field, Message: msg, Value: v}
	}
	var err error
	if f.From, err = auditTime(q.From, false); err != nil {
		return f, bad("from", "must be an RFC 3339 time or a date YYYY-MM-DD", q.From)
	}
	if f.To, err = auditTime(q.To, true); err != nil {
		return f, bad("to", "must be an RFC 3339 time or a date YYYY-MM-DD", q.To)
	}
	if q.Cursor != "" {
		if f.Before, err = strconv.ParseInt(q.Cursor, 10, 64); err != nil || f.Before <= 0 {
			return f, bad("cursor", "is not a cursor of this log", q.Cursor)
		}
	}
	if q.Limit < 0 || q.Limit > 1000 {
		return f, bad("limit", "must be 1 to 1000", q.Limit)
	}
	return f, nil
}

// auditTime reads an RFC 3339 time or a UTC date; a date as an upper bound is its next day.
func auditTime(s string, upper bool) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	t, err := time.Parse(time.DateOnly, s)
	if err == nil && upper {
		t = t.AddDate(0, 0, 1)
	}
	return t, err
}
