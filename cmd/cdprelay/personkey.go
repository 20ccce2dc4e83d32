package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cdprelay/cdprelay/internal/ingress"
	"github.com/cdprelay/cdprelay/internal/owneronly"
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
		if err := owneronly.Check(path); err != nil {
			// As ssh does with a key others may read: whoever else could
			// read it could act as the person.
			return "", "", fmt.Errorf("%w; make it readable by its owner only, or delete it to make a new one", err)
		}
		key = strings.TrimSpace(string(b))
		if err := ingress.CheckPersonKey(key); err != nil {
			return "", "", fmt.Errorf("%s: %w; delete it to make a new one", path, err)
		}
		return key, path, nil
	case !errors.Is(err, fs.ErrNotExist):
		return "", "", fmt.Errorf("read state: %w", err)
	}
	if err := owneronly.MkdirAll(dir); err != nil {
		return "", "", fmt.Errorf("state dir: %w", err)
	}
	key = ingress.GeneratePersonKey()
	if err := owneronly.WriteFile(path, []byte(key+"\n")); err != nil {
		return "", "", fmt.Errorf("write state: %w", err)
	}
	return key, path, nil
}
