package audit

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestMain fails the package when a goroutine of this package outlives
// the tests: every Sink writer and follow handler must end with its
// Close or its client.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if stacks := lingering(5 * time.Second); stacks != "" {
			fmt.Fprintf(os.Stderr, "goroutines left running:\n%s\n", stacks)
			code = 1
		}
	}
	os.Exit(code)
}

// lingering waits up to d for this package's goroutines (other than the
// caller) to end, and returns the stacks of those that have not.
func lingering(d time.Duration) string {
	for deadline := time.Now().Add(d); ; time.Sleep(10 * time.Millisecond) {
		buf := make([]byte, 4<<20)
		buf = buf[:runtime.Stack(buf, true)]
		var left []string
		for i, g := range strings.Split(string(buf), "\n\n") {
			if i > 0 && strings.Contains(g, "cdprelay/cdprelay/audit.") {
				left = append(left, g)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return strings.Join(left, "\n\n")
		}
	}
}
