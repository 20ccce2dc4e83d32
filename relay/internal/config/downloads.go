package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// DownloadsConfig says where the relay may write the files of a client's
// downloads (Browser.setDownloadBehavior's downloadPath).
type DownloadsConfig struct {
	// Dirs are folders on the relay's machine that a client's download
	// folder must be in (or be). Symlinks in them are resolved when the
	// relay starts. nil: the OS temp dir, where Playwright makes its
	// download folder (os.tmpdir()/playwright-artifacts-*) and where a
	// Puppeteer script usually puts one; an empty, non-nil list: no
	// download is ever copied.
	Dirs []string
	// MaxBytes is the largest file the relay copies. Default: 1 GiB.
	MaxBytes int64
}

// DefaultMaxBytes is DownloadsConfig.MaxBytes when it is 0.
const DefaultMaxBytes = 1 << 30

// Resolve checks the configured folders and returns them with their
// symlinks resolved: the roots browser.CheckFolder takes.
func (d DownloadsConfig) Resolve() ([]string, error) {
	dirs := d.Dirs
	if dirs == nil {
		dirs = []string{os.TempDir()}
	}
	out := make([]string, 0, len(dirs))
	for _, dir := range dirs {
		if !filepath.IsAbs(dir) {
			return nil, fmt.Errorf("downloads dir %q is not an absolute path", dir)
		}
		r, err := filepath.EvalSymlinks(dir)
		if err != nil {
			return nil, fmt.Errorf("downloads dir %q: %w", dir, err)
		}
		if fi, err := os.Stat(r); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("downloads dir %q is not a folder", dir)
		}
		out = append(out, r)
	}
	if d.MaxBytes < 0 {
		return nil, errors.New("downloads max bytes must not be negative")
	}
	return out, nil
}
