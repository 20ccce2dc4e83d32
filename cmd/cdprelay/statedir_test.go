package main

import (
	"path/filepath"
	"testing"

	"github.com/cdprelay/cdprelay/internal/owneronly"
)

func TestStateDirFor(t *testing.T) {
	tests := []struct {
		goos string
		env  map[string]string
		home string
		want string
	}{
		{"linux", nil, "/home/ada", "/home/ada/.local/state/cdprelay"},
		{"linux", map[string]string{"XDG_STATE_HOME": "/srv/state"}, "/home/ada", "/srv/state/cdprelay"},
		{"linux", nil, "", ""},
		{"freebsd", nil, "/home/ada", "/home/ada/.local/state/cdprelay"},
		{"darwin", nil, "/Users/ada", "/Users/ada/Library/Application Support/cdprelay"},
		// XDG is not macOS's convention.
		{"darwin", map[string]string{"XDG_STATE_HOME": "/Users/ada/.state"}, "/Users/ada", "/Users/ada/Library/Application Support/cdprelay"},
		{"darwin", nil, "", ""},
		{"windows", map[string]string{"LOCALAPPDATA": `C:\Users\ada\AppData\Local`}, `C:\Users\ada`, `C:\Users\ada\AppData\Local\cdprelay`},
		{"windows", nil, `C:\Users\ada`, `C:\Users\ada\AppData\Local\cdprelay`},
		{"windows", nil, "", ""},
	}
	for _, tt := range tests {
		got := stateDirFor(tt.goos, func(k string) string { return tt.env[k] }, tt.home)
		if got != tt.want {
			t.Errorf("%s %v home %q: %q, want %q", tt.goos, tt.env, tt.home, got, tt.want)
		}
	}
}

// TestGUIDOwnerOnly: the default guid, a capability, is its owner's only,
// and so is the state folder the relay makes for it.
func TestGUIDOwnerOnly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "cdprelay")
	g, err := loadOrCreateGUID(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, filepath.Join(dir, "default-guid")} {
		if err := owneronly.Check(p); err != nil {
			t.Error(err)
		}
	}
	if again, err := loadOrCreateGUID(dir); err != nil || again != g {
		t.Errorf("the second run: %q %v, want %q", again, err, g)
	}
}
