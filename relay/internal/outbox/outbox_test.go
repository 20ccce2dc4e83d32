package outbox

import (
	"fmt"
	"sync"
	"testing"
)

// sender records what reaches it, in order.
type sender struct {
	mu   sync.Mutex
	got  []string
	box  *Box
	seen []bool // Pending as each fire arrived
}

func (s *sender) FireQueued(tabID int64, sid, method string, params any, then func()) {
	s.mu.Lock()
	s.got = append(s.got, fmt.Sprintf("%d/%s/%s", tabID, sid, method))
	if s.box != nil {
		s.seen = append(s.seen, s.box.Pending())
	}
	s.mu.Unlock()
	if then != nil {
		then()
	}
}

func fires(tab int64, methods ...string) []Fire {
	var out []Fire
	for _, m := range methods {
		out = append(out, Fire{TabID: tab, Method: m})
	}
	return out
}

// Fires go out in the order of the sections that put them, and the box
// says they are pending until every one is in the upstream's queue.
func TestOrderAndPending(t *testing.T) {
	var b Box
	b.Init(func(string, func()) { t.Fatal("nothing to spawn") })
	s := &sender{box: &b}
	if b.Pending() {
		t.Fatal("an empty box is pending")
	}
	b.PutLocked(s, fires(1, "A", "B"))
	b.PutLocked(s, fires(2, "C"))
	if !b.Pending() {
		t.Fatal("fires put and not flushed: not pending")
	}
	b.Flush()
	if want := []string{"1//A", "1//B", "2//C"}; fmt.Sprint(s.got) != fmt.Sprint(want) {
		t.Fatalf("sent %v, want %v", s.got, want)
	}
	for i, p := range s.seen {
		if !p {
			t.Fatalf("fire %d reached the upstream with the box no longer pending: a push then would not have flushed", i)
		}
	}
	if b.Pending() {
		t.Fatal("every fire pushed: still pending")
	}
	b.Flush() // nothing to do
	if len(s.got) != 3 {
		t.Fatalf("an empty flush sent %v", s.got[3:])
	}
}

// A fire decided with no upstream is over at once: its Then runs, spawned,
// off the flusher; one without Then is dropped; the count falls for both.
func TestNoUpstream(t *testing.T) {
	var b Box
	var names []string
	ran := 0
	b.Init(func(name string, fn func()) { names = append(names, name); fn() })
	b.PutLocked(nil, []Fire{{TabID: 1, Method: "A", Then: func() { ran++ }}, {TabID: 1, Method: "B"}})
	b.Flush()
	if ran != 1 || len(names) != 1 {
		t.Fatalf("then ran %d times, spawned %v", ran, names)
	}
	if b.Pending() {
		t.Fatal("fires with no upstream left the box pending")
	}
}

type panicky struct{}

func (panicky) FireQueued(int64, string, string, any, func()) { panic("boom") }

// A push that panics still takes its batch off the count, so that the
// next push upstream does not flush for ever; the box goes on.
func TestPanicLowersCount(t *testing.T) {
	var b Box
	b.Init(func(string, func()) {})
	b.PutLocked(panicky{}, fires(1, "A", "B"))
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the sender's panic was swallowed")
			}
		}()
		b.Flush()
	}()
	if b.Pending() {
		t.Fatal("a panicking push left the box pending")
	}
	s := &sender{}
	b.PutLocked(s, fires(2, "C"))
	b.Flush()
	if len(s.got) != 1 {
		t.Fatalf("after a panic, sent %v", s.got)
	}
}

// Sections that put and flush at once, as an instance's goroutines do:
// every fire arrives once, the sections' fires in the order the sections
// held the instance's lock (a mutex stands for it here), and each
// section's in its own order, with no other's between them.
func TestConcurrentSections(t *testing.T) {
	var b Box
	b.Init(func(string, func()) {})
	s := &sender{}
	var lock sync.Mutex // the instance's
	var order []int64
	var wg sync.WaitGroup
	const sections, each = 50, 4
	for i := range sections {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lock.Lock()
			order = append(order, int64(i))
			b.PutLocked(s, fires(int64(i), "1", "2", "3", "4"))
			lock.Unlock()
			b.Flush()
		}()
	}
	wg.Wait()
	if len(s.got) != sections*each {
		t.Fatalf("%d fires sent, want %d", len(s.got), sections*each)
	}
	for i, tab := range order {
		for j := range each {
			if want := fmt.Sprintf("%d//%d", tab, j+1); s.got[i*each+j] != want {
				t.Fatalf("fire %d: %s, want %s (sections out of the lock's order)", i*each+j, s.got[i*each+j], want)
			}
		}
	}
	if b.Pending() {
		t.Fatal("all flushed: still pending")
	}
}

type discard struct{}

func (discard) FireQueued(int64, string, string, any, func()) {}

// Once warm, putting and flushing allocates nothing: the queue's array is
// reused batch after batch.
func TestNoAllocations(t *testing.T) {
	var b Box
	b.Init(func(string, func()) {})
	f := fires(1, "A", "B", "C")
	var x Sender = discard{}
	b.PutLocked(x, f)
	b.Flush()
	if n := testing.AllocsPerRun(100, func() { b.PutLocked(x, f); b.Flush() }); n != 0 {
		t.Fatalf("%v allocations per put and flush", n)
	}
}
