package templates_test

import (
	"testing"
	"time"

	"payouts/templates"
)

func TestClock(t *testing.T) {
	for d, want := range map[time.Duration]string{15 * time.Minute: "15:00", 61 * time.Second: "1:01", 9 * time.Second: "0:09", -time.Second: "0:00"} {
		if got := templates.Clock(d); got != want {
			t.Errorf("Clock(%v) = %q, want %q", d, got, want)
		}
	}
}
