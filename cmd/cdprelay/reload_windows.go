package main

import (
	"io"
	"os"

	"golang.org/x/sys/windows"
)

// reloadSignals: none (Windows has no SIGHUP); the config is watched.
func reloadSignals() []os.Signal { return nil }

// readShared reads a watched file, letting others delete or replace it
// meanwhile (os.Open would not): an editor that saves by renaming a new
// file over it must not fail because the relay was reading it.
func readShared(path string) ([]byte, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, err
	}
	h, err := windows.CreateFile(p, windows.GENERIC_READ,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(h), path)
	defer f.Close()
	return io.ReadAll(f)
}
