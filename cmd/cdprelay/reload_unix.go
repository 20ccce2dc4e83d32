//go:build unix

package main

import (
	"os"
	"syscall"
)

// reloadSignals re-read the config at once: SIGHUP, as daemons do.
func reloadSignals() []os.Signal { return []os.Signal{syscall.SIGHUP} }
