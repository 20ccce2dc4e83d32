package chromium

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Options describe one browser process.
type Options struct {
	Path string // the binary; required

	// Headful shows a window; the default is --headless=new.
	Headful bool

	// ExtensionDir is an unpacked extension to load, and the only one
	// besides MoreExtensions. The profile is put in developer mode, the
	// mode an unpacked extension is loaded in: without it, Chrome disables
	// the extension for good when it reloads itself (an update,
	// chrome.runtime.reload).
	ExtensionDir string

	// MoreExtensions are further unpacked extensions to load (a test's
	// stand-ins for the person's own extensions).
	MoreExtensions []string

	// UserDataDir is the profile directory. Empty: a fresh temporary
	// directory, removed when the browser stops.
	UserDataDir string

	// Args are appended after the standard flags (before URLs).
	Args []string

	// DownloadDir is where the profile saves downloads, without asking.
	// Empty: the browser's own default (~/Downloads).
	DownloadDir string

	// URLs are opened at start. Empty: about:blank.
	URLs []string

	// Output receives the browser's stdout and stderr. Nil: discarded.
	Output io.Writer

	Logger *slog.Logger
}

// Flags returns the command-line flags for opts, without URLs.
func Flags(opts Options, userDataDir string) []string {
	args := []string{
		"--no-sandbox",
		"--disable-gpu",
		"--disable-quic",
		"--no-first-run",
		"--no-default-browser-check",
		"--disable-background-networking",
		"--disable-component-update",
		"--disable-sync",
		"--disable-dev-shm-usage",
		"--disable-features=Translate,MediaRouter,OptimizationHints",
		"--user-data-dir=" + userDataDir,
	}
	if !opts.Headful {
		args = append([]string{"--headless=new"}, args...)
	}
	if opts.ExtensionDir != "" {
		dirs := strings.Join(append([]string{opts.ExtensionDir}, opts.MoreExtensions...), ",")
		args = append(args,
			"--load-extension="+dirs,
			"--disable-extensions-except="+dirs,
		)
	}
	return append(args, opts.Args...)
}

// Browser is a running browser process.
type Browser struct {
	cmd       *exec.Cmd
	tree      tree // the browser's process tree; static after Launch
	dir       string
	removeDir bool
	log       *slog.Logger
	done      chan struct{} // closed when the process has exited
	waitErr   error         // set before done closes
	stopOnce  sync.Once
}

// Launch starts the browser. Its whole process tree is stopped by Stop,
// and by the system if this process dies first (a process group on Unix,
// a job object on Windows: see tree).
func Launch(ctx context.Context, opts Options) (*Browser, error) {
	if opts.Path == "" {
		return nil, errors.New("chromium: no binary path")
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	b := &Browser{dir: opts.UserDataDir, log: log, done: make(chan struct{})}
	if b.dir == "" {
		d, err := os.MkdirTemp("", "cdprelay-chromium-")
		if err != nil {
			return nil, fmt.Errorf("chromium profile: %w", err)
		}
		b.dir, b.removeDir = d, true
	}
	if err := writePrefs(b.dir, opts); err != nil {
		b.cleanup()
		return nil, fmt.Errorf("chromium profile: %w", err)
	}
	urls := opts.URLs
	if len(urls) == 0 {
		urls = []string{"about:blank"}
	}
	args := append(Flags(opts, b.dir), urls...)
	cmd := exec.CommandContext(ctx, opts.Path, args...)
	t, err := newTree(cmd, log)
	if err != nil {
		b.cleanup()
		return nil, err
	}
	b.tree = t
	cmd.Cancel = t.kill
	out := opts.Output
	if out == nil {
		out = io.Discard
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.release()
		b.cleanup()
		return nil, fmt.Errorf("start %s: %w", opts.Path, err)
	}
	if err := t.started(cmd.Process); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.release()
		b.cleanup()
		return nil, fmt.Errorf("start %s: %w", opts.Path, err)
	}
	b.cmd = cmd
	go func() {
		b.waitErr = cmd.Wait()
		close(b.done)
	}()
	log.Info("browser started", "path", opts.Path, "pid", cmd.Process.Pid, "headless", !opts.Headful)
	return b, nil
}

// PID is the browser's process id.
func (b *Browser) PID() int { return b.cmd.Process.Pid }

// UserDataDir is the profile directory in use.
func (b *Browser) UserDataDir() string { return b.dir }

// Done is closed when the browser process exits.
func (b *Browser) Done() <-chan struct{} { return b.done }

// Err is the process's exit error, once Done is closed.
func (b *Browser) Err() error {
	<-b.done
	return b.waitErr
}

// Stop asks the browser to exit, kills it after grace, and removes a
// temporary profile. It is safe to call more than once, and from several
// goroutines: the first call does the work, the others wait for it.
func (b *Browser) Stop(grace time.Duration) error {
	b.stopOnce.Do(func() {
		_ = b.tree.terminate()
		select {
		case <-b.done:
		case <-time.After(grace):
			_ = b.tree.kill()
			<-b.done
		}
		// Children that outlived the browser process itself.
		_ = b.tree.kill()
		b.tree.release()
		b.cleanup()
	})
	return nil
}

func (b *Browser) cleanup() {
	if b.removeDir && b.dir != "" && strings.Contains(filepath.Base(b.dir), "cdprelay-chromium-") {
		_ = os.RemoveAll(b.dir)
	}
}

// Version runs the binary with --version and returns what it prints.
func Version(ctx context.Context, path string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", path, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// writePrefs sets what the profile's preferences must say before Chrome
// starts (it has no flags for them), keeping whatever else they say:
// where downloads go, without asking, and developer mode for an unpacked
// extension.
func writePrefs(profile string, opts Options) error {
	if opts.DownloadDir == "" && opts.ExtensionDir == "" {
		return nil
	}
	path := filepath.Join(profile, "Default", "Preferences")
	prefs := map[string]any{}
	if b, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(b, &prefs); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if opts.DownloadDir != "" {
		prefs["download"] = map[string]any{"default_directory": opts.DownloadDir, "prompt_for_download": false}
	}
	if opts.ExtensionDir != "" {
		ext, _ := prefs["extensions"].(map[string]any)
		if ext == nil {
			ext = map[string]any{}
		}
		ui, _ := ext["ui"].(map[string]any)
		if ui == nil {
			ui = map[string]any{}
		}
		ui["developer_mode"] = true
		ext["ui"] = ui
		prefs["extensions"] = ext
	}
	b, err := json.Marshal(prefs)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}
