package testenv

import (
	"os"
	"path/filepath"
)

// LockBrowsers takes the machine-wide lock of the end-to-end packages
// that run browsers, so that two such packages that go test runs at once
// take turns instead of running four browsers on a small machine. It
// waits for the lock and returns the function that releases it.
func LockBrowsers() (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "cdprelay-e2e-browsers.lock"), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, err
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		unlockFile(f)
		f.Close()
	}, nil
}
