package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cdprelay/cdprelay/relay"
)

// loadOrCreateGUID returns the default instance's guid kept in dir, making
// one on first use. An empty dir means a fresh guid every run.
func loadOrCreateGUID(dir string) (string, error) {
	if dir == "" {
		return relay.NewGUID(), nil
	}
	path := filepath.Join(dir, "default-guid")
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		g := strings.TrimSpace(string(b))
		if len(g) != 32 {
			return "", fmt.Errorf("%s: not a guid; delete it to make a new one", path)
		}
		return g, nil
	case !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("read state: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("state dir: %w", err)
	}
	g := relay.NewGUID()
	// The guid is a capability: readable by its owner only.
	if err := os.WriteFile(path, []byte(g+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write state: %w", err)
	}
	return g, nil
}
