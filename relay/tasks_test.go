package relay

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/config"

	"github.com/cdprelay/cdprelay/internal/fakeext"
)

// A panic in code that does not hold the lock, while another goroutine
// holds it for longer than any guess would wait, ends the instance's
// sockets and does not wedge it: the recovery knows the lock is not the
// panicking code's. Catches a recovery that takes a lock it cannot get at
// once for the panicking code's own (an instance made unusable until a
// restart, and its state read while its holder changes it).
func TestPanicBesideAHeldLockDoesNotWedge(t *testing.T) {
	h := newHarness(t, config.Config{})
	in := h.srv.Default()
	h.ext(fakeext.Options{Tabs: twoTabs[:1]})
	c := h.client()
	h.autoAttach(c)

	held := make(chan struct{})
	go func() {
		st := in.Lock()
		_ = st.Closed
		close(held)
		// Held until the recovery has decided (a wrong guess wedges), or
		// long past what a timer guess waited.
		for deadline := time.Now().Add(2 * time.Second); !in.Wedged.Load() && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		in.Unlock()
	}()
	<-held
	in.Tasks.Spawn("test", func() { panic("a bug outside the lock") })
	code, reason := h.closed(c)
	if code != 1011 || !strings.Contains(reason, "internal error") {
		t.Fatalf("the client closed with %d %q", code, reason)
	}
	if in.Wedged.Load() {
		t.Fatal("the instance is wedged, though the panicking code did not hold its lock")
	}
	if err := in.Stop("person"); errors.Is(err, api.ErrWedged) {
		t.Fatalf("Stop: %v", err)
	}
}

// A panic after a deferred unlock released the lock as the panic unwound
// closes the sockets and leaves the instance usable; a panic with the lock
// still held wedges it (TestPanicUnderLockWedgesOnlyItsInstance).
func TestPanicAfterDeferredUnlockDoesNotWedge(t *testing.T) {
	h := newHarness(t, config.Config{})
	in := h.srv.Default()
	h.ext(fakeext.Options{Tabs: twoTabs[:1]})
	c := h.client()
	h.autoAttach(c)
	in.Tasks.Spawn("test", func() {
		in.Lock()
		defer in.Unlock()
		panic("a bug with the lock held, released on the way out")
	})
	if code, _ := h.closed(c); code != 1011 {
		t.Fatalf("the client closed with %d", code)
	}
	if in.Wedged.Load() || in.HoldsLock() {
		t.Fatal("wedged after the lock was released")
	}
	st := in.Lock() // not held by anyone
	_ = st.Closed
	in.Unlock()
}
