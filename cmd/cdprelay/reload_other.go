//go:build !unix

package main

import "os"

// reloadSignals: none here (Windows has no SIGHUP); the config is watched.
func reloadSignals() []os.Signal { return nil }
