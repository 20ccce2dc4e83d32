package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/cdprelay/cdprelay/extension"
	"github.com/cdprelay/cdprelay/internal/app"
	"github.com/cdprelay/cdprelay/internal/chromium"
	"github.com/cdprelay/cdprelay/relay"
)

type serveFlags struct {
	addr      string
	launch    bool
	headful   bool
	chrome    string
	stateDir  string
	logLevel  string
	logFormat string
	maxMsg    int64
	maxTabs   int
	config    string
	publicURL string
	policy    policyFlags
	live      liveFlags
	reload    reloadFlags

	tlsCert, tlsKey string
	insecureNoTLS   bool

	// awayTimeout: relay.Config.SuspendTimeout; 0, no wait.
	awayTimeout time.Duration
}

func serve(args []string) int {
	var f serveFlags
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.StringVar(&f.addr, "addr", "127.0.0.1:9222", "listen address; off loopback, tokens are required and TLS too unless --insecure-no-tls (docs/CONFIG.md)")
	fs.BoolVar(&f.launch, "launch", false, "start a dedicated Chromium with the cdprelay extension, connected to this relay")
	fs.BoolVar(&f.headful, "headful", false, "with --launch: show the browser window instead of running headless")
	fs.StringVar(&f.chrome, "chrome", "", "with --launch: the browser binary (default: $CHROME_PATH, then an installed Chromium, Chrome for Testing or Microsoft Edge)")
	fs.StringVar(&f.stateDir, "state-dir", defaultStateDir(), "where the default instance's guid and the minted instances are kept, so that extensions reconnect after a restart, and the browser the default instance last reported")
	fs.StringVar(&f.publicURL, "public-url", "", "this relay's base URL as the front door exposes it, path prefix included (https://relay.example.com/relay-1): every URL it hands out names it")
	fs.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&f.logFormat, "log-format", "text", "text or json")
	fs.Int64Var(&f.maxMsg, "max-message-bytes", 128<<20, "largest WebSocket message accepted from any peer")
	fs.IntVar(&f.maxTabs, "max-tabs", 1000, "most tabs one instance shares; a tab offered past it is not shared")
	fs.DurationVar(&f.awayTimeout, "away-timeout", time.Minute, "how long a client's page waits for its tab while Chrome has taken the debugger away (a browser page, the Web Store, another extension's page, the extension restarting or its worker stopped), and a client for the extension to come back; 0: no wait, the page closes at once")
	f.live.register(fs)
	f.reload.register(fs)
	fs.StringVar(&f.config, "config", "", "config file (YAML or JSON): policy, profiles, audit, tokens, hosts, origins, tls; reloaded when it changes, and on SIGHUP (docs/CONFIG.md)")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "PEM certificate (chain) to serve HTTPS and WSS with; overrides tls.cert; re-read when it changes")
	fs.StringVar(&f.tlsKey, "tls-key", "", "PEM private key of --tls-cert; overrides tls.key")
	fs.BoolVar(&f.insecureNoTLS, "insecure-no-tls", false, "allow a non-loopback --addr without TLS, for a TLS-terminating proxy on a trusted network")
	fs.StringVar(&f.policy.allowedDomains, "allowed-domains", "", "comma-separated hosts automation may navigate to (example.com, .example.com for subdomains too, *.example.com); empty: any")
	fs.StringVar(&f.policy.blockedDomains, "blocked-domains", "", "comma-separated hosts automation may never navigate to")
	fs.StringVar(&f.policy.denyMethods, "deny-methods", "", "comma-separated CDP method patterns to refuse, added to the defaults (e.g. 'Network.*Cookie*,DOM.setFileInputFiles')")
	fs.StringVar(&f.policy.blindDomains, "blind-domains", "", "comma-separated hosts automation may not see at all (tier blind): it may only navigate away from them")
	fs.StringVar(&f.policy.readOnlyDomains, "read-only-domains", "", "comma-separated hosts automation may read but not act on (tier read-only)")
	fs.StringVar(&f.policy.askDomains, "ask-domains", "", "comma-separated hosts automation navigates to only once a person approves in the live view")
	fs.StringVar(&f.policy.uploadsDir, "uploads-dir", "", "comma-separated folders automation may upload files from (default: uploads refused)")
	fs.StringVar(&f.policy.downloadDirs, "download-dirs", "", "comma-separated absolute folders on this machine a client's download folder must be in, where the relay copies the files of the automation's downloads (default: the OS temp dir)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "cdprelay serve: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	log, err := newLogger(f.logLevel, f.logFormat)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cdprelay:", err)
		return 2
	}
	if err := runServe(f, log); err != nil {
		log.Error("cdprelay stopped", "err", err)
		return 1
	}
	return 0
}

func newLogger(level, format string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(os.Stderr, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, opts)), nil
	}
	return nil, fmt.Errorf("--log-format must be text or json, not %q", format)
}

// appConfig is the assembly's config: the file with the flags' additions,
// and what the flags set themselves.
func (f serveFlags) appConfig(file *app.File, guid string, saved []relay.SavedInstance, log *slog.Logger) app.Config {
	return app.Config{
		File:          *file,
		Addr:          f.addr,
		PublicURL:     f.publicURL,
		TLSCert:       f.tlsCert,
		TLSKey:        f.tlsKey,
		InsecureNoTLS: f.insecureNoTLS,
		Launch:        f.launch,
		Logger:        log,
		Relay: relay.Config{
			MaxMessageBytes: f.maxMsg, MaxTabs: f.maxTabs, DefaultGUID: guid, Version: version,
			Restore: saved, Save: instanceSaver(f.stateDir),
			BrowserFile:    browserFile(f.stateDir),
			SuspendTimeout: awayTimeout(f.awayTimeout),
		},
		Screencast: f.live.screencast(),
	}
}

// awayTimeout is --away-timeout as the relay takes it: 0 there is its
// default, a negative wait none.
func awayTimeout(d time.Duration) time.Duration {
	if d <= 0 {
		return -1
	}
	return d
}

func runServe(f serveFlags, log *slog.Logger) error {
	if _, _, err := net.SplitHostPort(f.addr); err != nil {
		return fmt.Errorf("--addr %q: %w", f.addr, err)
	}
	file, err := loadConfig(f.config, f.policy)
	if err != nil {
		return err
	}
	guid, err := loadOrCreateGUID(f.stateDir)
	if err != nil {
		return err
	}
	saved, err := loadInstances(f.stateDir)
	if err != nil {
		return err
	}
	personKey, personKeyFile, err := loadOrCreatePersonKey(f.stateDir)
	if err != nil {
		return err
	}
	cfg := f.appConfig(file, guid, saved, log)
	cfg.PersonKey, cfg.PersonKeyFile = personKey, personKeyFile
	a, err := app.New(cfg)
	if err != nil {
		return err
	}
	srv := a.Relay()

	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		closeApp(a, log)
		return fmt.Errorf("listen: %w", err)
	}
	addr := localAddr(ln.Addr())
	hs := httpServer(a, a.TLSConfig())
	serveErr := make(chan error, 1)
	go func() { serveErr <- serveOn(hs, ln) }()

	def := srv.Default()
	pageScheme, wsScheme := a.Schemes()
	tokens := len(file.Tokens) > 0
	// What this machine reaches, and what is handed out: the public URL
	// when there is one.
	pageBase, wsBase := pageScheme+"://"+addr, wsScheme+"://"+addr
	if f.publicURL != "" {
		pageBase, wsBase = publicBases(f.publicURL)
	}
	extURL := wsBase + "/extension/" + def.GUID()
	log.Info("cdprelay listening", "version", version, "addr", addr, "public_url", f.publicURL, "instances_restored", len(saved),
		"connect_playwright_extension", relay.StockConnectURL(extURL, "cdprelay"), "connect_cdprelay_extension", ourConnectURL(extURL))
	printLiveView(os.Stderr, a, pageBase, tokens, personKeyFile)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var browser *chromium.Browser
	var browserDone <-chan struct{}
	if f.launch {
		// The launched browser is this machine's: it pairs over the
		// listener, not through a front door.
		localExt := wsScheme + "://" + addr + "/extension/" + def.GUID()
		browser, err = launchBrowser(ctx, f, withToken(localExt, a.LaunchToken()), browserArgs(a), log)
		if err != nil {
			shutdown(a, hs, nil, log)
			return err
		}
		browserDone = browser.Done()
		go announceReady(ctx, def, pageBase, tokens, log)
	} else {
		fmt.Fprintf(os.Stderr, `
cdprelay is waiting for the extension.
  1. Load the cdprelay extension in Chrome (chrome://extensions, Developer mode, "Load unpacked": the release's cdprelay-extension.zip unzipped, or extension/ in the source).
  2. Open %s
     (or paste %s into the extension's page) and pick the tabs to share.
With the Playwright extension from the Chrome Web Store instead, open
  %s
CDP endpoint for clients: %s%s
`, ourConnectURL(extURL), extURL+tokenHint(tokens, "?token=", "extension"), relay.StockConnectURL(extURL, "cdprelay"), pageBase, tokenHint(tokens, " with Authorization: Bearer ", "cdp"))
	}

	reloads := startReloader(ctx, f, file, log) // SIGHUP on Unix, and changes to the files (reload.go)
	defer reloads.stop()
	var runErr error
wait:
	for {
		select {
		case <-ctx.Done():
			log.Info("shutting down")
			break wait
		case <-reloads.C:
			if file := reload(f, a, log); file != nil {
				reloads.loaded(f, file)
			}
		case err := <-serveErr:
			runErr = fmt.Errorf("http server: %w", err)
			break wait
		case <-browserDone:
			runErr = fmt.Errorf("the launched browser exited: %v", browser.Err())
			break wait
		}
	}
	shutdown(a, hs, browser, log)
	return runErr
}

// reload re-reads the config (reload.go says when) and returns it once in
// force. A bad file keeps everything in force and says why (the App logs
// and audits either outcome).
func reload(f serveFlags, a *app.App, log *slog.Logger) *app.File {
	file, err := loadConfig(f.config, f.policy)
	if err != nil {
		a.ReloadFailed(err)
		return nil
	}
	if a.Reload(f.appConfig(file, "", nil, log)) != nil {
		return nil
	}
	return file
}

// shutdown closes the product's connections, then the HTTP server and the
// launched browser.
func shutdown(a *app.App, hs *http.Server, browser *chromium.Browser, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := a.Close(ctx); err != nil {
		log.Warn("shutting down", "err", err)
	}
	_ = hs.Shutdown(ctx)
	if browser != nil {
		_ = browser.Stop(3 * time.Second)
		log.Info("browser stopped")
	}
}

func closeApp(a *app.App, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := a.Close(ctx); err != nil {
		log.Warn("shutting down", "err", err)
	}
}

func launchBrowser(ctx context.Context, f serveFlags, extURL string, args []string, log *slog.Logger) (*chromium.Browser, error) {
	path, err := chromium.Find(f.chrome)
	if errors.Is(err, chromium.ErrNotFound) {
		// Where it looked and what to install, as lines a person reads.
		fmt.Fprintf(os.Stderr, "\n%v\n\n", err)
		return nil, errors.New("--launch: no browser to launch (above: where cdprelay looked, and what to install)")
	}
	if err != nil {
		return nil, err
	}
	if chromium.IsGoogleChrome(path) {
		log.Warn("Google Chrome ignores --load-extension (since 137): the extension will not load; use Chromium, Chrome for Testing or Edge", "path", path)
	}
	extDir, err := os.MkdirTemp("", "cdprelay-extension-")
	if err != nil {
		return nil, err
	}
	if err := extension.WriteDir(extDir, &extension.Config{Relay: extURL, Share: "all"}); err != nil {
		return nil, fmt.Errorf("write extension: %w", err)
	}
	b, err := chromium.Launch(ctx, chromium.Options{
		Path:         path,
		Headful:      f.headful,
		ExtensionDir: extDir,
		// The relay's own browser has no person to warn: hide the
		// debugging bar, which would otherwise shrink every page.
		Args:   append([]string{"--silent-debugger-extension-api"}, args...),
		Logger: log,
		Output: browserLog{log},
	})
	if err != nil {
		os.RemoveAll(extDir)
		return nil, err
	}
	go func() { <-b.Done(); os.RemoveAll(extDir) }()
	return b, nil
}

// browserLog passes the browser's own output to the debug log.
type browserLog struct{ log *slog.Logger }

func (w browserLog) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		if line != "" {
			w.log.Debug("browser", "line", line)
		}
	}
	return len(p), nil
}

func announceReady(ctx context.Context, in *relay.Instance, base string, tokens bool, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := in.WaitReady(ctx); err != nil {
		log.Error("the launched browser's extension did not connect", "err", err)
		return
	}
	opts := ""
	if tokens {
		opts = ", { headers: { Authorization: 'Bearer ' + token } }"
	}
	pw := fmt.Sprintf("chromium.connectOverCDP('%s'%s)", base, opts)
	log.Info("ready", "cdp", base, "playwright", pw)
	fmt.Fprintf(os.Stderr, "\ncdprelay is ready.\n  CDP endpoint: %s\n  Playwright:   const browser = await %s;\n  Live view:    %s/ (the person's link is printed above)\n\n", base, pw, base)
}

// browserFile is where the default instance remembers its browser, so
// that /json/version names it before the extension has connected again.
func browserFile(stateDir string) string {
	if stateDir == "" {
		return ""
	}
	return filepath.Join(stateDir, "browser.json")
}

// publicBases are the page and socket bases under a public URL (which
// app.New has validated).
func publicBases(public string) (page, socket string) {
	u, err := relay.ParsePublicURL(public)
	if err != nil {
		return public, public
	}
	page = u.Scheme + "://" + u.Host + u.Path
	if u.Scheme == "https" {
		return page, "wss://" + u.Host + u.Path
	}
	return page, "ws://" + u.Host + u.Path
}

// printLiveView prints the live view's address and, once, the person's
// link, on the terminal and never in the log: the link carries the person
// key in its fragment, which the page takes out of the address bar and
// keeps. With tokens (a relay run for others, whose output a service
// manager keeps), the key is not printed: where it is kept is.
func printLiveView(w io.Writer, a *app.App, pageBase string, tokens bool, keyFile string) {
	fmt.Fprintf(w, "Live view: %s/%s\n", pageBase, tokenHint(tokens, "?token=", "viewer"))
	switch {
	case !tokens:
		where := "a key made for this run"
		if keyFile != "" {
			where = "the key in " + keyFile
		}
		fmt.Fprintf(w, "The person's link: whoever opens it may stop the automation, approve, answer dialogs and take over (it carries %s; keep it to yourself):\n  %s\n", where, a.PersonLink(pageBase))
	case keyFile != "":
		fmt.Fprintf(w, "The person key, which acts as the person in the live view (%s/#person=<the key>), is in %s\n", pageBase, keyFile)
	}
}
