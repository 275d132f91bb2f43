package server

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// countingBuffer counts the writes it takes.
type countingBuffer struct {
	mu     sync.Mutex
	b      bytes.Buffer
	writes int
}

func (d *countingBuffer) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.writes++
	return d.b.Write(p)
}

// Every line is written before its Write returns, whole, once, and each goroutine's lines in
// their order, whatever the others write meanwhile.
func TestLogWriterWritesEveryLineBeforeItReturnsInOrder(t *testing.T) {
	d := &countingBuffer{}
	l := newLogWriter(d)
	const writers, lines = 16, 500
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range lines {
				line := fmt.Appendf(nil, "g%d %d\n", g, i)
				l.Write(line)
				d.mu.Lock()
				out := d.b.Bytes()
				d.mu.Unlock()
				if !bytes.Contains(out, line) {
					t.Errorf("g%d %d: not written when Write returned", g, i)
					return
				}
			}
		}()
	}
	wg.Wait()
	next := map[string]int{}
	for _, line := range strings.Split(strings.TrimSuffix(d.b.String(), "\n"), "\n") {
		var g string
		var i int
		if _, err := fmt.Sscanf(line, "%s %d", &g, &i); err != nil {
			t.Fatalf("a line not whole: %q", line)
		}
		if i != next[g] {
			t.Fatalf("%s: line %d after %d", g, i, next[g]-1)
		}
		next[g]++
	}
	for g := range writers {
		if n := next[fmt.Sprintf("g%d", g)]; n != lines {
			t.Errorf("g%d: %d lines written, want %d", g, n, lines)
		}
	}
	t.Logf("%d lines in %d writes", writers*lines, d.writes)
}
