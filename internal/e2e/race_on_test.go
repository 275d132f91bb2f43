//go:build race

package e2e

// raceDetector says whether the race detector is on: a process of a test is then the binary
// built without it (payoutsBinary).
const raceDetector = true
