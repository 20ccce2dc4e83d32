package relay

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/config"
	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/ext"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/internal/cputime"
	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/link"
)

// processCPU is the CPU time this process has used. Per-core figures
// divide by it rather than by wall time, so that they hold on a machine
// whose other cores are busy with something else.
func processCPU() time.Duration { return cputime.Process() }

// reportPerCore reports msgs forwarded messages per CPU-second and the CPU
// cost of one operation.
func reportPerCore(b *testing.B, msgs int, cpu time.Duration) {
	if cpu <= 0 {
		return
	}
	b.ReportMetric(float64(msgs)/cpu.Seconds(), "msgs/cpu-s")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// BenchmarkForwardParallel: a command and its reply (two forwarded
// messages) per operation, on one instance per GOMAXPROCS, all at once.
// The queues are drained by goroutines that stand in for the writers, so
// this is the relay's own work without the sockets.
func BenchmarkForwardParallel(b *testing.B) {
	type rig struct {
		c    *core.ClientConn
		x    *ext.Conn
		stop func()
	}
	rigs := make([]rig, runtime.GOMAXPROCS(0))
	for i := range rigs {
		_, c, x, stop := benchInstance(b)
		rigs[i] = rig{c, x, stop}
	}
	defer func() {
		for _, r := range rigs {
			r.stop()
		}
	}()
	var next atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	b.RunParallel(func(pb *testing.PB) {
		r := rigs[(next.Add(1)-1)%int64(len(rigs))]
		var m wire.ExtMessage
		for pb.Next() {
			k := &r.c.Cmd
			if err := wire.DecodeCommand(benchCommand, &k.Env); err != nil {
				panic(err)
			}
			r.c.Handle(k)
			id := r.x.LastID()
			if err := wire.DecodeExt(benchReply, &m); err != nil {
				panic(err)
			}
			m.ID = id
			r.x.HandleReply(&m)
		}
	})
	cpu := processCPU() - cpu0
	b.StopTimer()
	for _, r := range rigs {
		if r.c.P.Closed() {
			b.Fatal("the client was closed: its drain fell behind")
		}
	}
	reportPerCore(b, 2*b.N, cpu)
}

// BenchmarkLoopback: a CDP client keeps 1 or 16 commands in flight over
// loopback WebSockets to a peer that answers each at once. relay: through
// the relay to an extension peer; peers: the same client and answering
// peer connected to each other, with no relay. So, per command, the
// relay's own latency is ns/op of relay − peers with 1 in flight, and its
// own CPU per forwarded message is (cpu-ns/op of relay − peers) ÷ 2 with
// 16 in flight, as a busy automation keeps them.
func BenchmarkLoopback(b *testing.B) {
	cmd := []byte(`{"id":1000000,"method":"Runtime.evaluate","sessionId":"pw-tab-1","params":{"expression":"1"}}`)
	for _, inFlight := range []int{1, 16} {
		b.Run(fmt.Sprintf("relay/inflight=%d", inFlight), func(b *testing.B) {
			cl, done := loopbackRelay(b)
			defer done()
			cpu := pipeline(b, cl, cmd, inFlight)
			// Two messages forwarded per command, counted against the CPU
			// of the client and extension stand-ins too: a floor.
			reportPerCore(b, 2*b.N, cpu)
		})
		b.Run(fmt.Sprintf("peers/inflight=%d", inFlight), func(b *testing.B) {
			up := websocket.Upgrader{}
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				conn, err := up.Upgrade(w, r, nil)
				if err != nil {
					return
				}
				answerAll(conn)
				conn.Close()
			}))
			defer hs.Close()
			cl := dialBench(b, "ws"+strings.TrimPrefix(hs.URL, "http"))
			defer cl.Close()
			cpu := pipeline(b, cl, cmd, inFlight)
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// loopbackRelay starts a relay with an answering extension peer and
// returns a client whose tab session pw-tab-1 is attached.
func loopbackRelay(b *testing.B) (*websocket.Conn, func()) {
	// The rate limit would answer most of these commands itself.
	srv, err := New(config.Config{CommandsPerSecond: -1})
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	base := "ws" + strings.TrimPrefix(hs.URL, "http")
	guid := srv.Default().GUID()
	ext := dialBench(b, base+"/extension/"+guid)
	for _, m := range []string{
		`{"method":"chrome.tabs.onCreated","params":[{"id":7,"url":"about:blank","title":"","targetId":"T7"}]}`,
		`{"method":"extension.initialized","params":[]}`,
	} {
		if err := ext.WriteMessage(websocket.TextMessage, []byte(m)); err != nil {
			b.Fatal(err)
		}
	}
	go answerAll(ext)
	cl := dialBench(b, base+"/devtools/browser/"+guid)
	done := func() {
		cl.Close()
		ext.Close()
		srv.Close(context.Background())
		hs.Close()
	}
	if err := cl.WriteMessage(websocket.TextMessage, []byte(`{"id":1,"method":"Target.setAutoAttach","params":{"autoAttach":true,"waitForDebuggerOnStart":false,"flatten":true}}`)); err != nil {
		done()
		b.Fatal(err)
	}
	for {
		_, r, err := cl.ReadMessage()
		if err != nil {
			done()
			b.Fatal(err)
		}
		if strings.HasPrefix(string(r), `{"id":1,`) {
			return cl, done
		}
	}
}

func dialBench(b *testing.B, url string) *websocket.Conn {
	b.Helper()
	conn, _, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		b.Fatal(err)
	}
	return conn
}

// answerAll answers every command at once with a small result, until the
// connection ends: an extension with an instant browser behind it.
func answerAll(conn *websocket.Conn) {
	var buf, reply []byte
	for {
		_, frame, err := link.ReadFrame(conn, &buf, 0)
		if err != nil {
			return
		}
		reply = append(reply[:0], `{"id":`...)
		reply = append(reply, wire.Field(frame, "id")...)
		if strings.Contains(string(frame), `"Target.getTargetInfo"`) {
			reply = append(reply, `,"result":{"targetInfo":{"targetId":"T7","type":"page","title":"","url":"about:blank","attached":true,"browserContextId":"C"}}}`...)
		} else {
			reply = append(reply, `,"result":{"result":{"type":"number","value":1,"description":"1"}}}`...)
		}
		if conn.WriteMessage(websocket.TextMessage, reply) != nil {
			return
		}
	}
}

// pipeline sends cmd b.N times with up to inFlight unanswered and returns
// the CPU time used meanwhile. Every command carries the same id: the
// relay matches replies by ids of its own.
func pipeline(b *testing.B, cl *websocket.Conn, cmd []byte, inFlight int) time.Duration {
	if inFlight == 1 {
		// One goroutine, as a client waiting for each reply is: no
		// hand-offs of ours in the figure.
		var buf []byte
		b.ReportAllocs()
		b.ResetTimer()
		cpu0 := processCPU()
		for range b.N {
			if err := cl.WriteMessage(websocket.TextMessage, cmd); err != nil {
				b.Fatal(err)
			}
			if _, _, err := link.ReadFrame(cl, &buf, 0); err != nil {
				b.Fatal(err)
			}
		}
		cpu := processCPU() - cpu0
		b.StopTimer()
		return cpu
	}
	window := make(chan struct{}, inFlight)
	done := make(chan error, 1)
	n := b.N
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	go func() {
		var buf []byte
		for range n {
			if _, _, err := link.ReadFrame(cl, &buf, 0); err != nil {
				done <- err
				return
			}
			<-window
		}
		done <- nil
	}()
	for range n {
		window <- struct{}{}
		if err := cl.WriteMessage(websocket.TextMessage, cmd); err != nil {
			b.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	cpu := processCPU() - cpu0
	b.StopTimer()
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "roundtrips/s")
	return cpu
}
