package link

import (
	"testing"
	"time"
)

// TestDiscardFreesTheBudget: a peer without a socket whose queue Discard
// empties takes far more than its byte budget, message by message, without
// a sender ever waiting for room.
func TestDiscardFreesTheBudget(t *testing.T) {
	p := NewPeer(nil, 16, 1<<10)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { defer close(done); p.Discard(stop) }()
	sent := make(chan int)
	go func() {
		n := 0
		for range 1000 { // 500 KB through a 1 KB budget
			b := GetBuf()
			*b = append((*b)[:0], make([]byte, 512)...)
			if !p.Send(b) {
				break
			}
			n++
		}
		sent <- n
	}()
	select {
	case n := <-sent:
		if n != 1000 {
			t.Errorf("sent %d of 1000", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("a sender waits for room that never comes: %d bytes queued", p.QueuedBytes())
	}
	close(stop)
	<-done
}
