package server

import (
	"io"
	"sync"
)

// logWriter batches the log's lines into few writes, each line still written before its
// Write returns. The access log writes a line for every request: written one by one, under
// slog's lock, its write calls cost about 4 % of a read's CPU under load, and every request
// queued behind the one writing. Here a line is appended to memory under a lock held for
// nanoseconds, and one goroutine at a time writes: the one that finds no write under way
// writes everything gathered (its own line among it) outside the lock, while the others
// wait for their line to be out; then one of those still waiting writes the next batch.
// Under load many lines go out in one write, in the order they came.
type logWriter struct {
	w io.Writer

	mu       sync.Mutex
	done     sync.Cond // a batch was written
	buf      []byte
	spare    []byte
	appended uint64 // lines appended so far
	written  uint64 // lines written so far
	writing  bool
}

func newLogWriter(w io.Writer) *logWriter {
	l := &logWriter{w: w}
	l.done.L = &l.mu
	return l
}

// Write returns once p is written, by this goroutine or the one writing when it came.
func (l *logWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.buf = append(l.buf, p...)
	l.appended++
	mine := l.appended
	var err error
	for l.written < mine {
		if l.writing {
			l.done.Wait()
			continue
		}
		l.writing = true
		batch, end := l.buf, l.appended
		l.buf = l.spare[:0]
		l.mu.Unlock()
		_, err = l.w.Write(batch)
		l.mu.Lock()
		l.spare = batch[:0]
		l.written, l.writing = end, false
		l.done.Broadcast()
	}
	l.mu.Unlock()
	if err != nil {
		return 0, err
	}
	return len(p), nil
}
