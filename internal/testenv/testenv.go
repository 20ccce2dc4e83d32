package testenv

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/extension"
	"github.com/cdprelay/cdprelay/internal/chromium"
	"github.com/cdprelay/cdprelay/relay"
)

// Env is a running relay with a connected browser.
type Env struct {
	Relay   *relay.Server
	Addr    string // host:port of the relay
	Browser *chromium.Browser
	Pages   *Pages
	LogPath string // the relay's and browser's log
	// Downloads is where the browser saves downloads: the person's
	// download folder, as far as the relay knows.
	Downloads string
	// BrowserWS is the browser's own CDP endpoint, with Options.DebugPort:
	// a test's way to act as the person (the extension's connect page),
	// never the relay's.
	BrowserWS string
	// Audit holds what the relay observed (its relay.Config.Observer).
	Audit *Audit

	hs         *http.Server
	seen       requestLog // what the relay's listener was asked for
	built      Served     // with Options.Build
	extDir     string
	standInDir string
	log        *slog.Logger
	opts       Options
}

// HTTPEndpoint is what Playwright's connectOverCDP takes.
func (e *Env) HTTPEndpoint() string { return e.scheme("http") + "://" + e.Addr }

// WSEndpoint is the browser WebSocket URL of the default instance.
func (e *Env) WSEndpoint() string {
	return e.scheme("ws") + "://" + e.Addr + "/devtools/browser/" + e.Relay.Default().GUID()
}

// scheme is http or ws, with an s under TLS.
func (e *Env) scheme(plain string) string {
	if e.opts.TLS != nil {
		return plain + "s"
	}
	return plain
}

// Require reports why end-to-end tests cannot run here, or "" when they
// can. In CI a missing prerequisite is a failure, not a skip: there, the
// CI script installs everything.
func Require(needNode bool) string {
	if _, err := chromium.Find(""); err != nil {
		return err.Error()
	}
	if needNode {
		if _, err := exec.LookPath("node"); err != nil {
			return "node is not installed"
		}
		if _, err := os.Stat(filepath.Join(E2EDir(), "node_modules", "playwright-core")); err != nil {
			return "npm test dependencies are not installed (make deps)"
		}
	}
	return ""
}

// SkipOrFail skips t when Require fails, or fails it under CI.
func SkipOrFail(tb testing.TB, needNode bool) {
	tb.Helper()
	if why := Require(needNode); why != "" {
		if os.Getenv("CI") != "" {
			tb.Fatalf("end-to-end prerequisites missing in CI: %s", why)
		}
		tb.Skipf("end-to-end prerequisites missing: %s", why)
	}
}

// E2EDir is the repository's e2e folder (node scripts and node_modules).
func E2EDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "e2e")
}

// Options tune Start.
type Options struct {
	Share  string        // "all" (default) or "pick"
	Relay  relay.Config  // Logger and DefaultGUID are filled in
	Output io.Writer     // log destination; default: a temp file
	Wait   time.Duration // how long to wait for the extension; default 45 s
	// DebugPort opens the browser's own debugging port (see BrowserWS).
	DebugPort bool

	// TLS, when set, serves the relay over HTTPS and WSS with this
	// certificate; the browser trusts it (and nothing else it could not
	// verify) and its extension connects over wss://. Default: plain.
	TLS *tls.Certificate
	// Wrap, when set, is put in front of the relay's handler (the ingress
	// guard, say), also after RestartRelay. Default: the relay alone.
	Wrap func(http.Handler) http.Handler
	// ExtensionToken, when set, is added to the extension's relay URL as
	// ?token=. Default: none.
	ExtensionToken string
	// Build, when set, builds what is served instead of a relay from
	// Relay: the whole product (internal/app), say. It gets the address
	// being served and the log. RestartRelay refuses such an Env.
	Build func(addr string, log *slog.Logger) (Served, error)
	// StandIns loads the person's other extensions as the tests stand in
	// for them (standins.go): a password manager and the stock Playwright
	// extension. Default: our extension alone.
	StandIns bool
}

// Served is what Options.Build built.
type Served struct {
	Relay   *relay.Server // the relay inside
	Handler http.Handler  // what is served on the address
	// Close closes everything Build started; Env.Close calls it.
	Close func(context.Context) error
}

// Start runs a relay and a browser. Call Close when done.
func Start(ctx context.Context, opts Options) (_ *Env, err error) {
	if opts.Share == "" {
		opts.Share = "all"
	}
	if opts.Wait == 0 {
		opts.Wait = 45 * time.Second
	}
	e := &Env{opts: opts}
	defer func() {
		if err != nil {
			e.Close()
		}
	}()
	out := opts.Output
	if out == nil {
		f, err := os.CreateTemp("", "cdprelay-e2e-*.log")
		if err != nil {
			return nil, err
		}
		e.LogPath = f.Name()
		out = f
	}
	log := slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e.log = log
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	e.Addr = ln.Addr().String()
	if opts.Build != nil {
		if e.built, err = opts.Build(e.Addr, log); err != nil {
			ln.Close()
			return nil, err
		}
		e.Relay = e.built.Relay
	} else {
		cfg := opts.Relay
		cfg.Logger = log
		cfg.Listen = e.Addr // as cdprelay serve says where it listens
		e.Audit = &Audit{next: cfg.Observer}
		cfg.Observer = e.Audit
		if e.Relay, err = relay.New(cfg); err != nil {
			ln.Close()
			return nil, err
		}
	}
	e.serve(ln)

	if e.Pages, err = StartPages(); err != nil {
		return nil, err
	}

	path, err := chromium.Find("")
	if err != nil {
		return nil, err
	}
	if e.extDir, err = os.MkdirTemp("", "cdprelay-e2e-ext-"); err != nil {
		return nil, err
	}
	if e.Downloads, err = os.MkdirTemp("", "cdprelay-e2e-downloads-"); err != nil {
		return nil, err
	}
	extURL := e.scheme("ws") + "://" + e.Addr + "/extension/" + e.Relay.Default().GUID()
	if opts.ExtensionToken != "" {
		extURL += "?token=" + url.QueryEscape(opts.ExtensionToken)
	}
	if err := extension.WriteDir(e.extDir, &extension.Config{Relay: extURL, Share: opts.Share}); err != nil {
		return nil, err
	}
	var more []string
	if opts.StandIns {
		if e.standInDir, err = os.MkdirTemp("", "cdprelay-e2e-standins-"); err != nil {
			return nil, err
		}
		if more, err = writeStandIns(e.standInDir); err != nil {
			return nil, err
		}
	}
	args := []string{"--silent-debugger-extension-api"}
	if opts.DebugPort {
		args = append(args, "--remote-debugging-port=0")
	}
	if opts.TLS != nil {
		leaf, err := x509.ParseCertificate(opts.TLS.Certificate[0])
		if err != nil {
			return nil, err
		}
		args = append(args, chromium.TrustCertificateFlag(leaf))
	}
	e.Browser, err = chromium.Launch(context.Background(), chromium.Options{
		Path:           path,
		ExtensionDir:   e.extDir,
		MoreExtensions: more,
		Args:           args,
		DownloadDir:    e.Downloads,
		Output:         out,
		Logger:         log,
	})
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithTimeout(ctx, opts.Wait)
	defer cancel()
	if err := e.Relay.Default().WaitReady(wctx); err != nil {
		return nil, fmt.Errorf("the browser's extension did not connect (log: %s): %w", e.LogPath, err)
	}
	if opts.DebugPort {
		if e.BrowserWS, err = debuggerURL(wctx, e.Browser.UserDataDir()); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// debuggerURL reads the browser's own endpoint from the file Chrome writes
// into its profile for --remote-debugging-port=0.
func debuggerURL(ctx context.Context, profile string) (string, error) {
	for {
		b, err := os.ReadFile(filepath.Join(profile, "DevToolsActivePort"))
		if port, path, ok := strings.Cut(strings.TrimSpace(string(b)), "\n"); err == nil && ok {
			return "ws://127.0.0.1:" + port + path, nil
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("the browser did not open its debugging port: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// RestartRelay stops the relay, as a crash or an upgrade would, and starts
// a new one on the same address with the same default guid; the browser
// and its extension stay. It returns once the extension has reconnected.
func (e *Env) RestartRelay(ctx context.Context, cfg relay.Config) error {
	if e.opts.Build != nil {
		return errors.New("testenv: RestartRelay restarts a relay alone, not what Options.Build built")
	}
	guid := e.Relay.Default().GUID()
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	e.Relay.Close(cctx)
	cancel()
	e.hs.Close()
	cfg.Logger = e.log
	cfg.Listen = e.Addr
	cfg.DefaultGUID = guid
	e.Audit.setNext(cfg.Observer)
	cfg.Observer = e.Audit
	srv, err := relay.New(cfg)
	if err != nil {
		return err
	}
	e.Relay = srv
	ln, err := net.Listen("tcp", e.Addr)
	if err != nil {
		return fmt.Errorf("listen again on %s: %w", e.Addr, err)
	}
	e.serve(ln)
	return srv.Default().WaitReady(ctx)
}

// serve serves the relay on ln, behind Wrap and over TLS as configured.
func (e *Env) serve(ln net.Listener) {
	var h http.Handler = e.Relay
	if e.built.Handler != nil {
		h = e.built.Handler
	}
	if e.opts.Wrap != nil {
		h = e.opts.Wrap(h)
	}
	h = e.seen.record(h)
	e.hs = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	if e.opts.TLS != nil {
		e.hs.TLSConfig = &tls.Config{Certificates: []tls.Certificate{*e.opts.TLS}}
		// WebSockets upgrade from HTTP/1.1, as with cdprelay serve.
		e.hs.Protocols = new(http.Protocols)
		e.hs.Protocols.SetHTTP1(true)
		go e.hs.ServeTLS(ln, "", "")
		return
	}
	go e.hs.Serve(ln)
}

// RelaySaw returns how many requests the relay's listener received whose
// request URI contains s: a test's way to know whether anything reached
// the relay, whatever it answered.
func (e *Env) RelaySaw(s string) int { return e.seen.count(s) }

// requestLog keeps the request URIs a listener received, the latest
// maxLogged of them.
type requestLog struct {
	mu   sync.Mutex
	uris []string
}

const maxLogged = 1 << 14

func (l *requestLog) record(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		if len(l.uris) == maxLogged {
			l.uris = append(l.uris[:0], l.uris[maxLogged/2:]...)
		}
		l.uris = append(l.uris, r.RequestURI)
		l.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

func (l *requestLog) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, u := range l.uris {
		if strings.Contains(u, s) {
			n++
		}
	}
	return n
}

// Close stops the browser and the relay.
func (e *Env) Close() {
	if e.Browser != nil {
		e.Browser.Stop(3 * time.Second)
	}
	if e.built.Close != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		e.built.Close(ctx)
		cancel()
	} else if e.Relay != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		e.Relay.Close(ctx)
		cancel()
	}
	if e.hs != nil {
		e.hs.Close()
	}
	if e.Pages != nil {
		e.Pages.Close()
	}
	if e.extDir != "" {
		os.RemoveAll(e.extDir)
	}
	if e.standInDir != "" {
		os.RemoveAll(e.standInDir)
	}
	if e.Downloads != "" {
		os.RemoveAll(e.Downloads)
	}
}

// Node runs an e2e node script with args and extra environment. It returns
// the combined output.
func Node(ctx context.Context, script string, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "node", append([]string{script}, args...)...)
	cmd.Dir = E2EDir()
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// Audit is an observer of the relay that keeps what it is told (the last
// maxAudit events), for tests to read, and passes it on to the observer
// of Options.Relay, if any.
type Audit struct {
	mu   sync.Mutex
	evs  []relay.Event  // guarded by mu
	base int            // guarded by mu: how many were let go before evs[0]
	next relay.Observer // guarded by mu
}

const maxAudit = 100000

// Observe implements relay.Observer.
func (a *Audit) Observe(ev relay.Event) {
	a.mu.Lock()
	if len(a.evs) >= maxAudit {
		half := len(a.evs) / 2
		a.evs = append(a.evs[:0], a.evs[half:]...)
		a.base += half
	}
	a.evs = append(a.evs, ev)
	next := a.next
	a.mu.Unlock()
	if next != nil {
		next.Observe(ev)
	}
}

func (a *Audit) setNext(o relay.Observer) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.next = o
}

// Len is how many events were kept so far: a mark for Since.
func (a *Audit) Len() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.base + len(a.evs)
}

// Since returns the events kept from mark on.
func (a *Audit) Since(mark int) []relay.Event {
	a.mu.Lock()
	defer a.mu.Unlock()
	i := min(max(mark-a.base, 0), len(a.evs))
	return append([]relay.Event(nil), a.evs[i:]...)
}
