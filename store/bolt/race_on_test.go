//go:build race

package bolt_test

// raceDetector says whether the race detector is on: it allocates for itself, and the
// allocation tests do not hold it to their bounds.
const raceDetector = true
