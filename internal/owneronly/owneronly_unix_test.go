//go:build unix

package owneronly

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// withUmask runs f with the process's umask set to mask: the most
// permissive one, 0, is where a careless mode shows.
func withUmask(t *testing.T, mask int, f func()) {
	t.Helper()
	old := syscall.Umask(mask)
	defer syscall.Umask(old)
	f()
}

func mode(t *testing.T, path string) fs.FileMode {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode().Perm()
}

func TestModes(t *testing.T) {
	withUmask(t, 0, func() {
		base := t.TempDir()
		if err := os.Chmod(base, 0o755); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(base, "state", "cdprelay")
		if err := MkdirAll(dir); err != nil {
			t.Fatal(err)
		}
		for _, d := range []string{dir, filepath.Dir(dir)} {
			if m := mode(t, d); m != 0o700 {
				t.Errorf("%s made with mode %o, want 700", d, m)
			}
		}
		if m := mode(t, base); m != 0o755 {
			t.Errorf("the existing %s changed to %o", base, m)
		}

		path := filepath.Join(dir, "default-guid")
		// A file left readable by everyone (copied in, an older
		// version) is replaced by a private one.
		if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := WriteFile(path, []byte("new")); err != nil {
			t.Fatal(err)
		}
		if m := mode(t, path); m != 0o600 {
			t.Errorf("%s written with mode %o, want 600", path, m)
		}
	})
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "key")
	if err := WriteFile(path, []byte("k")); err != nil {
		t.Fatal(err)
	}
	if err := Check(path); err != nil {
		t.Errorf("a file WriteFile wrote: %v", err)
	}
	for _, m := range []fs.FileMode{0o640, 0o604, 0o644, 0o660} {
		if err := os.Chmod(path, m); err != nil {
			t.Fatal(err)
		}
		if err := Check(path); err == nil {
			t.Errorf("mode %o passes", m)
		}
	}
}
