//go:build !race

package e2e

// raceDetector says whether the race detector is on (race_on_test.go).
const raceDetector = false
