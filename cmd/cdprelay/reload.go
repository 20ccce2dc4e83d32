package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"time"

	"github.com/cdprelay/cdprelay/internal/app"
)

// How a running relay learns that its config changed, on every platform:
// it watches the files it read (--config, and the TLS certificate and key
// it serves) and re-reads them once a change has settled. On Unix, SIGHUP
// re-reads them at once too, as it always has.
//
// Watching, not an endpoint: a reload asked over HTTP would be one more
// way in, reachable from loopback by anything on the machine, the pages
// of the shared browser included; the file is the operator's already, and
// whoever can write it could as well restart the relay with other flags.
// A reload changes nothing a CDP client can reach, and a client cannot
// write files (downloads go where the person's browser saves them).

// watchInterval is how often the watched files are read. A change is
// applied after it has been seen the same on two reads running, so that
// a file caught half-written (an editor that truncates, then writes) is
// not taken for the new config: within one to two intervals.
const watchInterval = time.Second

type reloadFlags struct {
	watch bool
}

func (r *reloadFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&r.watch, "watch-config", true, "re-read --config, and the TLS certificate and key, when they change (checked every second); on Unix SIGHUP re-reads them too")
}

// reloader tells serve when to re-read the config.
type reloader struct {
	C     <-chan struct{} // a reload is due; never closed
	watch *fileWatch      // nil when nothing is watched
	stop  func()
}

// startReloader starts what tells serve to reload: SIGHUP where there is
// one, and a watch on the files file and f name, unless --watch-config
// is off. stop ends both.
func startReloader(ctx context.Context, f serveFlags, file *app.File, log *slog.Logger) *reloader {
	c := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	r := &reloader{C: c}
	if sigs := reloadSignals(); len(sigs) > 0 {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, sigs...)
		wg.Go(func() {
			defer signal.Stop(sig)
			for {
				select {
				case <-ctx.Done():
					return
				case <-sig:
					wake(c)
				}
			}
		})
	}
	if paths := watchedFiles(f, file); f.reload.watch && len(paths) > 0 {
		r.watch = newFileWatch(paths, started)
		ticker := time.NewTicker(watchInterval)
		wg.Go(func() {
			defer ticker.Stop()
			r.watch.run(ctx, ticker.C, func() {
				log.Info("config changed; reloading")
				wake(c)
			})
		})
	}
	r.stop = func() { cancel(); wg.Wait() }
	return r
}

// loaded says that file is the config now in force, whose TLS files may
// be others than the last one's.
func (r *reloader) loaded(f serveFlags, file *app.File) {
	if r.watch != nil {
		r.watch.setPaths(watchedFiles(f, file))
	}
}

func wake(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default: // one is due already
	}
}

// watchedFiles are the files a reload reads: the config, and the TLS
// certificate and key in force (the flags', else the file's).
func watchedFiles(f serveFlags, file *app.File) []string {
	cert, key := f.tlsCert, f.tlsKey
	if cert == "" && key == "" && file != nil {
		cert, key = file.TLS.Cert, file.TLS.Key
	}
	var out []string
	for _, p := range []string{f.config, cert, key} {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// fileWatch reads a few small files and says when what they hold, or
// their times, changed and has stayed so for a read.
type fileWatch struct {
	mu    sync.Mutex
	paths []string // guarded by mu
	base  string   // guarded by mu: the fingerprint of what was last loaded

	pending string // owned by run: a change seen once, not yet settled
}

// started is about when serve read the config first.
var started = time.Now()

// newFileWatch watches paths, last loaded at loaded: a file written since
// (while the relay was starting) is a change, reloaded at the first reads.
func newFileWatch(paths []string, loaded time.Time) *fileWatch {
	w := &fileWatch{paths: paths, base: fingerprint(paths)}
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil && st.ModTime().After(loaded) {
			w.base = ""
		}
	}
	return w
}

func (w *fileWatch) setPaths(paths []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.paths, w.base = paths, fingerprint(paths)
}

// run reads the files at each tick and calls changed once per settled
// change, until ctx ends.
func (w *fileWatch) run(ctx context.Context, tick <-chan time.Time, changed func()) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
		}
		if w.poll() {
			changed()
		}
	}
}

// poll reads the files once; true when a change is settled.
func (w *fileWatch) poll() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	fp := fingerprint(w.paths)
	switch {
	case fp == w.base:
		w.pending = ""
	case fp != w.pending:
		w.pending = fp // changed since the last read: wait for it to settle
	default:
		// The same change on two reads running. A file that does not
		// load is not read again until it changes again.
		w.base, w.pending = fp, ""
		return true
	}
	return false
}

// fingerprint sums what paths hold and when they were written (so that
// touching a file reloads it), or why they cannot be read.
func fingerprint(paths []string) string {
	h := sha256.New()
	for _, p := range paths {
		fmt.Fprintf(h, "%q\n", p)
		st, err := os.Stat(p)
		if err == nil {
			fmt.Fprintf(h, "%d %d\n", st.Size(), st.ModTime().UnixNano())
			var b []byte
			if b, err = readShared(p); err == nil {
				h.Write(b)
				continue
			}
		}
		if errors.Is(err, fs.ErrNotExist) {
			fmt.Fprint(h, "missing\n")
		} else {
			fmt.Fprintf(h, "unreadable %v\n", err)
		}
	}
	return string(h.Sum(nil))
}
