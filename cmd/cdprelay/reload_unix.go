//go:build unix

package main

import (
	"os"
	"syscall"
)

// reloadSignals re-read the config at once: SIGHUP, as daemons do.
func reloadSignals() []os.Signal { return []os.Signal{syscall.SIGHUP} }

// readShared reads a watched file. Reading it never stands in the way of
// an editor that replaces it.
func readShared(path string) ([]byte, error) { return os.ReadFile(path) }
