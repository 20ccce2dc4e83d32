package screencast

import (
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// The tap's configuration and its defaults.

// Config configures taps. The zero value of every field means its default.
type Config struct {
	// Quality is the JPEG quality Chrome encodes frames with, 1–100.
	// Default: 70.
	Quality int
	// MaxWidth and MaxHeight bound a frame's size in pixels; Chrome
	// scales a larger viewport down. Default: 1920 × 1080.
	MaxWidth, MaxHeight int
	// MaxFPS caps the frame rate by spacing the acks. Default: 30.
	MaxFPS float64
	// NoFramesAfter is how long without a frame turns the status to
	// no-frames. Default: 2 s.
	NoFramesAfter time.Duration
	// CallTimeout bounds each command the tap sends. Default: 10 s.
	CallTimeout time.Duration
	// Metrics counts frames; nil counts nothing.
	Metrics *Metrics
	// Logger receives the tap's rare logs. Default: discard.
	Logger *slog.Logger
	// OnPanic is called when a tap's goroutine panicked (and the tap
	// stopped), for a metric. Default: nothing.
	OnPanic func()
}

const (
	defaultQuality       = 70
	defaultMaxWidth      = 1920
	defaultMaxHeight     = 1080
	defaultMaxFPS        = 30
	defaultNoFramesAfter = 2 * time.Second
	defaultCallTimeout   = 10 * time.Second

	// maxClientBacklog bounds the CDP client's frames waiting to be
	// decoded.
	maxClientBacklog = 2
	// maxBacklog bounds all frames waiting to be decoded. Chrome holds our
	// own frames back until they are acked, so only a misbehaving peer
	// reaches it; an unacked frame then stalls the stream, which is the
	// peer's own doing.
	maxBacklog = 64
)

// Validate reports what is wrong with c.
func (c Config) Validate() error {
	_, err := c.withDefaults()
	return err
}

func (c Config) withDefaults() (Config, error) {
	var errs []error
	if c.Quality == 0 {
		c.Quality = defaultQuality
	}
	if c.Quality < 1 || c.Quality > 100 {
		errs = append(errs, fmt.Errorf("screencast quality %d is outside 1–100", c.Quality))
	}
	if c.MaxWidth == 0 {
		c.MaxWidth = defaultMaxWidth
	}
	if c.MaxHeight == 0 {
		c.MaxHeight = defaultMaxHeight
	}
	if c.MaxWidth < 16 || c.MaxHeight < 16 {
		errs = append(errs, fmt.Errorf("screencast size %d×%d is too small", c.MaxWidth, c.MaxHeight))
	}
	if c.MaxFPS == 0 {
		c.MaxFPS = defaultMaxFPS
	}
	if !(c.MaxFPS > 0 && c.MaxFPS <= 1000) {
		errs = append(errs, fmt.Errorf("screencast max fps %v is outside (0, 1000]", c.MaxFPS))
	}
	if c.NoFramesAfter == 0 {
		c.NoFramesAfter = defaultNoFramesAfter
	}
	if c.CallTimeout == 0 {
		c.CallTimeout = defaultCallTimeout
	}
	if c.NoFramesAfter < 0 || c.CallTimeout < 0 {
		errs = append(errs, errors.New("screencast durations must not be negative"))
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c, errors.Join(errs...)
}
