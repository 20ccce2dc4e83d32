package cputime

import (
	"testing"
	"time"
)

func TestProcessCounts(t *testing.T) {
	before := Process()
	// Spin until the clock has moved by a few of the system's ticks.
	deadline := time.Now().Add(5 * time.Second)
	x := 0
	for Process()-before < 50*time.Millisecond {
		if time.Now().After(deadline) {
			t.Fatalf("5 s of spinning counted %v of CPU time", Process()-before)
		}
		for i := range 1 << 16 {
			x += i
		}
	}
	_ = x
}
