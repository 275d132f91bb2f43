package server

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"go.uber.org/zap"
)

// certmagic's zap entries reach the server's slog logger: the level, the message, the
// fields of With and of the call, errors as their text; below the logger's level nothing.
func TestCertmagicLogsGoToSlog(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	zl := zap.New(slogCore{h: logger.Handler()}).Named("obtain").With(zap.String("identifier", "payouts.test"))
	zl.Debug("not shown")
	zl.Info("certificate obtained successfully", zap.Int("attempt", 2))
	zl.Error("could not get certificate", zap.Error(errors.New("no route to host")))
	out := buf.String()
	for _, want := range []string{
		`level=INFO msg="certificate obtained successfully" logger=obtain identifier=payouts.test attempt=2`,
		`level=ERROR msg="could not get certificate" logger=obtain identifier=payouts.test error="no route to host"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "not shown") {
		t.Errorf("a debug entry was written at level info:\n%s", out)
	}
}
