//go:build !windows

package owneronly

import (
	"fmt"
	"os"
)

// createTemp makes a new file only its owner may read or write: mode
// 0600, which a umask can only narrow.
func createTemp(dir, pattern string) (*os.File, error) {
	return os.CreateTemp(dir, pattern) // 0600
}

func mkdir(dir string) error { return os.Mkdir(dir, 0o700) }

// Check says why path is not owner-only, or nil when it is: a mode that
// lets the group or others in.
func Check(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if m := st.Mode().Perm(); m&0o077 != 0 {
		return fmt.Errorf("%s: mode %04o lets others than its owner in", path, m)
	}
	return nil
}
