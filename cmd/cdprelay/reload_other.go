//go:build !unix && !windows

package main

import "os"

// reloadSignals: none here; the config is watched.
func reloadSignals() []os.Signal { return nil }

func readShared(path string) ([]byte, error) { return os.ReadFile(path) }
