package cdp

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRememberedBrowserIgnoresJunk: a damaged file is no browser.
func TestRememberedBrowserIgnoresJunk(t *testing.T) {
	t.Parallel()
	for _, junk := range []string{"", "{", `{"product":"Firefox/1","userAgent":"x"}`, `{"product":"Chrome/156.0.1.2"}`, string(make([]byte, maxBrowserFile+10))} {
		file := filepath.Join(t.TempDir(), "browser.json")
		os.WriteFile(file, []byte(junk), 0o600)
		if bi, err := LoadRemembered(file); err == nil && bi != (BrowserInfo{}) {
			t.Errorf("%.40q: %+v", junk, bi)
		}
	}
}

func FuzzLoadBrowser(f *testing.F) {
	f.Add([]byte(`{"product":"Chrome/156.0.8078.108","userAgent":"Mozilla/5.0 HeadlessChrome/156.0.0.0","version":"156.0.8078.108"}`))
	f.Add([]byte(`{"product":"Chrome/1"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		file := filepath.Join(t.TempDir(), "browser.json")
		os.WriteFile(file, b, 0o600)
		bi, err := LoadRemembered(file)
		if err == nil && bi.UserAgent != "" && !IsChromeProduct(bi.Product) {
			t.Errorf("accepted %q", b)
		}
	})
}

// TestRemember: what Remember writes, LoadRemembered reads back, from a
// file readable by its owner only, in a folder it makes.
func TestRemember(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "state", "browser.json")
	info, _ := InfoFromUA("Mozilla/5.0 HeadlessChrome/156.0.0.0 Safari/537.36", "156.0.8078.108")
	if err := Remember(file, info); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the file: %v %v", fi, err)
	}
	if got, err := LoadRemembered(file); err != nil || got != info {
		t.Errorf("read back: %+v %v, want %+v", got, err, info)
	}
	if got, err := LoadRemembered(filepath.Join(t.TempDir(), "none.json")); err != nil || got != (BrowserInfo{}) {
		t.Errorf("no file: %+v %v", got, err)
	}
}
