// Package testenv runs the real thing for end-to-end tests and benchmarks:
// a relay on a loopback socket, a headless Chromium with the cdprelay
// extension connected to it, and local web pages on two origins.
package testenv

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
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

	hs     *http.Server
	extDir string
	log    *slog.Logger
}

// HTTPEndpoint is what Playwright's connectOverCDP takes.
func (e *Env) HTTPEndpoint() string { return "http://" + e.Addr }

// WSEndpoint is the browser WebSocket URL of the default instance.
func (e *Env) WSEndpoint() string {
	return "ws://" + e.Addr + "/devtools/browser/" + e.Relay.Default().GUID()
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
}

// Start runs a relay and a browser. Call Close when done.
func Start(ctx context.Context, opts Options) (_ *Env, err error) {
	if opts.Share == "" {
		opts.Share = "all"
	}
	if opts.Wait == 0 {
		opts.Wait = 45 * time.Second
	}
	e := &Env{}
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
	cfg := opts.Relay
	cfg.Logger = log
	if e.Relay, err = relay.New(cfg); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	e.Addr = ln.Addr().String()
	e.hs = &http.Server{Handler: e.Relay, ReadHeaderTimeout: 10 * time.Second}
	go e.hs.Serve(ln)

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
	extURL := "ws://" + e.Addr + "/extension/" + e.Relay.Default().GUID()
	if err := extension.WriteDir(e.extDir, &extension.Config{Relay: extURL, Share: opts.Share}); err != nil {
		return nil, err
	}
	e.Browser, err = chromium.Launch(context.Background(), chromium.Options{
		Path:         path,
		ExtensionDir: e.extDir,
		Args:         []string{"--silent-debugger-extension-api"},
		Output:       out,
		Logger:       log,
	})
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithTimeout(ctx, opts.Wait)
	defer cancel()
	if err := e.Relay.Default().WaitReady(wctx); err != nil {
		return nil, fmt.Errorf("the browser's extension did not connect (log: %s): %w", e.LogPath, err)
	}
	return e, nil
}

// RestartRelay stops the relay, as a crash or an upgrade would, and starts
// a new one on the same address with the same default guid; the browser
// and its extension stay. It returns once the extension has reconnected.
func (e *Env) RestartRelay(ctx context.Context, cfg relay.Config) error {
	guid := e.Relay.Default().GUID()
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	e.Relay.Close(cctx)
	cancel()
	e.hs.Close()
	cfg.Logger = e.log
	cfg.DefaultGUID = guid
	srv, err := relay.New(cfg)
	if err != nil {
		return err
	}
	e.Relay = srv
	ln, err := net.Listen("tcp", e.Addr)
	if err != nil {
		return fmt.Errorf("listen again on %s: %w", e.Addr, err)
	}
	e.hs = &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	go e.hs.Serve(ln)
	return srv.Default().WaitReady(ctx)
}

// Close stops the browser and the relay.
func (e *Env) Close() {
	if e.Browser != nil {
		e.Browser.Stop(3 * time.Second)
	}
	if e.Relay != nil {
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
