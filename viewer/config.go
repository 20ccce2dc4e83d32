package viewer

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/cdprelay/cdprelay/screencast"
	"github.com/cdprelay/cdprelay/web"
)

// The server's configuration and its defaults.

// Config configures a Server. The zero value of every field but Source
// means its documented default.
type Config struct {
	// Source lists instances and opens tabs. Required.
	Source Source
	// Logger receives connection-level logs. Default: discard.
	Logger *slog.Logger
	// Screencast configures every tab's tap (quality, size, fps cap,
	// metrics). Default: screencast's defaults.
	Screencast screencast.Config
	// URLFence decides whether a viewer may navigate a tab of the instance
	// whose id is instanceID to url; reason is shown to the viewer when it
	// may not. It runs after the server's own check, which refuses
	// javascript: URLs whatever the fence says. Default: DefaultURLFence
	// (http, https, about:blank) for every instance.
	URLFence func(instanceID, url string) (ok bool, reason string)
	// Interactive decides whether a viewer connecting with r is the
	// person in charge: may take control and send input, stop and resume,
	// approve and deny, answer dialogs. The others may only watch. It runs
	// after the Origin check. Default: nobody; a relay grants it to the
	// person's credential, never by where a viewer connects from (the
	// agent runs on the same machine).
	Interactive func(r *http.Request) bool
	// Credential describes what a viewer connecting with r presented: how
	// an interactive viewer is named, and what a view-only one is told.
	// Default: nothing presented.
	Credential func(r *http.Request) Credential
	// Tenant names the tenant a viewer connecting with r acts for; "" is
	// the operator, who sees every instance. A tenant's viewer sees its
	// own instances only: in the list, in control messages, and to
	// subscribe, where another tenant's instance is refused exactly as
	// one that does not exist. Default: every viewer is the operator's.
	Tenant func(r *http.Request) string
	// Page serves the live-view page at every path but /viewer.
	// Default: the embedded page of package web.
	Page http.Handler
	// SendQueue bounds the messages other than frames queued for one
	// viewer. A viewer that lets it fill is closed: those messages are
	// never dropped. Default: 256.
	SendQueue int
	// MaxMessageBytes bounds one message from a viewer. Default: 64 KiB.
	MaxMessageBytes int64
	// OnPanic is called when a viewer's goroutine panicked (and that viewer
	// was closed), for a metric. Default: nothing.
	OnPanic func()

	// ListEvery is how often each viewer's instance list is refreshed
	// when it changed. Default: 1 s.
	ListEvery time.Duration
	// WriteTimeout bounds each write to a viewer: one that accepts nothing
	// for this long is gone, and is closed. Default: 10 s.
	WriteTimeout time.Duration
}

const (
	defaultSendQueue       = 256
	defaultMaxMessageBytes = 64 << 10
	defaultListEvery       = time.Second
	defaultWriteTimeout    = 10 * time.Second

	// openTimeout bounds attaching to a tab for a new watch.
	openTimeout = 15 * time.Second
	// callTimeout bounds each input command.
	callTimeout = 10 * time.Second
)

func (c Config) withDefaults() (Config, error) {
	var errs []error
	if c.Source == nil {
		errs = append(errs, errors.New("viewer: Source is required"))
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Screencast.Logger == nil {
		c.Screencast.Logger = c.Logger
	}
	if err := c.Screencast.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.URLFence == nil {
		c.URLFence = func(_, url string) (bool, string) { return DefaultURLFence(url) }
	}
	if c.Interactive == nil {
		c.Interactive = func(*http.Request) bool { return false }
	}
	if c.Credential == nil {
		c.Credential = func(*http.Request) Credential { return Credential{} }
	}
	if c.Tenant == nil {
		c.Tenant = func(*http.Request) string { return "" }
	}
	if c.Page == nil {
		c.Page = web.Handler()
	}
	if c.SendQueue == 0 {
		c.SendQueue = defaultSendQueue
	}
	if c.MaxMessageBytes == 0 {
		c.MaxMessageBytes = defaultMaxMessageBytes
	}
	if c.ListEvery == 0 {
		c.ListEvery = defaultListEvery
	}
	if c.WriteTimeout == 0 {
		c.WriteTimeout = defaultWriteTimeout
	}
	if c.SendQueue < 8 || c.MaxMessageBytes < 1024 || c.ListEvery < 0 || c.WriteTimeout < 0 {
		errs = append(errs, errors.New("viewer: SendQueue must be at least 8, MaxMessageBytes at least 1 KiB, ListEvery and WriteTimeout not negative"))
	}
	return c, errors.Join(errs...)
}
