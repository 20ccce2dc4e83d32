package link

import "time"

// Rate bounds how many messages a peer may send per second: a token
// bucket, owned by the peer's read loop (no locking).
type Rate struct {
	rate   float64 // tokens per second; <= 0: unlimited
	burst  float64
	tokens float64
	last   time.Time
}

// NewRate is a bucket of perSecond tokens a second, burst at most, full.
func NewRate(perSecond float64, burst int) Rate {
	return Rate{rate: perSecond, burst: float64(burst), tokens: float64(burst)}
}

// Take reports whether a message may pass at now, and takes its token.
func (b *Rate) Take(now time.Time) bool {
	if b.rate <= 0 {
		return true
	}
	if !b.last.IsZero() {
		b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	}
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}
