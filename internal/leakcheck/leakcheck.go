package leakcheck

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"
)

// Module marks a stack frame of this module's code.
const Module = "github.com/cdprelay/cdprelay/"

// grace is how long goroutines winding down (a close handshake, a timer's
// last callback) get to finish.
const grace = 5 * time.Second

// Main runs the tests and then fails the binary if a goroutine other than
// the caller still runs code whose stack mentions one of match (default:
// anything of this module).
func Main(m *testing.M, match ...string) {
	code := m.Run()
	if f := flag.Lookup("test.fuzzworker"); f != nil && f.Value.String() == "true" {
		// A fuzzing worker ends when the fuzzing engine says so, its
		// target perhaps in the middle of an input: waiting for that to
		// wind down would only make the engine give up on the worker.
		os.Exit(code)
	}
	if code == 0 {
		if leaked := Wait(grace, match...); leaked != "" {
			fmt.Fprintf(os.Stderr, "goroutines still running after the tests:\n%s\n", leaked)
			code = 1
		}
	}
	os.Exit(code)
}

// Wait polls until no goroutine but the caller matches, and returns the
// stacks of those that still do when d passes.
func Wait(d time.Duration, match ...string) string {
	deadline := time.Now().Add(d)
	for {
		leaked := Running(match...)
		if leaked == "" || time.Now().After(deadline) {
			return leaked
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Running returns the stacks of the goroutines, the caller's excepted,
// that mention one of match.
func Running(match ...string) string {
	if len(match) == 0 {
		match = []string{Module}
	}
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
	// The first stack is the caller's own.
	for i, g := range bytes.Split(buf, []byte("\n\n")) {
		if i == 0 {
			continue
		}
		for _, m := range match {
			if bytes.Contains(g, []byte(m)) {
				out.Write(g)
				out.WriteString("\n\n")
				break
			}
		}
	}
	return out.String()
}
