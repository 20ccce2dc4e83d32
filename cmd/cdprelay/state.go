package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cdprelay/cdprelay/internal/owneronly"
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
	if err := owneronly.MkdirAll(dir); err != nil {
		return "", fmt.Errorf("state dir: %w", err)
	}
	g := relay.NewGUID()
	// The guid is a capability: readable by its owner only.
	if err := owneronly.WriteFile(path, []byte(g+"\n")); err != nil {
		return "", fmt.Errorf("write state: %w", err)
	}
	return g, nil
}

// instancesFile keeps the minted instances (relay.SavedInstance) beside
// the default guid: their guids are capabilities, their tenants who may
// reach them, so the file is its owner's only, and is replaced whole so
// that a crash leaves the old one or the new one, never half of either.
const instancesFile = "instances.json"

type savedFile struct {
	Instances []relay.SavedInstance `json:"instances"`
}

// loadInstances reads the minted instances kept in dir; none when dir is
// empty or holds no file yet.
func loadInstances(dir string) ([]relay.SavedInstance, error) {
	if dir == "" {
		return nil, nil
	}
	path := filepath.Join(dir, instancesFile)
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read state: %w", err)
	}
	var f savedFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w; move it away to start without the instances it names", path, err)
	}
	return f.Instances, nil
}

// instanceSaver returns the relay's Config.Save for dir (nil for none).
func instanceSaver(dir string) func([]relay.SavedInstance) error {
	if dir == "" {
		return nil
	}
	return func(list []relay.SavedInstance) error {
		if list == nil {
			list = []relay.SavedInstance{}
		}
		b, err := json.MarshalIndent(savedFile{Instances: list}, "", "  ")
		if err != nil {
			return err
		}
		if err := owneronly.MkdirAll(dir); err != nil {
			return fmt.Errorf("state dir: %w", err)
		}
		if err := owneronly.WriteFile(filepath.Join(dir, instancesFile), append(b, '\n')); err != nil {
			return fmt.Errorf("write state: %w", err)
		}
		return nil
	}
}
