package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/cdprelay/cdprelay/audit"
	"github.com/cdprelay/cdprelay/denylist"
	"github.com/cdprelay/cdprelay/internal/ingress"
	"github.com/cdprelay/cdprelay/internal/relaypolicy"
	"github.com/cdprelay/cdprelay/internal/routes"
	"github.com/cdprelay/cdprelay/relay"
	"github.com/cdprelay/cdprelay/screencast"
	"github.com/cdprelay/cdprelay/secrets"
	"github.com/cdprelay/cdprelay/viewer"
)

// App is the assembled product: an http.Handler with the ingress guard in
// front, and the parts behind it.
type App struct {
	cfg     Config               // static: New's, with defaults
	log     *slog.Logger         // static
	reg     *prometheus.Registry // static
	audit   *audit.Log           // static
	metrics *relay.Metrics       // static
	relay   *relay.Server        // static
	live    *viewer.Server       // static
	guard   *ingress.Guard       // static; its rules are swapped by Reload
	certs   *certStore           // static; nil: plain HTTP. Its certificate is swapped by Reload
	ops     http.Handler         // static: /metrics
	audits  http.Handler         // static: /v1/audit, /v1/audit/follow

	// extraHosts and extraTokens are what the process adds to every file
	// it is given: the listen address's host, the launched browser's
	// token. Static.
	extraHosts  []string
	extraTokens []ingress.Token
	launchToken string // static
	personKey   string // static: Config.PersonKey, or one minted by New
	// public is Config.PublicURL parsed (nil: none): the host it names
	// is among extraHosts, its origin the one selfOrigins holds, its
	// path the prefix ServeHTTP takes off. Static.
	public      *url.URL
	selfOrigins []string
	gauge       *tenantGauge // static: cdprelay_tenant_instances, off unless the file says

	policy atomic.Pointer[denylist.Policy] // the compiled policy in force; swapped by Reload

	reloadMu  sync.Mutex // serialises Reload
	closeOnce sync.Once
	closeErr  error
}

// New validates cfg and builds the product. On error nothing is left
// running.
func New(cfg Config) (_ *App, err error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	pol, err := cfg.File.compilePolicy()
	if err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
		cfg.Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	a := &App{cfg: cfg, log: cfg.Logger, reg: cfg.Registry, extraHosts: bindHosts(cfg.Addr), personKey: cfg.PersonKey}
	if a.personKey == "" {
		a.personKey = ingress.GeneratePersonKey()
	}
	a.policy.Store(pol)
	if cfg.PublicURL != "" {
		a.public, _ = relay.ParsePublicURL(cfg.PublicURL) // validated
		a.extraHosts = append(a.extraHosts, a.public.Hostname())
		a.selfOrigins = []string{a.public.Scheme + "://" + a.public.Host}
	}

	// What stands in front, first: it refuses what would expose the
	// relay before anything is opened.
	certFile, keyFile, err := tlsFiles(&cfg)
	if err != nil {
		return nil, err
	}
	if err := checkExposure(cfg.Addr, len(cfg.File.Tokens), certFile != "", cfg.InsecureNoTLS); err != nil {
		return nil, err
	}
	if err := checkPublicExposure(a.public, len(cfg.File.Tokens)); err != nil {
		return nil, err
	}
	if certFile != "" {
		c, err := loadCertificate(certFile, keyFile)
		if err != nil {
			return nil, err
		}
		a.certs = &certStore{}
		a.certs.cur.Store(c)
	}
	if cfg.Launch {
		var entry ingress.Token
		a.launchToken, entry = launchToken()
		a.extraTokens = []ingress.Token{entry}
	}

	if a.audit, err = openAudit(cfg.File.Audit, a.reg); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			a.closeAudit(context.Background())
		}
	}()
	a.metrics = relay.NewMetrics(a.reg)
	a.metrics.InitRules(append(pol.Rules(), relay.RelayRules()...))
	rc := cfg.Relay
	rc.Logger = a.log
	rc.Policy = relaypolicy.Adapter{P: pol}
	rc.DefaultProfile = cfg.File.DefaultProfile
	rc.ValidProfile = func(name string) bool { return slices.Contains(a.policy.Load().Profiles(), name) }
	rc.Observer = AuditObserver{a.audit}
	rc.Metrics = a.metrics
	rc.RedactHeaders = append(slices.Clip(rc.RedactHeaders), cfg.File.RedactHeaders...)
	if t := cfg.File.Dialogs.Timeout; t > 0 {
		rc.DialogTimeout = time.Duration(t)
	}
	if t := cfg.File.Approvals.Timeout; t > 0 {
		rc.ApprovalTimeout = time.Duration(t)
	}
	if d := cfg.File.Downloads; d.Dirs != nil || d.MaxBytes != 0 {
		rc.Downloads = relay.DownloadsConfig{Dirs: d.Dirs, MaxBytes: d.MaxBytes}
	}
	if t := cfg.File.Scripts.Timeout; t > 0 {
		rc.ScriptTimeout = time.Duration(t)
	}
	// The ingress guard in front has checked Host, Origin and the token's
	// scopes (with the configured names and origins) before the relay
	// sees a request.
	rc.CheckHost = func(string) bool { return true }
	rc.AllowClientOrigin = func(string) bool { return true }
	rc.AdminAllowed = func(r *http.Request) bool {
		return ingress.Scopes(r.Context()).HasAny(ingress.ScopeSet(ingress.ScopeAdmin | ingress.ScopePair))
	}
	rc.Tenant = requestTenant
	rc.PublicURL = cfg.PublicURL
	rc.Listen = cfg.Addr
	if a.relay, err = relay.New(rc); err != nil {
		return nil, err
	}
	a.relay.SetTenants(cfg.File.tenantRules())
	a.gauge = newTenantGauge(a.relay)
	a.gauge.set(cfg.File.gaugeTenants())
	a.reg.MustRegister(a.gauge)
	defer func() {
		if err != nil {
			a.relay.Close(context.Background())
		}
	}()
	if err := a.setSecrets(cfg.File.Secrets); err != nil {
		return nil, err
	}
	if a.live, err = a.newLiveView(); err != nil {
		return nil, err
	}
	a.ops = promhttp.HandlerFor(a.reg, promhttp.HandlerOpts{Registry: a.reg})
	a.audits = a.audit.Ring().HandlerWith(audit.HandlerOptions{
		Tenant:   requestTenant,
		Instance: func(r *http.Request, id string) bool { return a.InstanceFor(r, id) != nil },
	})
	a.guard, err = ingress.New(http.HandlerFunc(a.route), a.ingressConfig(&cfg.File), ingress.Options{Logger: a.log, Metrics: ingress.NewMetrics(a.reg)})
	if err != nil {
		a.live.Close(context.Background())
		return nil, fmt.Errorf("config: %w", err)
	}
	return a, nil
}

func openAudit(c AuditConfig, reg prometheus.Registerer) (*audit.Log, error) {
	var sink *audit.Sink
	if c.File != "" {
		var err error
		if sink, err = audit.OpenSink(c.File); err != nil {
			return nil, fmt.Errorf("audit file: %w", err)
		}
	}
	size := c.RingSize
	if size == 0 {
		size = audit.DefaultCapacity
	}
	return audit.NewLog(audit.NewRing(size, sink.LastSeq()), sink, audit.NewMetrics(reg)), nil
}

// newLiveView builds the live view (the page at / and the viewer socket)
// over the relay.
func (a *App) newLiveView() (*viewer.Server, error) {
	sc := a.cfg.Screencast
	m, err := screencast.NewMetrics(a.reg)
	if err != nil {
		return nil, fmt.Errorf("live view metrics: %w", err)
	}
	sc.Metrics = m
	sc.OnPanic = a.metrics.Panicked
	vs, err := viewer.New(viewer.Config{
		Source:  viewer.FromRelay(a.relay),
		OnPanic: a.metrics.Panicked,
		Logger:  a.log.With("component", "liveview"),
		// A viewer's navigate passes the same fence as a client's
		// Page.navigate on that instance: its profile's, under the policy
		// in force at the time.
		URLFence: a.urlFence,
		// Watching needs the viewer scope. Acting as the person in charge
		// (taking over, Stop and Resume, approvals, dialogs) needs the
		// person's credential with viewer-interactive: the person key, or
		// a token without cdp. A loopback peer of the zero-config relay
		// has every scope but is not the person: the agent is one too.
		Interactive: func(r *http.Request) bool {
			g, _ := ingress.GrantFrom(r.Context())
			return g.Person && g.Scopes.Has(ingress.ScopeViewerInteractive) && r.URL.Query().Get("mode") != "view"
		},
		Credential: a.viewerCredential,
		// A tenant's viewer sees that tenant's instances only.
		Tenant:     requestTenant,
		Screencast: sc,
	})
	if err != nil {
		return nil, fmt.Errorf("live view: %w", err)
	}
	return vs, nil
}

// urlFence judges a viewer's navigate of a tab of instance id by that
// instance's policy profile.
func (a *App) urlFence(id, url string) (bool, string) {
	for _, in := range a.relay.Instances() {
		if in.ID() == id {
			d := a.relay.Policy().URL(in.Profile(), url)
			return d.Verdict == relay.Allow, d.Message
		}
	}
	return false, "the instance is gone"
}

// ServeHTTP serves every endpoint of the product, behind the ingress
// guard. Under a public URL with a path prefix, a request whose path
// starts with the prefix is served as if it did not: the front door may
// route /relay-1/... here as it is.
func (a *App) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if a.public != nil && a.public.Path != "" {
		r = stripPrefix(r, a.public.Path)
	}
	a.guard.ServeHTTP(w, r)
}

// route sends a request the guard let through to the part that serves its
// route.
func (a *App) route(w http.ResponseWriter, r *http.Request) {
	rt := routes.Classify(r.Method, r.URL.Path)
	switch {
	case rt.Relay():
		a.relay.ServeHTTP(w, r)
	case rt.Kind == routes.KindMetrics:
		a.ops.ServeHTTP(w, r)
	case rt.Kind == routes.KindAudit:
		a.audits.ServeHTTP(w, r)
	case rt.Kind == routes.KindInstances:
		a.serveStatus(w, r)
	case rt.Kind == routes.KindInstance:
		a.serveInstance(w, r, rt)
	case rt.Kind == routes.KindRemove:
		a.serveRemove(w, r, rt)
	case rt.Area == routes.AreaPerson:
		a.servePerson(w, r, rt)
	default:
		// The viewer socket, the page shell, and the 404 of every other
		// path, which the page's handler answers.
		a.live.ServeHTTP(w, r)
	}
}

// PersonKey is the person's key: Config.PersonKey, or the one New minted.
// The live view's link carries it (PersonLink); nothing the relay serves
// ever does.
func (a *App) PersonKey() string { return a.personKey }

// PersonLink is the live view's link for the person, under base (the
// page's base URL, without a trailing slash). The key rides in the
// fragment, which a browser never sends: not to the relay, not to a front
// door's logs. The page keeps it in its origin's storage and takes it out
// of the address bar at once.
func (a *App) PersonLink(base string) string {
	return strings.TrimSuffix(base, "/") + "/#person=" + a.personKey
}

// ingressConfig is the file's ingress rules with what the process adds:
// the listen address's host, the launched browser's token, the public
// URL's origin, the person key.
func (a *App) ingressConfig(f *File) ingress.Config {
	icfg := f.ingress(a.extraHosts, a.extraTokens, a.selfOrigins...)
	icfg.PersonKey = a.personKey
	return icfg
}

// Relay is the relay server.
func (a *App) Relay() *relay.Server { return a.relay }

// LiveView is the live view.
func (a *App) LiveView() *viewer.Server { return a.live }

// Audit is the audit log.
func (a *App) Audit() *audit.Log { return a.audit }

// Registry is the registry every part's metrics are on.
func (a *App) Registry() *prometheus.Registry { return a.reg }

// Guard is the ingress guard in front.
func (a *App) Guard() *ingress.Guard { return a.guard }

// Reload applies cfg.File and cfg's certificate: the policy, tokens,
// hosts, origins and the TLS certificate. The rest of cfg is ignored: it
// is New's for the App's life. A config that does not validate, or that
// would change what needs a restart (TLS on or off) or expose the relay,
// changes nothing and is returned as the error. Either way the outcome is
// logged and audited, and no connection is dropped, not even one whose
// token the new file no longer lists.
func (a *App) Reload(cfg Config) error {
	a.reloadMu.Lock()
	defer a.reloadMu.Unlock()
	apply, err := a.prepareReload(&cfg)
	if err != nil {
		a.ReloadFailed(err)
		return err
	}
	apply()
	a.log.Info("config reloaded")
	a.relay.Observe(relay.Event{Actor: relay.ActorOperator, Kind: relay.KindPolicy, Outcome: relay.OutcomeOK})
	return nil
}

// ReloadFailed logs and audits a reload that did not happen, for a caller
// that could not even read the new config.
func (a *App) ReloadFailed(err error) {
	a.log.Error("config reload failed; keeping the configuration in force", "err", err)
	a.relay.Observe(relay.Event{Actor: relay.ActorOperator, Kind: relay.KindPolicy, Outcome: relay.OutcomeError, Detail: err.Error()})
}

// prepareReload checks everything a reload would change and returns the
// change, to be applied only once the whole config is known to be good.
func (a *App) prepareReload(cfg *Config) (apply func(), err error) {
	if err := cfg.File.Validate(); err != nil {
		return nil, err
	}
	pol, err := cfg.File.compilePolicy()
	if err != nil {
		return nil, err
	}
	// The listen address and --insecure-no-tls are New's.
	cfg.Addr, cfg.InsecureNoTLS = a.cfg.Addr, a.cfg.InsecureNoTLS
	certFile, keyFile, err := tlsFiles(cfg)
	if err != nil {
		return nil, err
	}
	if (certFile != "") != (a.certs != nil) {
		return nil, errors.New("turning TLS on or off needs a restart")
	}
	if err := checkExposure(cfg.Addr, len(cfg.File.Tokens), a.certs != nil, cfg.InsecureNoTLS); err != nil {
		return nil, err
	}
	icfg := a.ingressConfig(&cfg.File)
	if err := icfg.Validate(); err != nil {
		return nil, err
	}
	var cert *tls.Certificate
	if certFile != "" {
		if cert, err = loadCertificate(certFile, keyFile); err != nil {
			return nil, err
		}
	}
	store, err := secrets.New(cfg.File.Secrets)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	redact := append(slices.Clip(a.cfg.Relay.RedactHeaders), cfg.File.RedactHeaders...)
	return func() {
		a.relay.SetSecrets(secretSource(store))
		a.relay.SetRedactHeaders(redact)
		a.metrics.InitRules(pol.Rules())
		a.policy.Store(pol)
		a.relay.SetPolicy(relaypolicy.Adapter{P: pol})
		a.relay.SetTenants(cfg.File.tenantRules())
		a.gauge.set(cfg.File.gaugeTenants())
		_ = a.guard.Reload(icfg) // validated above
		if cert != nil {
			a.certs.cur.Store(cert)
		}
	}, nil
}

// Close closes, in order, the relay's connections (clients and extensions
// are told with 1001 and a reason), the live view's viewers and taps, and
// the audit log, which flushes its file last so that it holds every
// disconnect. It waits for each, or for ctx. Calls after the first return
// the first's result.
func (a *App) Close(ctx context.Context) error {
	a.closeOnce.Do(func() {
		var errs []error
		if err := a.relay.Close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("closing connections: %w", err))
		}
		if err := a.live.Close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("closing the live view: %w", err))
		}
		if err := a.closeAudit(ctx); err != nil {
			errs = append(errs, err)
		}
		a.closeErr = errors.Join(errs...)
	})
	return a.closeErr
}

func (a *App) closeAudit(ctx context.Context) error {
	if err := a.audit.Close(ctx); err != nil {
		return fmt.Errorf("closing the audit log: %w", err)
	}
	return nil
}

// setSecrets gives the relay the configured secrets.
func (a *App) setSecrets(list []secrets.Config) error {
	store, err := secrets.New(list)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	a.relay.SetSecrets(secretSource(store))
	return nil
}

// secretSource is the relay's view of store: none when it holds nothing.
func secretSource(store *secrets.Store) relay.SecretSource {
	if len(store.Names()) == 0 {
		return nil
	}
	return store
}
