package gid

import "testing"

// Each way of telling goroutines apart tells them apart and is the same all
// along one.
func TestCurrent(t *testing.T) {
	for _, c := range []struct {
		name string
		fn   func() uintptr
	}{{"Current", Current}, {"fromStack", fromStack}} {
		t.Run(c.name, func(t *testing.T) {
			me := c.fn()
			if me == 0 || c.fn() != me {
				t.Fatalf("%d then %d", me, c.fn())
			}
			const n = 8
			ids := make(chan uintptr, n)
			hold := make(chan struct{})
			for range n {
				go func() { ids <- c.fn(); <-hold }()
			}
			seen := map[uintptr]bool{me: true}
			for range n {
				id := <-ids
				if id == 0 || seen[id] {
					t.Fatalf("%d given twice among live goroutines", id)
				}
				seen[id] = true
			}
			close(hold)
		})
	}
}
