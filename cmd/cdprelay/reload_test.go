package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/internal/app"
)

// TestFileWatch: a change is reloaded once, after it has been read the
// same twice; a file caught half-written is not taken for the new one.
func TestFileWatch(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "cdprelay.yaml")
	write := func(s string, mtime time.Time) {
		t.Helper()
		if err := os.WriteFile(cfg, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(cfg, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Now().Add(-time.Hour)
	write("policy: {}\n", t0)
	w := newFileWatch([]string{cfg}, t0.Add(time.Minute))
	steps := []struct {
		name   string
		change func()
		want   bool
	}{
		{"unchanged", nil, false},
		{"unchanged again", nil, false},
		{"half written", func() { write("policy:\n  deny_me", t0.Add(time.Second)) }, false},
		{"the rest written", func() { write("policy:\n  deny_methods: [X.y]\n", t0.Add(2*time.Second)) }, false},
		{"settled", nil, true},
		{"once", nil, false},
		{"touched", func() { write("policy:\n  deny_methods: [X.y]\n", t0.Add(3*time.Second)) }, false},
		{"touched, settled", nil, true},
		// Same bytes and size in the same clock tick: the content tells.
		{"same time, other bytes", func() { write("policy:\n  deny_methods: [X.z]\n", t0.Add(3*time.Second)) }, false},
		{"same time, settled", nil, true},
		{"removed", func() { os.Remove(cfg) }, false},
		{"removed, settled", nil, true},
		{"still removed", nil, false},
		{"back", func() { write("policy: {}\n", t0.Add(4*time.Second)) }, false},
		{"back, settled", nil, true},
	}
	for _, s := range steps {
		if s.change != nil {
			s.change()
		}
		if got := w.poll(); got != s.want {
			t.Fatalf("%s: poll() = %v, want %v", s.name, got, s.want)
		}
	}
}

// TestFileWatchWrittenWhileStarting: a config written after serve read it,
// before the watch began, is reloaded too.
func TestFileWatchWrittenWhileStarting(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "cdprelay.yaml")
	if err := os.WriteFile(cfg, []byte("policy: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	w := newFileWatch([]string{cfg}, time.Now().Add(-time.Minute))
	if w.poll() || !w.poll() {
		t.Fatal("a file written after it was loaded is not reloaded")
	}
	if w.poll() {
		t.Fatal("reloaded twice")
	}
}

// TestWatchedFiles: what a reload reads is what is watched.
func TestWatchedFiles(t *testing.T) {
	file := &app.File{TLS: app.TLSConfig{Cert: "/etc/c.pem", Key: "/etc/k.pem"}}
	tests := []struct {
		f    serveFlags
		file *app.File
		want []string
	}{
		{serveFlags{}, &app.File{}, nil},
		{serveFlags{config: "a.yaml"}, &app.File{}, []string{"a.yaml"}},
		{serveFlags{config: "a.yaml"}, file, []string{"a.yaml", "/etc/c.pem", "/etc/k.pem"}},
		{serveFlags{config: "a.yaml", tlsCert: "f.pem", tlsKey: "fk.pem"}, file, []string{"a.yaml", "f.pem", "fk.pem"}},
	}
	for _, tt := range tests {
		got := watchedFiles(tt.f, tt.file)
		if len(got) != len(tt.want) {
			t.Errorf("%+v: %v, want %v", tt.f, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("%+v: %v, want %v", tt.f, got, tt.want)
			}
		}
	}
}

// TestReloaderStops: the watch and the signal handler end with stop, and
// a change reaches C.
func TestReloaderStops(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "cdprelay.yaml")
	if err := os.WriteFile(cfg, []byte("policy: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(cfg, old, old)
	f := serveFlags{config: cfg, reload: reloadFlags{watch: true}}
	r := startReloader(context.Background(), f, &app.File{}, slog.New(slog.DiscardHandler))
	if err := os.WriteFile(cfg, []byte("policy: {deny_methods: [X.y]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.C:
	case <-time.After(30 * time.Second):
		t.Fatal("the change was never reported")
	}
	r.stop()
	off := startReloader(context.Background(), serveFlags{config: cfg}, &app.File{}, slog.New(slog.DiscardHandler))
	if off.watch != nil {
		t.Error("--watch-config=false watches")
	}
	off.stop()
}
