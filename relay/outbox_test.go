package relay

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/config"
	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/ext"

	"github.com/cdprelay/cdprelay/relay/internal/link"
)

// stuckExt is an instance whose extension's socket takes nothing: its
// queue is full, as when the extension's service worker stalls. read
// takes one frame off the queue, as the writer would.
func stuckExt(t *testing.T) (*core.Instance, *ext.Conn) {
	t.Helper()
	srv, err := New(config.Config{})
	if err != nil {
		t.Fatal(err)
	}
	in := srv.Default()
	x := ext.New(in, nil, in.Log)
	x.SetReady()
	st := in.Lock()
	st.Ext = x
	in.Unlock()
	for range ext.Queue {
		x.Fire(7, "", "Runtime.evaluate", map[string]any{"expression": "'filler'"})
	}
	return in, x
}

// A command of the relay's own that a critical section queued and that
// waits for room in a full extension queue keeps nobody from the
// instance's lock: the live view's status (and Stop, and the other tabs'
// events) goes on. It still reaches the extension before a command sent
// after the lock's release. Catches the queued commands sent before the
// lock is released, where a stalled extension socket held the lock (and
// with it the whole instance) for as long as the writer waits.
func TestQueuedCommandsWaitForRoomWithoutTheLock(t *testing.T) {
	in, x := stuckExt(t)
	inUnlock := make(chan struct{})
	released := make(chan struct{})
	go func() {
		defer close(released)
		st := in.Lock()
		st.Fire(7, "", "Page.stopLoading", nil)
		close(inUnlock) // still held: the main goroutine can't take it before unlock
		in.Unlock()     // waits for room
	}()
	<-inUnlock

	status := make(chan api.Status, 1)
	go func() { status <- in.Status() }()
	var after chan struct{}
	select {
	case <-status:
		// Sent after the release: it must go behind Page.stopLoading.
		after = make(chan struct{})
		go func() {
			defer close(after)
			x.Fire(7, "", "Runtime.evaluate", map[string]any{"expression": "'after the release'"})
		}()
	case <-time.After(10 * time.Second):
		t.Error("the instance's lock stayed held while a queued command waited for room in the extension's queue")
	}

	// The extension takes its frames again.
	var sent []string
	deadline := time.After(10 * time.Second)
	for !(containsFrame(sent, "Page.stopLoading") && (after == nil || containsFrame(sent, "'after the release'"))) {
		select {
		case b := <-x.P.Outgoing():
			sent = append(sent, string(*b))
			link.PutBuf(b)
		case <-deadline:
			t.Fatalf("frames missing: %d read", len(sent))
		}
	}
	<-released
	if after == nil {
		<-status
		return
	}
	<-after
	stop, next := indexContaining(sent, "Page.stopLoading"), indexContaining(sent, "'after the release'")
	if stop < 0 || next < 0 || stop > next {
		t.Errorf("the command sent after the release overtook the queued one (queued at %d, the later one at %d)", stop, next)
	}
}

func containsFrame(frames []string, s string) bool { return indexContaining(frames, s) >= 0 }

func indexContaining(frames []string, s string) int {
	for i, f := range frames {
		if strings.Contains(f, s) {
			return i
		}
	}
	return -1
}

// The commands several critical sections queue reach the extension in the
// order of the sections, each section's in its own order, while senders
// race them; and a command sent after a section's release never goes
// before that section's. Run with -race.
func TestQueuedCommandsKeepTheirOrder(t *testing.T) {
	in, x := stuckExt(t)
	for range ext.Queue { // room again
		link.PutBuf(<-x.P.Outgoing())
	}
	const sections, perSection = 50, 3
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range sections {
				st := in.Lock()
				for j := range perSection {
					st.Fire(7, "", "Runtime.evaluate", map[string]any{"expression": seqExpr(w, i, j)})
				}
				in.Unlock()
				x.Fire(7, "", "Runtime.evaluate", map[string]any{"expression": seqExpr(w, i, perSection)})
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	var sent [][]byte
	for want := 2 * sections * (perSection + 1); len(sent) < want; {
		select {
		case b := <-x.P.Outgoing():
			sent = append(sent, bytes.Clone(*b))
			link.PutBuf(b)
		case <-time.After(10 * time.Second):
			t.Fatalf("%d frames read", len(sent))
		}
	}
	<-done
	for w := range 2 {
		last := -1
		var order []string
		for _, f := range sent {
			if i := bytes.Index(f, []byte(seqExpr(w, 0, 0)[:3])); i >= 0 {
				order = append(order, string(f[i:i+9]))
			}
		}
		for k, got := range order {
			i, j := k/(perSection+1), k%(perSection+1)
			if want := seqExpr(w, i, j); got != want {
				t.Fatalf("worker %d: frame %d is %s, want %s (the order is that of the sections, the direct send after its section's)", w, k, got, want)
			}
			last = k
		}
		if last != sections*(perSection+1)-1 {
			t.Fatalf("worker %d: %d frames", w, last+1)
		}
	}
}

// seqExpr names the jth command of worker w's ith section: "w0-i00-j0".
func seqExpr(w, i, j int) string {
	return "w" + string(rune('0'+w)) + "-i" + string(rune('0'+i/10)) + string(rune('0'+i%10)) + "-j" + string(rune('0'+j))
}
