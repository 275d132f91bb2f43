//go:build !race

package bolt_test

// raceDetector says whether the race detector is on (race_on_test.go).
const raceDetector = false
