package api

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// FailureLimiter counts failures (wrong signatures, wrong admin tokens, wrong passwords) per
// key and says when a key has failed too often: each key may fail burst times at once and
// regains one try every minute/perMinute. The key is the caller's choice, for example the
// client address and the API key presented, so that one client's failures never count
// against another. Its table is bounded: when it fills, keys back at a full allowance are
// forgotten first. Safe for concurrent use.
type FailureLimiter struct {
	// Now is the clock the allowances refill on (nil: time.Now): the server's real clock,
	// which a test may hold still.
	Now func() time.Time

	mu    sync.Mutex
	every rate.Limit
	burst int
	max   int
	m     map[string]*rate.Limiter
}

// NewFailureLimiter allows perMinute failures a minute per key, all of them at once.
func NewFailureLimiter(perMinute int) *FailureLimiter {
	return &FailureLimiter{every: rate.Limit(float64(perMinute) / 60), burst: perMinute, max: 100_000, m: map[string]*rate.Limiter{}}
}

func (f *FailureLimiter) limiter(key string) *rate.Limiter {
	f.mu.Lock()
	defer f.mu.Unlock()
	l := f.m[key]
	if l == nil {
		if len(f.m) >= f.max {
			now := f.now()
			for k, v := range f.m {
				if v.TokensAt(now) >= float64(f.burst) {
					delete(f.m, k)
				}
			}
			if len(f.m) >= f.max {
				f.m = map[string]*rate.Limiter{}
			}
		}
		l = rate.NewLimiter(f.every, f.burst)
		f.m[key] = l
	}
	return l
}

// Allow reports whether key may try again: false once it used up its failures. It counts
// nothing; call it before work that a blocked key should not get (a password hash).
func (f *FailureLimiter) Allow(key string) bool { return f.limiter(key).TokensAt(f.now()) >= 1 }

// Fail counts one failure of key and reports whether key is still within its allowance
// (false: answer 429 and Retry-After rather than 401).
func (f *FailureLimiter) Fail(key string) bool { return f.limiter(key).AllowN(f.now(), 1) }

func (f *FailureLimiter) now() time.Time {
	if f.Now == nil {
		return time.Now()
	}
	return f.Now()
}

// RetryAfter is how long until key may fail once more, at least a second.
func (f *FailureLimiter) RetryAfter(key string) time.Duration {
	l := f.limiter(key)
	missing := 1 - l.TokensAt(f.now())
	if missing <= 0 {
		return time.Second
	}
	return max(time.Second, time.Duration(missing/float64(f.every)*float64(time.Second)))
}
