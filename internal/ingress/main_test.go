package ingress_test

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"
)

// TestMain fails the package when goroutines of this module outlive the
// tests: the guard starts none, and the relays the tests put behind it
// are closed.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		deadline := time.Now().Add(5 * time.Second)
		for {
			leaked := moduleGoroutines()
			if leaked == "" {
				break
			}
			if time.Now().After(deadline) {
				fmt.Fprintf(os.Stderr, "goroutines still running after the tests:\n%s\n", leaked)
				code = 1
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	os.Exit(code)
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
	for i, g := range bytes.Split(buf, []byte("\n\n")) {
		if i == 0 || !bytes.Contains(g, []byte("github.com/cdprelay/cdprelay/")) {
			continue
		}
		out.Write(g)
		out.WriteString("\n\n")
	}
	return out.String()
}
