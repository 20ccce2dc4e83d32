package core

import "sync"

// changes wakes those who watch the server for a change of any instance:
// a client or extension that comes or goes, a stop, a dialog, an approval
// asked or answered. The live view refreshes on it.
type changes struct {
	mu sync.Mutex
	ch chan struct{}
}

func (c *changes) wait() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ch == nil {
		c.ch = make(chan struct{})
	}
	return c.ch
}

func (c *changes) Notify() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ch != nil {
		close(c.ch)
		c.ch = nil
	}
}

// Changed returns a channel that is closed at the next change of any
// instance's status.
func (s *Relay) Changed() <-chan struct{} { return s.Changes.wait() }
