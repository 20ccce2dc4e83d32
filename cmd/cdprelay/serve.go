package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/cdprelay/cdprelay/denylist"
	"github.com/cdprelay/cdprelay/extension"
	"github.com/cdprelay/cdprelay/internal/chromium"
	"github.com/cdprelay/cdprelay/internal/relaypolicy"
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
	config    string
	policy    policyFlags
}

func serve(args []string) int {
	var f serveFlags
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.StringVar(&f.addr, "addr", "127.0.0.1:9222", "listen address (loopback only)")
	fs.BoolVar(&f.launch, "launch", false, "start a dedicated Chromium with the cdprelay extension, connected to this relay")
	fs.BoolVar(&f.headful, "headful", false, "with --launch: show the browser window instead of running headless")
	fs.StringVar(&f.chrome, "chrome", "", "with --launch: the Chromium binary (default: $CHROME_PATH, then Debian's chromium)")
	fs.StringVar(&f.stateDir, "state-dir", defaultStateDir(), "where the default instance's guid is kept, so that a configured extension reconnects after a restart")
	fs.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&f.logFormat, "log-format", "text", "text or json")
	fs.Int64Var(&f.maxMsg, "max-message-bytes", 128<<20, "largest WebSocket message accepted from any peer")
	fs.StringVar(&f.config, "config", "", "config file (YAML or JSON): policy, profiles, audit; reloaded on SIGHUP")
	fs.StringVar(&f.policy.allowedDomains, "allowed-domains", "", "comma-separated hosts automation may navigate to (example.com, .example.com for subdomains too, *.example.com); empty: any")
	fs.StringVar(&f.policy.blockedDomains, "blocked-domains", "", "comma-separated hosts automation may never navigate to")
	fs.StringVar(&f.policy.denyMethods, "deny-methods", "", "comma-separated CDP method patterns to refuse, added to the defaults (e.g. 'Network.*Cookie*,DOM.setFileInputFiles')")
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

func runServe(f serveFlags, log *slog.Logger) error {
	host, _, err := net.SplitHostPort(f.addr)
	if err != nil {
		return fmt.Errorf("--addr %q: %w", f.addr, err)
	}
	if !isLoopback(host) {
		// A CDP endpoint is full control of a logged-in browser. Until the
		// relay checks tokens it serves loopback only.
		return fmt.Errorf("--addr %s is not a loopback address; cdprelay serves 127.0.0.1 or [::1] only", f.addr)
	}
	cfg, err := loadConfig(f.config, f.policy)
	if err != nil {
		return err
	}
	pol, err := cfg.compilePolicy()
	if err != nil {
		return err
	}
	guid, err := loadOrCreateGUID(f.stateDir)
	if err != nil {
		return err
	}
	srv, err := relay.New(relay.Config{
		Logger:          log,
		MaxMessageBytes: f.maxMsg,
		DefaultGUID:     guid,
		Version:         version,
		Policy:          relaypolicy.Adapter{P: pol},
	})
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	addr := ln.Addr().String()
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	serveErr := make(chan error, 1)
	go func() { serveErr <- hs.Serve(ln) }()

	def := srv.Default()
	extURL := "ws://" + addr + "/extension/" + def.GUID()
	log.Info("cdprelay listening", "version", version, "addr", addr)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var browser *chromium.Browser
	var browserDone <-chan struct{}
	if f.launch {
		browser, err = launchBrowser(ctx, f, extURL, log)
		if err != nil {
			shutdown(srv, hs, nil, log)
			return err
		}
		browserDone = browser.Done()
		go announceReady(ctx, def, addr, log)
	} else {
		fmt.Fprintf(os.Stderr, `
cdprelay is waiting for the extension.
  1. Load the cdprelay extension in Chrome (chrome://extensions, Developer mode, "Load unpacked": the extension/ folder).
  2. Open chrome-extension://%s/connect.html?relay=%s
     (or paste %s into the extension's page) and pick the tabs to share.
CDP endpoint for clients: http://%s
`, extension.ID, extURL, extURL, addr)
	}

	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	var runErr error
wait:
	for {
		select {
		case <-ctx.Done():
			log.Info("shutting down")
			break wait
		case <-hup:
			reload(f, srv, log)
		case err := <-serveErr:
			runErr = fmt.Errorf("http server: %w", err)
			break wait
		case <-browserDone:
			runErr = fmt.Errorf("the launched browser exited: %v", browser.Err())
			break wait
		}
	}
	shutdown(srv, hs, browser, log)
	return runErr
}

func shutdown(srv *relay.Server, hs *http.Server, browser *chromium.Browser, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Close(ctx); err != nil {
		log.Warn("closing connections", "err", err)
	}
	_ = hs.Shutdown(ctx)
	if browser != nil {
		_ = browser.Stop(3 * time.Second)
		log.Info("browser stopped")
	}
}

func launchBrowser(ctx context.Context, f serveFlags, extURL string, log *slog.Logger) (*chromium.Browser, error) {
	path, err := chromium.Find(f.chrome)
	if err != nil {
		return nil, err
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
		Args:   []string{"--silent-debugger-extension-api"},
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

func announceReady(ctx context.Context, in *relay.Instance, addr string, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := in.WaitReady(ctx); err != nil {
		log.Error("the launched browser's extension did not connect", "err", err)
		return
	}
	log.Info("ready", "cdp", "http://"+addr, "playwright", fmt.Sprintf("chromium.connectOverCDP('http://%s')", addr))
	fmt.Fprintf(os.Stderr, "\ncdprelay is ready.\n  CDP endpoint: http://%s\n  Playwright:   const browser = await chromium.connectOverCDP('http://%s');\n\n", addr, addr)
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func defaultStateDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "cdprelay")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".local", "state", "cdprelay")
	}
	return ""
}

// reload re-reads the config on SIGHUP. A bad file keeps the policy in
// force and says why; no connection is dropped either way.
func reload(f serveFlags, srv *relay.Server, log *slog.Logger) {
	cfg, err := loadConfig(f.config, f.policy)
	var pol *denylist.Policy
	if err == nil {
		pol, err = cfg.compilePolicy()
	}
	if err != nil {
		log.Error("config reload failed; keeping the policy in force", "err", err)
		srv.Observe(relay.Event{Actor: relay.ActorOperator, Kind: relay.KindPolicy, Outcome: relay.OutcomeError, Detail: err.Error()})
		return
	}
	srv.SetPolicy(relaypolicy.Adapter{P: pol})
	log.Info("config reloaded")
	srv.Observe(relay.Event{Actor: relay.ActorOperator, Kind: relay.KindPolicy, Outcome: relay.OutcomeOK})
}
