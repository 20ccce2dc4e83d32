package cdp

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// The browser remembered across restarts (the relay's Config.BrowserFile):
// a Chrome's /json/version names its browser whether or not a client has
// connected, and so does the relay's once its extension has connected
// once, even while it has not connected again.

// maxBrowserFile bounds what is read of the remembered browser.
const maxBrowserFile = 16 << 10

// LoadRemembered reads the remembered browser at path; a missing file (or
// no path) is no browser, and so is an unreadable one, with the error.
func LoadRemembered(path string) (BrowserInfo, error) {
	var bi BrowserInfo
	if path == "" {
		return bi, nil
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return bi, nil
	}
	if err != nil {
		return bi, fmt.Errorf("remembered browser: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxBrowserFile))
	if err != nil {
		return bi, fmt.Errorf("remembered browser: %w", err)
	}
	if err := json.Unmarshal(b, &bi); err != nil {
		return BrowserInfo{}, fmt.Errorf("remembered browser %s: %w", path, err)
	}
	if !IsChromeProduct(bi.Product) || bi.UserAgent == "" {
		return BrowserInfo{}, fmt.Errorf("remembered browser %s: not a Chrome's", path)
	}
	return bi, nil
}

// Remember writes info to path, where LoadRemembered reads it, replacing
// the file whole and readable by its owner only.
func Remember(path string, info BrowserInfo) error {
	b, err := json.MarshalIndent(info, "", "  ")
	if err == nil {
		err = writeFileAtomic(path, append(b, '\n'))
	}
	return err
}

// writeFileAtomic replaces path with b, readable by its owner only.
func writeFileAtomic(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".browser-*")
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}
