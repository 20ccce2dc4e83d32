package app

import (
	"errors"
	"fmt"
	"log/slog"
	"net"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cdprelay/cdprelay/internal/ingress"
	"github.com/cdprelay/cdprelay/internal/routes"
	"github.com/cdprelay/cdprelay/relay"
	"github.com/cdprelay/cdprelay/screencast"
)

// Config is what New builds the product from. Every field but Addr has a
// default; Reload takes a new File and certificate, every other field is
// New's for the App's life.
type Config struct {
	// File is the config file's content with what the command line adds
	// to it: policy, profiles, audit, tokens, hosts, origins, TLS. Default:
	// the empty file, the zero-config relay (loopback only, no tokens).
	File File

	// Addr is the address the relay is served on. Off loopback New
	// requires tokens, and TLS unless InsecureNoTLS; a specific host it
	// names is added to File.Hosts. Required.
	Addr string

	// TLSCert and TLSKey are PEM files that replace File.TLS when either
	// is set (the --tls-cert and --tls-key flags). Default: File.TLS.
	TLSCert, TLSKey string

	// PublicURL is the relay's base URL as the front door in front of it
	// exposes it, path prefix included (https://relay.example.com/relay-1):
	// every capability URL the relay hands out names it, its host is one
	// the relay answers to, its origin counts as the relay's own, and a
	// request whose path starts with its prefix is served as if it did
	// not, so the front door may pass the path on as it is. Off loopback,
	// New requires tokens. Default: none; URLs name the request's Host.
	PublicURL string

	// InsecureNoTLS allows a non-loopback Addr without TLS, for a
	// TLS-terminating proxy on a trusted network. Default: refused.
	InsecureNoTLS bool

	// PersonKey is the person's key (ingress.GeneratePersonKey): the one
	// credential of the person who lends the browser, which stops and
	// resumes the automation, approves, answers dialogs, takes over a tab
	// and removes an instance, on loopback too; the live view's link
	// carries it. cmd/cdprelay keeps it in the state dir. Default: a key
	// minted for this App (PersonKey returns it).
	PersonKey string

	// PersonKeyFile is where PersonKey is kept, for what a view-only live
	// view tells the person. Default: none (a key made for this run).
	PersonKeyFile string

	// Launch mints a token with the extension scope for a browser the
	// process launches (LaunchToken), whether tokens are configured or
	// not: a reload may add tokens while the browser runs, and its
	// extension must still reconnect. Default: none.
	Launch bool

	// Logger receives the logs of every part. Default: discard.
	Logger *slog.Logger

	// Relay tunes the relay: limits, timeouts, DefaultGUID, Version, and
	// the instances kept across restarts (Restore, Save). The fields the
	// assembly wires itself (Logger, Observer, Metrics, Policy,
	// DefaultProfile, ValidProfile, CheckHost, AllowClientOrigin,
	// AdminAllowed, Fallback, Tenant, PublicURL) must be left zero: New
	// refuses a Config that sets them rather than let them be overwritten
	// unseen.
	Relay relay.Config

	// Screencast tunes the live view's screencast: frame rate, quality,
	// size. Its Metrics and Logger are the assembly's and must be nil.
	// Default: screencast's defaults.
	Screencast screencast.Config

	// Registry is where every part registers its metrics, served at
	// /metrics. Default: a new registry with the Go and process collectors.
	Registry *prometheus.Registry
}

// validate checks what New needs before it builds anything.
func (c *Config) validate() error {
	var errs []error
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		errs = append(errs, errors.New("app: Addr must be host:port"))
	}
	r := c.Relay
	if r.Logger != nil || r.Observer != nil || r.Metrics != nil || r.Policy != nil || r.DefaultProfile != "" ||
		r.ValidProfile != nil || r.CheckHost != nil || r.AllowClientOrigin != nil || r.AdminAllowed != nil || r.Fallback != nil ||
		r.Tenant != nil || r.PublicURL != "" {
		errs = append(errs, errors.New("app: Config.Relay sets a field the assembly wires itself"))
	}
	if c.Screencast.Metrics != nil || c.Screencast.Logger != nil {
		errs = append(errs, errors.New("app: Config.Screencast sets Metrics or Logger, which the assembly wires itself"))
	}
	if c.PublicURL != "" {
		u, err := relay.ParsePublicURL(c.PublicURL)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("--public-url: %w", err))
		case u.Path != "" && (routes.Classify("GET", u.Path).Area != routes.AreaOther || routes.Classify("GET", u.Path+"/x").Area != routes.AreaOther):
			// The prefix is taken off what comes: one that is a path of
			// the relay's own would take that path away.
			errs = append(errs, fmt.Errorf("--public-url: the path prefix %s is a path of the relay's own; use one such as /relay-1", u.Path))
		}
	}
	if c.PersonKey != "" {
		if err := ingress.CheckPersonKey(c.PersonKey); err != nil {
			errs = append(errs, fmt.Errorf("app: PersonKey: %w", err))
		}
	}
	if err := c.File.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
