package dashboard

import "testing"

// The chart's ticks are evenly spaced whole numbers (never 0, 2, 5, 7, 10).
func TestNiceAxisTicksAreEven(t *testing.T) {
	for peak, want := range map[int][2]int{0: {1, 1}, 1: {1, 1}, 3: {3, 1}, 5: {5, 1}, 6: {6, 2}, 7: {8, 2}, 10: {10, 2},
		11: {15, 5}, 24: {25, 5}, 26: {30, 10}, 99: {100, 20}, 101: {150, 50}, 1234: {1500, 500}} {
		top, step := niceAxis(peak)
		if top != want[0] || step != want[1] {
			t.Errorf("niceAxis(%d) = %d step %d, want %d step %d", peak, top, step, want[0], want[1])
		}
		if top < peak || top%step != 0 || top/step > 5 {
			t.Errorf("niceAxis(%d) = %d step %d: not a whole number of at most 5 steps over the peak", peak, top, step)
		}
	}
}
