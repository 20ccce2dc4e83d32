package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cdprelay/cdprelay/extension"
	"github.com/cdprelay/cdprelay/internal/chromium"
	"github.com/cdprelay/cdprelay/internal/cputime"
)

// launchBrowser starts one headless Chromium with the cdprelay extension
// pointed at extURL and with its own debugging port, and returns the
// browser-level DevTools WebSocket URL of that port.
func launchBrowser(ctx context.Context, path, extDir, extURL string, out io.Writer) (*chromium.Browser, string, error) {
	if err := extension.WriteDir(extDir, &extension.Config{Relay: extURL, Share: "all"}); err != nil {
		return nil, "", err
	}
	b, err := chromium.Launch(context.Background(), chromium.Options{
		Path:         path,
		ExtensionDir: extDir,
		// Port 0 lets Chromium pick a free port and write it to
		// DevToolsActivePort, so parallel runs never collide.
		Args:   []string{"--silent-debugger-extension-api", "--remote-debugging-port=0"},
		Output: out,
	})
	if err != nil {
		return nil, "", err
	}
	file := filepath.Join(b.UserDataDir(), "DevToolsActivePort")
	for {
		// The file is written in one go, but it may be seen before both
		// lines are there.
		data, err := os.ReadFile(file)
		if err == nil {
			port, path, ok := strings.Cut(strings.TrimSpace(string(data)), "\n")
			if ok && strings.HasPrefix(path, "/devtools/browser/") {
				return b, "ws://127.0.0.1:" + strings.TrimSpace(port) + strings.TrimSpace(path), nil
			}
		}
		select {
		case <-ctx.Done():
			b.Stop(3 * time.Second)
			return nil, "", fmt.Errorf("waiting for %s: %w", file, ctx.Err())
		case <-b.Done():
			return nil, "", fmt.Errorf("chromium exited before opening its debugging port: %v", b.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Chromium's processes, by the part they play on the three paths.
const (
	procBrowser   = "browser"   // routes CDP and extension API calls, serves the debugging port
	procExtension = "extension" // the extension's service worker: our JS
	procTab       = "tab"       // the shared tab's renderer, which evaluates and paints
	procNetwork   = "network"   // the network service: the extension's WebSocket
	procGPU       = "gpu"       // compositing for screenshots (software here)
	procOther     = "other"
)

var procKinds = []string{procBrowser, procExtension, procTab, procNetwork, procGPU, procOther}

// cpuSnapshot is CPU time consumed so far, by process kind, plus this
// process's own (the Go client, peer and relay).
type cpuSnapshot struct {
	chrome map[string]time.Duration
	self   time.Duration
}

// clockTick is USER_HZ, the unit of /proc/<pid>/stat times. It is 100 on
// every Linux ABI Go supports; reading it needs sysconf, that is cgo.
const clockTick = 10 * time.Millisecond

// takeCPU reads the CPU time of every process in Chromium's process group
// (the launcher makes the browser a group leader, and its children stay in
// the group) and of this process.
func takeCPU(pgid int) cpuSnapshot {
	s := cpuSnapshot{chrome: map[string]time.Duration{}}
	s.self = cputime.Process()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return s
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// The command name may hold spaces and parentheses: the fields
		// that follow it start after the last ')'.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		// f[0] is field 3 (state): pgrp is field 5, utime 14, stime 15.
		if len(f) < 13 {
			continue
		}
		if g, _ := strconv.Atoi(f[2]); g != pgid {
			continue
		}
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		s.chrome[processKind(string(cmdline))] += time.Duration(ut+st) * clockTick
	}
	return s
}

func processKind(cmdline string) string {
	switch {
	case !strings.Contains(cmdline, "--type="):
		return procBrowser
	case strings.Contains(cmdline, "--type=renderer") && strings.Contains(cmdline, "--extension-process"):
		return procExtension
	case strings.Contains(cmdline, "--type=renderer") && !strings.Contains(cmdline, "--top-chrome-webui"):
		return procTab
	case strings.Contains(cmdline, "network.mojom.NetworkService"):
		return procNetwork
	case strings.Contains(cmdline, "--type=gpu-process"):
		return procGPU
	}
	return procOther
}

// sub returns the CPU time spent between earlier and s.
func (s cpuSnapshot) sub(earlier cpuSnapshot) cpuSnapshot {
	d := cpuSnapshot{chrome: map[string]time.Duration{}, self: s.self - earlier.self}
	for k, v := range s.chrome {
		d.chrome[k] = v - earlier.chrome[k]
	}
	return d
}

func (s *cpuSnapshot) add(o cpuSnapshot) {
	if s.chrome == nil {
		s.chrome = map[string]time.Duration{}
	}
	s.self += o.self
	for k, v := range o.chrome {
		s.chrome[k] += v
	}
}
