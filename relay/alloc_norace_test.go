//go:build !race

package relay

// raceDetector: the tests run under the race detector (go test -race).
const raceDetector = false
