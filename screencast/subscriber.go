package screencast

import "sync"

// Subscriber receives a tap's frames and status through a slot that holds
// only the newest frame: whatever the subscriber has not taken when the
// next frame comes is replaced, so a slow subscriber loses frames and
// never holds up the tap or anyone else.
type Subscriber struct {
	tap *Tap // static
	// ready holds a signal when Take has something new. It is never
	// closed, so a consumer may keep selecting on it after Close.
	ready chan struct{}

	mu        sync.Mutex
	frame     *Frame // guarded by mu: the newest frame not yet taken
	status    Status // guarded by mu
	statusNew bool   // guarded by mu: status changed since the last Take
	closed    bool   // guarded by mu
	dropped   uint64 // guarded by mu: frames replaced before they were taken
}

// Dropped is how many frames this subscriber lost to newer ones.
func (s *Subscriber) Dropped() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped
}

// Ready signals that Take has a new frame or status.
func (s *Subscriber) Ready() <-chan struct{} { return s.ready }

// Take returns the newest frame not yet taken (nil if none) and the
// current status, with whether it changed since the last Take.
func (s *Subscriber) Take() (f *Frame, st Status, changed bool) {
	s.mu.Lock()
	f, s.frame = s.frame, nil
	st, changed = s.status, s.statusNew
	s.statusNew = false
	s.mu.Unlock()
	if f != nil {
		s.tap.cfg.Metrics.sent()
	}
	return f, st, changed
}

// Close leaves the tap. When the last subscriber leaves, the tap stops its
// screencast and ends. Close is idempotent.
func (s *Subscriber) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	pending := s.frame != nil
	s.frame = nil
	s.mu.Unlock()
	if pending {
		s.tap.cfg.Metrics.drop(DropUnsubscribed)
	}
	s.tap.unsubscribe(s)
}

// offer puts f in the slot. Called by the tap's run loop only.
func (s *Subscriber) offer(f *Frame) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	replaced := s.frame != nil
	if replaced {
		s.dropped++
	}
	s.frame = f
	s.mu.Unlock()
	if replaced {
		s.tap.cfg.Metrics.drop(DropSlowSubscriber)
	}
	s.signal()
}

func (s *Subscriber) setStatus(st Status) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.status, s.statusNew = st, true
	s.mu.Unlock()
	s.signal()
}

func (s *Subscriber) signal() {
	select {
	case s.ready <- struct{}{}:
	default:
	}
}
