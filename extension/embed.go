// Package extension holds the cdprelay browser extension: an MV3 extension
// that shares a person's Chrome tabs with the relay through chrome.debugger
// and speaks the relay's extension protocol over one WebSocket.
//
// The files are embedded so that the relay can write them out for the
// dedicated browser it launches, together with a config.json that points the
// extension at that relay.
package extension

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ID is the extension id Chrome derives from the "key" in manifest.json, so
// it is the same wherever the extension is loaded from.
const ID = "edoogkfadanamikagfaenbpnjpbhjfei"

//go:embed manifest.json sw.js common.js guard.js connect.html connect.js connect.css icons/*.png
var files embed.FS

// Config is written as config.json next to the extension; the service worker
// reads it on every start and connects without asking.
type Config struct {
	// Relay is the extension WebSocket URL, ws://127.0.0.1:<port>/extension/<guid>.
	Relay string `json:"relay"`
	// Share is "all" (every web page tab, for a dedicated browser) or "pick".
	Share string `json:"share"`
}

// WriteDir writes the extension into dir, creating it as needed. With a nil
// cfg any config.json left there by an earlier call is removed, so the
// extension waits for a person to connect it. With a cfg (a browser the
// relay launches, with a profile of its own) the manifest also grants the
// "downloads" permission outright, which a person's extension asks for
// (connect.html): nobody is there to click.
func WriteDir(dir string, cfg *Config) error {
	err := fs.WalkDir(files, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(path))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := files.ReadFile(path)
		if err != nil {
			return err
		}
		if path == "manifest.json" && cfg != nil {
			if data, err = grantOptional(data); err != nil {
				return err
			}
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		return err
	}
	configPath := filepath.Join(dir, "config.json")
	if cfg == nil {
		if err := os.Remove(configPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(configPath, append(data, '\n'), 0o644)
}

// grantOptional moves the manifest's optional permissions into its
// permissions.
func grantOptional(manifest []byte) ([]byte, error) {
	var m map[string]any
	if err := json.Unmarshal(manifest, &m); err != nil {
		return nil, fmt.Errorf("manifest.json: %w", err)
	}
	perms, _ := m["permissions"].([]any)
	opt, _ := m["optional_permissions"].([]any)
	m["permissions"] = append(perms, opt...)
	delete(m, "optional_permissions")
	return json.MarshalIndent(m, "", "  ")
}
