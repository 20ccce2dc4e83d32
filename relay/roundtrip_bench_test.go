package relay_test

import (
	"testing"

	"github.com/cdprelay/cdprelay/internal/relaybench"
	"github.com/cdprelay/cdprelay/relay"
)

// BenchmarkRoundTripLoopback: a client command through the relay to an
// extension peer that answers at once, and back, over real loopback
// WebSockets.
func BenchmarkRoundTripLoopback(b *testing.B) { relaybench.RoundTrip(b, relay.Config{}) }
