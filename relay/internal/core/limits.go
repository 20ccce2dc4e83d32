package core

import (
	"strconv"
	"time"
)

// bucket is a token bucket owned by one client's read loop (no locking).
type bucket struct {
	rate   float64 // tokens per second; <= 0: unlimited
	burst  float64
	tokens float64
	last   time.Time
}

func NewBucket(rate float64, burst int) bucket {
	return bucket{rate: rate, burst: float64(burst), tokens: float64(burst)}
}

// Take reports whether a command may pass at now.
func (b *bucket) Take(now time.Time) bool {
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

func msgRateLimit(perSecond float64) string {
	return "cdprelay: rate limit: more than " + strconv.FormatFloat(perSecond, 'f', -1, 64) + " commands per second"
}

func msgInFlight(n int) string {
	return "cdprelay: " + strconv.Itoa(n) + " commands are already waiting for the browser; wait for replies"
}
