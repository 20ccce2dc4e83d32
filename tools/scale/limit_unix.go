//go:build unix

package main

import (
	"fmt"
	"syscall"
)

// raiseFileLimit lifts the soft limit on open files to the hard one: every
// connection is a descriptor on each side, and running out half-way would
// show up as a confusing dial or accept error rather than as a limit.
func raiseFileLimit() error {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return fmt.Errorf("open file limit: %w", err)
	}
	if l.Cur < l.Max {
		l.Cur = l.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
			return fmt.Errorf("raise the open file limit to %d: %w", l.Max, err)
		}
	}
	return nil
}

func fileLimit() uint64 {
	var l syscall.Rlimit
	_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l)
	return l.Cur
}
