package testenv

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cdprelay/cdprelay/extension"
	"github.com/cdprelay/cdprelay/internal/chromium"
)

// Browser is a headless Chromium with our extension pointed at a relay
// of the test's own: a person's browser, for tests that run their relays
// (or a fleet) themselves.
type Browser struct {
	*chromium.Browser
	// WS is the browser's own CDP endpoint (its debugging port): the
	// test's way to act as the person, never the relay's.
	WS     string
	extDir string
}

// BrowserOptions tune StartBrowser.
type BrowserOptions struct {
	Share  string    // "all" (default) or "pick"
	Output io.Writer // the browser's output; default: discarded
}

// StartBrowser launches a browser whose extension connects to extURL
// (ws:// or wss://…/extension/<guid>, with ?token= when the relay wants
// one). It returns once the browser's own debugging port answers; the
// extension connects on its own time. Call Close when done.
func StartBrowser(ctx context.Context, extURL string, opts BrowserOptions) (_ *Browser, err error) {
	if opts.Share == "" {
		opts.Share = "all"
	}
	path, err := chromium.Find("")
	if err != nil {
		return nil, err
	}
	b := &Browser{}
	defer func() {
		if err != nil {
			b.Close()
		}
	}()
	if b.extDir, err = os.MkdirTemp("", "cdprelay-e2e-ext-"); err != nil {
		return nil, err
	}
	if err := extension.WriteDir(b.extDir, &extension.Config{Relay: extURL, Share: opts.Share}); err != nil {
		return nil, err
	}
	if b.Browser, err = chromium.Launch(context.Background(), chromium.Options{
		Path:         path,
		ExtensionDir: b.extDir,
		Args:         []string{"--silent-debugger-extension-api", "--remote-debugging-port=0"},
		Output:       opts.Output,
	}); err != nil {
		return nil, err
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if b.WS, err = debuggerURL(wctx, b.Browser.UserDataDir()); err != nil {
		return nil, err
	}
	return b, nil
}

// Close stops the browser and removes what StartBrowser made.
func (b *Browser) Close() {
	if b.Browser != nil {
		b.Browser.Stop(3 * time.Second)
	}
	if b.extDir != "" {
		os.RemoveAll(b.extDir)
	}
}

// RepoDir is the repository's root.
func RepoDir() string { return filepath.Join(E2EDir(), "..") }

// BuildRelay builds cmd/cdprelay into dir and returns the binary's path,
// for tests that run the relay as its own process.
func BuildRelay(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "cdprelay")
	out, err := runIn(ctx, RepoDir(), "go", "build", "-o", bin, "./cmd/cdprelay")
	if err != nil {
		return "", fmt.Errorf("go build: %v: %s", err, out)
	}
	return bin, nil
}

func runIn(ctx context.Context, dir, name string, args ...string) (string, error) {
	cmd := execCommand(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}
