package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/cdprelay/cdprelay/internal/app"
	"github.com/cdprelay/cdprelay/internal/ingress"
)

// TestPersonKeyKept: the person key is made once, kept in the state dir
// for its owner only, and the same at the next start; a file that is not
// a key is an error that says what to do.
func TestPersonKeyKept(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	key, path, err := loadOrCreatePersonKey(dir)
	if err != nil || ingress.CheckPersonKey(key) != nil || path != filepath.Join(dir, personKeyFile) {
		t.Fatalf("first start: %q %q %v", key, path, err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the key file's mode: %v %v", fi.Mode(), err)
	}
	again, _, err := loadOrCreatePersonKey(dir)
	if err != nil || again != key {
		t.Errorf("next start: %q %v, want the same key", again, err)
	}
	if runtime.GOOS != "windows" {
		// A key others may read is not used: whoever else could read it
		// could act as the person.
		os.Chmod(path, 0o644)
		if _, _, err := loadOrCreatePersonKey(dir); err == nil || !strings.Contains(err.Error(), "readable by its owner only") {
			t.Errorf("a key others may read: %v", err)
		}
		os.Chmod(path, 0o600)
	}
	os.WriteFile(path, []byte("not a key\n"), 0o600)
	if _, _, err := loadOrCreatePersonKey(dir); err == nil || !strings.Contains(err.Error(), "delete it") {
		t.Errorf("a bad file: %v", err)
	}
	k1, p1, err := loadOrCreatePersonKey("")
	k2, _, _ := loadOrCreatePersonKey("")
	if err != nil || p1 != "" || k1 == k2 || ingress.CheckPersonKey(k1) != nil {
		t.Errorf("without a state dir: %q %q %v, then %q", k1, p1, err, k2)
	}
}

// TestPrintLiveView: the default relay prints the person's link with the
// key in its fragment; a relay with tokens says where the key is, not
// what it is.
func TestPrintLiveView(t *testing.T) {
	key := ingress.GeneratePersonKey()
	a, err := app.New(app.Config{Addr: "127.0.0.1:0", PersonKey: key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeApp(a, slog.New(slog.DiscardHandler)) })
	var b strings.Builder
	printLiveView(&b, a, "http://127.0.0.1:9222", false, "/state/person-key")
	if !strings.Contains(b.String(), "\n  http://127.0.0.1:9222/#person="+key+"\n") || !strings.Contains(b.String(), "/state/person-key") {
		t.Errorf("zero-config:\n%s", b.String())
	}
	b.Reset()
	printLiveView(&b, a, "https://relay.example.com/relay-1", true, "/state/person-key")
	if strings.Contains(b.String(), key) || !strings.Contains(b.String(), "is in /state/person-key") || !strings.Contains(b.String(), "?token=<a token with scope viewer>") {
		t.Errorf("with tokens:\n%s", b.String())
	}
}
