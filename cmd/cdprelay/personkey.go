package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cdprelay/cdprelay/internal/ingress"
)

// personKeyFile keeps the person key beside the default guid: the one
// credential of the person who lends the browser (Stop, approvals,
// dialogs, taking over a tab), which the live view's link carries. Only
// its owner may read it; an agent that runs as the same user could read
// it too, as any file of that user's: run the agent as another user.
const personKeyFile = "person-key"

// loadOrCreatePersonKey returns the person key kept in dir, and the file,
// making one on first use. An empty dir means a fresh key every run (and
// no file).
func loadOrCreatePersonKey(dir string) (key, path string, err error) {
	if dir == "" {
		return ingress.GeneratePersonKey(), "", nil
	}
	path = filepath.Join(dir, personKeyFile)
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		key = strings.TrimSpace(string(b))
		if err := ingress.CheckPersonKey(key); err != nil {
			return "", "", fmt.Errorf("%s: %w; delete it to make a new one", path, err)
		}
		return key, path, nil
	case !errors.Is(err, fs.ErrNotExist):
		return "", "", fmt.Errorf("read state: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", fmt.Errorf("state dir: %w", err)
	}
	key = ingress.GeneratePersonKey()
	if err := writeOwnerOnly(path, []byte(key+"\n")); err != nil {
		return "", "", fmt.Errorf("write state: %w", err)
	}
	return key, path, nil
}

// writeOwnerOnly writes a secret of the state dir, readable by its owner
// only, as the default guid is written.
func writeOwnerOnly(path string, data []byte) error {
	return os.WriteFile(path, data, 0o600)
}
