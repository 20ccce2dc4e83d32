//go:build unix

package chromium

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
)

// reaperScript runs beside the browser, in a process group of its own,
// deaf to the terminal's signals, reading the pipe only this process
// writes to. "stop" is Stop's word that the group is gone already. End of
// file without it means this process died, by any signal, SIGKILL
// included: the kernel closed its end of the pipe, and the reaper kills
// the browser's group. Linux's parent-death signal alone would end the
// browser's main process but not the children it started; macOS has none.
const reaperScript = `trap '' HUP INT QUIT TERM
read -r word
[ "$word" = stop ] || kill -s KILL -- "-$1"`

// groupTree is a process group: the browser leads it, and a negative pid
// reaches every process in it.
type groupTree struct {
	log *slog.Logger // static

	mu       sync.Mutex
	pgid     int       // guarded by mu; the browser's pid, set by started
	reaper   *exec.Cmd // guarded by mu; nil when none runs
	reaperIn *os.File  // guarded by mu; the pipe's write end
}

func newTree(cmd *exec.Cmd, log *slog.Logger) (tree, error) {
	attr := &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(attr)
	cmd.SysProcAttr = attr
	return &groupTree{log: log}, nil
}

func (t *groupTree) started(p *os.Process) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pgid = p.Pid
	if err := t.startReaperLocked(); err != nil {
		// The browser still runs and Stop still ends it; only a relay
		// killed outright would leave it behind.
		t.log.Warn("the browser may outlive this process if it is killed", "err", err)
	}
	return nil
}

func (t *groupTree) startReaperLocked() error {
	r, w, err := os.Pipe() // close-on-exec: no other child inherits the write end
	if err != nil {
		return fmt.Errorf("reaper pipe: %w", err)
	}
	defer r.Close()
	cmd := exec.Command("/bin/sh", "-c", reaperScript, "cdprelay-reaper", strconv.Itoa(t.pgid))
	cmd.Stdin = r
	// Its own group: a signal to this process's group (a terminal's
	// Ctrl-C, a kill of the whole group) does not take it along.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return fmt.Errorf("start reaper: %w", err)
	}
	t.reaper, t.reaperIn = cmd, w
	return nil
}

func (t *groupTree) signal(sig syscall.Signal) error {
	t.mu.Lock()
	pgid := t.pgid
	t.mu.Unlock()
	if pgid <= 0 {
		return nil
	}
	err := syscall.Kill(-pgid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

func (t *groupTree) terminate() error { return t.signal(syscall.SIGTERM) }

func (t *groupTree) kill() error { return t.signal(syscall.SIGKILL) }

func (t *groupTree) release() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.reaper == nil {
		return
	}
	_, _ = t.reaperIn.Write([]byte("stop\n"))
	t.reaperIn.Close()
	_ = t.reaper.Wait()
	t.reaper = nil
}
