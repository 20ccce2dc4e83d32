//go:build unix

package testenv

import (
	"os"
	"syscall"
)

// lockFile waits for an exclusive lock on f, which the system drops when
// this process ends, however it ends.
func lockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX) }

func unlockFile(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
