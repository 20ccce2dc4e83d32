package relay

import (
	"runtime/debug"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/metrics"

	"github.com/cdprelay/cdprelay/internal/wire"
)

// The hot path allocates nothing per message: a command forwarded to the
// extension, a reply forwarded to the client, an event forwarded to the
// client, and an event whose credentials are redacted on the way. Each is
// the loop body of its benchmark (bench_test.go), on the same in-process
// rig, so that what the benchmark measures is what is pinned here.
//
// Under the race detector sync.Pool drops a quarter of what it is given,
// so a pooled buffer is now and then made anew: the counts are checked
// without it only (alloc_race_test.go).

// allocsWarmup runs are made before measuring, so that the buffer pool, the
// pending map and the peers' queues have reached their steady size.
const (
	allocsWarmup = 10000
	allocsRuns   = 2000
)

// zeroAllocs fails t unless f allocates nothing per run. A GC that empties
// the buffer pool, or another goroutine of the process that allocates
// meanwhile (testing.AllocsPerRun counts the whole process), can make one
// measure read 1: a real allocation on the path reads at least 1 every
// time, so the least of five measures is what counts.
//
// Before that, one run must count one message of direction dir relayed:
// a path that drops the message allocates nothing either.
func zeroAllocs(t *testing.T, in *core.Instance, dir int, f func()) {
	t.Helper()
	before := testCounter(t, in.Srv.Cfg.Metrics.Bytes[dir])
	f()
	if testCounter(t, in.Srv.Cfg.Metrics.Bytes[dir]) == before {
		t.Fatal("the message was not relayed")
	}
	if raceDetector {
		t.Skip("sync.Pool drops items under the race detector: allocations are counted without -race")
	}
	for range allocsWarmup {
		f()
	}
	// No GC while measuring: a GC empties sync.Pool, and the buffer made
	// anew then is the pool's, not the path's.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	least := -1.0
	for range 5 {
		// The peers' writers drain what the last measure queued: on a
		// loaded machine, one far behind takes fresh buffers for a while.
		time.Sleep(20 * time.Millisecond)
		n := testing.AllocsPerRun(allocsRuns, f)
		if least < 0 || n < least {
			least = n
		}
		if least == 0 {
			return
		}
	}
	t.Fatalf("%v allocations per message, want 0", least)
}

func TestForwardCommandAllocs(t *testing.T) {
	in, c, x, stop := benchInstance(t)
	defer stop()
	zeroAllocs(t, in, metrics.DirCommand, func() {
		k := &c.Cmd
		if err := wire.DecodeCommand(benchCommand, &k.Env); err != nil {
			t.Fatal(err)
		}
		c.Handle(k)
		if k.Out.Kind != core.OutForwarded {
			t.Fatalf("the command was not forwarded: outcome %v", k.Out.Kind)
		}
		x.Forget(x.LastID())
	})
}

func TestForwardReplyAllocs(t *testing.T) {
	in, c, x, stop := benchInstance(t)
	defer stop()
	s := in.St.Sessions["pw-tab-1"]
	var m wire.ExtMessage
	zeroAllocs(t, in, metrics.DirReply, func() {
		id, err := x.Register(core.PendingCall{Kind: core.CallClient, Client: c, ClientID: 42, ReplyTo: s, Via: s, TabID: 7, Tab: s.Tab, M: benchMethod})
		if err != nil {
			t.Fatal(err)
		}
		if err := wire.DecodeExt(benchReply, &m); err != nil {
			t.Fatal(err)
		}
		m.ID = id
		x.HandleReply(&m)
	})
	if c.Inflight.Load() != 0 {
		t.Fatalf("%d replies not matched to their command", c.Inflight.Load())
	}
}

func TestForwardEventAllocs(t *testing.T) {
	in, _, x, stop := benchInstance(t)
	defer stop()
	var m wire.ExtMessage
	zeroAllocs(t, in, metrics.DirEvent, func() {
		if err := wire.DecodeExt(benchEvent, &m); err != nil {
			t.Fatal(err)
		}
		x.Handle(&m)
	})
}

func TestForwardEventRedactedAllocs(t *testing.T) {
	in, _, x, stop := benchInstance(t)
	defer stop()
	var m wire.ExtMessage
	zeroAllocs(t, in, metrics.DirEvent, func() {
		if err := wire.DecodeExt(benchExtraInfo, &m); err != nil {
			t.Fatal(err)
		}
		x.Handle(&m)
	})
}
