package relay

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"
)

// TestMain fails the package when goroutines of this module outlive the
// tests: every test closes its Server, and Server.Close must leave none
// behind (nor may the fake extension or the test client).
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if leaked := waitNoLeaks(5 * time.Second); leaked != "" {
			fmt.Fprintf(os.Stderr, "goroutines still running after the tests:\n%s\n", leaked)
			code = 1
		}
	}
	os.Exit(code)
}

// modulePrefix marks a stack frame of this module's code.
const modulePrefix = "github.com/cdprelay/cdprelay/"

// waitNoLeaks polls until no goroutine but the caller runs this module's
// code, and returns the stacks of those that do when d passes. Goroutines
// winding down (a close handshake, a timer's last callback) get that long
// to finish.
func waitNoLeaks(d time.Duration) string {
	deadline := time.Now().Add(d)
	for {
		leaked := moduleGoroutines()
		if leaked == "" || time.Now().After(deadline) {
			return leaked
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func moduleGoroutines() string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out bytes.Buffer
	// The first stack is this goroutine's own (it runs TestMain).
	for i, g := range bytes.Split(buf, []byte("\n\n")) {
		if i == 0 || !bytes.Contains(g, []byte(modulePrefix)) {
			continue
		}
		out.Write(g)
		out.WriteString("\n\n")
	}
	return out.String()
}
