// Package config is the relay's configuration: what the operator sets
// (Config), checked and completed with its defaults (Config.WithDefaults),
// and the shapes its fields take: where downloads may go, where secrets
// come from, the instances kept across a restart.
//
// It is a leaf: it imports the shared vocabulary (api), the protocol's
// ids (cdp) and the metrics, never the core or a stage.
package config

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
	"github.com/cdprelay/cdprelay/relay/internal/metrics"
)

// Config is the relay's configuration. The zero value of every field means
// the documented default.
type Config struct {
	// Logger receives connection-level logs. Default: discard.
	Logger *slog.Logger

	// MaxMessageBytes bounds one WebSocket message from any peer. A larger
	// one closes that connection with 1009. Default: 128 MiB, above
	// Chrome's own limit of about 100 MB, so that anything Chrome accepts
	// passes.
	MaxMessageBytes int64

	// ExtensionWait is how long a CDP client that arrives before the
	// extension (or before its handshake ends) is held before it is closed
	// with "Extension not connected". Default: 45 s: a stopped service
	// worker is woken by its alarm, every 30 s, and then reconnects.
	ExtensionWait time.Duration

	// ExtensionGrace is how long a CDP client stays connected after the
	// extension's connection ended: a reloaded or updated extension (a
	// restarted service worker) is back within a second. The client's tab
	// sessions end at once; when the extension is back, its tabs come back
	// as new targets. Past it the client is closed with "Extension
	// disconnected: ...". Default: 5 s; negative: the client is closed at
	// once.
	ExtensionGrace time.Duration

	// SuspendTimeout is how long a client's page waits for its tab when
	// Chrome took the debugger away from a tab that stays open: the person
	// took it to a browser page, the Web Store or another extension's page,
	// or our extension restarted (a reload, an update) or Chrome stopped
	// its service worker. Meanwhile the client's target stays, its
	// commands for the tab wait, and when the tab can be debugged again
	// (offered again by the extension) its sessions go on where they were
	// (relay/internal/away). It also bounds how long a client is kept while our
	// extension is expected back, instead of ExtensionGrace. Past it the
	// tab's sessions end, its waiting commands fail with the reason, and a
	// client whose extension has not come back is closed. Default: 60 s,
	// twice the period of the alarm that wakes a stopped worker; negative:
	// no wait (the sessions end at once, as for any other detach).
	SuspendTimeout time.Duration

	// ExtensionKeepalive is how often the relay sends the extension a
	// small message of its own. Chrome stops an extension's service worker
	// after 30 s without activity, and a WebSocket ping does not count
	// where a message does: without it, the stock Playwright extension's
	// pairing ends 30 s after it was made if no client comes. Default:
	// 10 s.
	ExtensionKeepalive time.Duration

	// BrowserFile, when set, is where the default instance remembers the
	// browser its extension last reported, so that /json/version names
	// it before the extension has connected. Default: not remembered.
	BrowserFile string

	// UnclaimedTTL is how long a minted instance waits for its extension's
	// first connection before it is removed. The default instance never
	// expires. Default: 60 s.
	UnclaimedTTL time.Duration

	// CallTimeout bounds the relay's own calls to the extension (attach,
	// tab creation, ...). Commands forwarded for a client have no timeout,
	// as with Chrome: the extension answers or the connection ends.
	// Default: 30 s.
	CallTimeout time.Duration

	// DialogTimeout is how long a JavaScript dialog waits for an answer
	// from the automation or a person before the relay answers it by its
	// type: alert and beforeunload accepted, confirm and prompt dismissed.
	// Default: 30 s.
	DialogTimeout time.Duration

	// ApprovalTimeout is how long a command the policy asks about waits
	// for a person's answer before it is denied. Default: 60 s.
	ApprovalTimeout time.Duration

	// ScriptTimeout bounds a client's script in the person's tab: the
	// synchronous run of a Runtime.evaluate, and any script command still
	// waiting on a page whose main thread does not come free (person's brake.go).
	// Default: 10 s.
	ScriptTimeout time.Duration

	// ClientQueue bounds the messages queued for one CDP client. A client
	// that lets it fill is closed with a reason, never silently dropped
	// from. Default: 8192.
	ClientQueue int

	// MaxInFlight bounds one client's commands waiting for the browser.
	// Past it a command is answered at once with an error (the client is
	// not closed). Default: 4096; Playwright rarely has more than a few
	// dozen in flight.
	MaxInFlight int

	// ClientQueueBytes bounds the bytes queued for one client beside the
	// message count; past it the client is closed as one that does not
	// read. The same budget bounds what waits for the extension (the
	// sender waits for room). Default: 256 MiB.
	ClientQueueBytes int64

	// CommandsPerSecond and CommandBurst rate-limit one client's commands
	// (a token bucket). Past the limit a command is answered with an
	// error. Default: 5000 per second with a burst of 10000; negative
	// disables the limit.
	CommandsPerSecond float64
	CommandBurst      int

	// MaxInstances bounds the instances a relay keeps (the default one
	// included). Default: 1000.
	MaxInstances int

	// MaxTabs bounds the tabs one instance keeps: a tab the extension
	// offers past it is not shared, and Target.createTarget is refused
	// (bounds.go). Default: 1000.
	MaxTabs int

	// IdleClientTimeout closes a CDP client that has sent nothing for this
	// long, with a reason. Default: 0, never: Chrome's own port does not
	// close idle clients, and an automation may well wait for an event.
	IdleClientTimeout time.Duration

	// DefaultGUID is the guid of the default instance, the one that the
	// root discovery endpoints answer for. It is kept stable across
	// restarts by the caller so that a configured extension reconnects.
	// Default: a fresh random guid.
	DefaultGUID string

	// Version is reported in logs and in /json/version's extra fields.
	Version string

	// Observer receives the relay's observations for the audit log and
	// metrics. Default: discard.
	Observer api.Observer

	// Metrics counts messages, refusals and latencies. Default: counted
	// but not registered anywhere.
	Metrics *metrics.Metrics

	// Policy decides client commands. Default: allow everything. It can be
	// replaced while running with Server.SetPolicy.
	Policy api.Policy

	// CheckHost decides which Host headers are served. Default: what
	// Chrome's own port accepts, an IP literal or localhost. A front layer
	// that checks Host itself (with configured names) replaces it.
	CheckHost func(host string) bool

	// AllowClientOrigin decides whether a CDP WebSocket upgrade carrying
	// an Origin header (a web page) is accepted. Default: refuse every
	// Origin, as Chrome's own port does without --remote-allow-origins.
	AllowClientOrigin func(origin string) bool

	// AdminAllowed decides who may use the admin endpoints (minting
	// instances). Default: loopback peers.
	AdminAllowed func(r *http.Request) bool

	// DefaultProfile is the policy profile of the default instance ("":
	// the global policy). Minted instances name theirs when minted.
	DefaultProfile string

	// ValidProfile reports whether a policy profile exists, so that an
	// instance is never minted with a misspelt one. Default: any name.
	ValidProfile func(string) bool

	// Secrets are the secrets a client may type by reference
	// ({{secret:NAME}}). Default: none. Server.SetSecrets replaces them.
	Secrets SecretSource

	// RedactHeaders are header names, besides Cookie, Set-Cookie,
	// Authorization and Proxy-Authorization, whose values are replaced in
	// what clients receive (x-api-key, x-csrf-token, ...); any case.
	// Default: none.
	RedactHeaders []string

	// Tenant names the tenant a request acts for; "" is the operator,
	// who reaches every instance. A tenant reaches its own instances
	// only (tenants.go). Default: every request is the operator's.
	Tenant func(r *http.Request) string

	// PublicURL is the relay's base URL as its clients reach it, path
	// prefix included (https://relay.example.com/relay-1, behind a front
	// door that routes /relay-1/ here): every capability URL the relay
	// hands out (discovery, /json/list, minted instances) starts with it.
	// Default: the scheme and Host the request came with.
	PublicURL string

	// Listen is the address the relay is served on (host:port, as given
	// to net.Listen). With PublicURL it says which origins are the
	// relay's own, where a shared tab never goes (ownorigins.go); a port
	// of 0 is learnt from the connections served, and so is every local
	// address they arrive on. Default: none; the relay's own origins are
	// then PublicURL's alone.
	Listen string

	// Restore are the minted instances of an earlier run (Server.Saved),
	// restored by New with their guids, ids, tenants and profiles, so that
	// their extensions reconnect. Default: none.
	Restore []SavedInstance

	// Save is given every minted instance (Server.Saved) whenever one is
	// minted, paired for the first time or removed; calls are serialised.
	// An error is logged. Default: nothing is kept.
	Save func([]SavedInstance) error

	// Fallback serves every request that is not the relay's own (discovery,
	// CDP and extension endpoints), after the relay's Host check: the live
	// view, status and metrics are mounted here. Default: a plain-text
	// page at / and 404 elsewhere.
	Fallback http.Handler

	// Downloads says where the relay may write the files of a client's
	// downloads (package browser). Default: the OS temp dir, 1 GiB at most.
	Downloads DownloadsConfig

	Public       PublicBase // PublicURL, parsed by withDefaults
	DownloadDirs []string   // Downloads.Dirs, resolved by withDefaults
}

// PublicBase is PublicURL as the bases of the URLs handed out: "" for
// none.
type PublicBase struct {
	Http, Ws string // https://host/prefix and wss://host/prefix
}

// ParsePublicURL validates a public URL: http or https, a host, a path
// prefix or none, and nothing else (no user, query or fragment). The
// prefix loses its trailing slash.
func ParsePublicURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("public URL %q: %w", s, err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("public URL %q: the scheme is http or https", s)
	case u.Host == "" || u.Hostname() == "":
		return nil, fmt.Errorf("public URL %q: it needs a host", s)
	case u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.Opaque != "":
		return nil, fmt.Errorf("public URL %q: a base URL has no user, query or fragment", s)
	case u.RawPath != "" || strings.ContainsAny(u.Path, "%?#"):
		return nil, fmt.Errorf("public URL %q: the path prefix needs no escaping", s)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	if u.Path != "" && path.Clean(u.Path) != u.Path {
		return nil, fmt.Errorf("public URL %q: the path prefix is not clean", s)
	}
	return u, nil
}

const (
	defaultMaxMessageBytes    = 128 << 20
	defaultExtensionWait      = 45 * time.Second
	defaultExtensionGrace     = 5 * time.Second
	defaultExtensionKeepalive = 10 * time.Second
	defaultSuspendTimeout     = 60 * time.Second
	defaultUnclaimedTTL       = 60 * time.Second
	defaultCallTimeout        = 30 * time.Second
	defaultDialogTimeout      = 30 * time.Second
	defaultApprovalTimeout    = 60 * time.Second
	defaultScriptTimeout      = 10 * time.Second
	defaultClientQueue        = 8192
)

// WithDefaults validates c and fills in defaults.
func (c Config) WithDefaults() (Config, error) {
	var errs []error
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Observer == nil {
		c.Observer = api.DiscardObserver{}
	}
	if c.Metrics == nil {
		c.Metrics = metrics.New(nil)
	}
	if c.MaxMessageBytes == 0 {
		c.MaxMessageBytes = defaultMaxMessageBytes
	}
	if c.MaxMessageBytes < 1<<16 {
		errs = append(errs, fmt.Errorf("MaxMessageBytes %d is below 64 KiB: Playwright sends 330 KB commands", c.MaxMessageBytes))
	}
	if c.ExtensionWait == 0 {
		c.ExtensionWait = defaultExtensionWait
	}
	if c.ExtensionKeepalive <= 0 {
		c.ExtensionKeepalive = defaultExtensionKeepalive
	}
	if c.ExtensionGrace == 0 {
		c.ExtensionGrace = defaultExtensionGrace
	}
	if c.SuspendTimeout == 0 {
		c.SuspendTimeout = defaultSuspendTimeout
	}
	if c.UnclaimedTTL == 0 {
		c.UnclaimedTTL = defaultUnclaimedTTL
	}
	if c.CallTimeout == 0 {
		c.CallTimeout = defaultCallTimeout
	}
	if c.DialogTimeout <= 0 {
		c.DialogTimeout = defaultDialogTimeout
	}
	if c.ApprovalTimeout <= 0 {
		c.ApprovalTimeout = defaultApprovalTimeout
	}
	if c.ScriptTimeout <= 0 {
		c.ScriptTimeout = defaultScriptTimeout
	}
	if c.ClientQueue == 0 {
		c.ClientQueue = defaultClientQueue
	}
	if c.ClientQueueBytes == 0 {
		c.ClientQueueBytes = 256 << 20
	}
	if c.MaxInFlight == 0 {
		c.MaxInFlight = 4096
	}
	if c.CommandsPerSecond == 0 {
		c.CommandsPerSecond = 5000
	}
	if c.CommandBurst == 0 {
		c.CommandBurst = 10000
	}
	if c.MaxInstances == 0 {
		c.MaxInstances = 1000
	}
	if c.MaxTabs == 0 {
		c.MaxTabs = 1000
	}
	if c.ExtensionWait < 0 || c.UnclaimedTTL < 0 || c.CallTimeout < 0 || c.ClientQueue < 0 || c.MaxTabs < 0 {
		errs = append(errs, errors.New("durations and queue sizes must not be negative"))
	}
	if c.DefaultGUID != "" && !cdp.ValidGUID(c.DefaultGUID) {
		errs = append(errs, errors.New("DefaultGUID must be 32 lowercase hex digits"))
	}
	if c.Version == "" {
		c.Version = "dev"
	}
	if dirs, err := c.Downloads.Resolve(); err != nil {
		errs = append(errs, err)
	} else {
		c.DownloadDirs = dirs
	}
	if c.PublicURL != "" {
		u, err := ParsePublicURL(c.PublicURL)
		if err != nil {
			errs = append(errs, err)
		} else {
			ws := "ws"
			if u.Scheme == "https" {
				ws = "wss"
			}
			c.Public = PublicBase{Http: u.Scheme + "://" + u.Host + u.Path, Ws: ws + "://" + u.Host + u.Path}
		}
	}
	return c, errors.Join(errs...)
}

// SecretSource is where the relay finds the secrets it may type: a
// *secrets.Store. Nil: no secrets.
type SecretSource interface {
	// Allowed reports whether secret name may be typed on origin.
	Allowed(name, origin string) bool
	// Origins returns where secret name may be typed, and whether there is
	// such a secret.
	Origins(name string) ([]string, bool)
	// Value reads the secret. Its error never carries the value.
	Value(ctx context.Context, name string) ([]byte, error)
	// AnyField reports whether secret name may be typed into any field
	// that takes text; otherwise into a password field only.
	AnyField(name string) bool
}

// SavedInstance is what the relay keeps of a minted instance across a
// restart (Config.Restore, Config.Save): enough that its extension
// reconnects to the same guid and finds it as it was.
type SavedInstance struct {
	ID      string    `json:"id"`
	GUID    string    `json:"guid"`
	Tenant  string    `json:"tenant,omitempty"`
	Profile string    `json:"profile,omitempty"`
	Created time.Time `json:"created"`
	// Paired: an extension has connected to it once, so it no longer
	// expires unpaired.
	Paired bool `json:"paired,omitempty"`
}
