package extension

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// idFromKey derives an extension id the way Chrome does: the first 128 bits
// of the SHA-256 of the public key, one letter a-p per hex digit.
func idFromKey(t *testing.T, key string) string {
	t.Helper()
	der, err := base64.StdEncoding.DecodeString(key)
	if err != nil {
		t.Fatalf("manifest key is not base64: %v", err)
	}
	sum := sha256.Sum256(der)
	var b strings.Builder
	for _, c := range hex.EncodeToString(sum[:16]) {
		if c >= 'a' {
			b.WriteRune('a' + 10 + (c - 'a'))
		} else {
			b.WriteRune('a' + (c - '0'))
		}
	}
	return b.String()
}

func TestWriteDir(t *testing.T) {
	tests := []struct {
		name string
		cfg  *Config
	}{
		{"no config", nil},
		{"dedicated browser", &Config{Relay: "ws://127.0.0.1:9222/extension/0123456789abcdef", Share: "all"}},
		{"person picks", &Config{Relay: "wss://relay.example.com/extension/x", Share: "pick"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ext")
			if err := WriteDir(dir, tt.cfg); err != nil {
				t.Fatal(err)
			}

			err := fs.WalkDir(files, ".", func(path string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				want, _ := files.ReadFile(path)
				got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(path)))
				if err != nil {
					t.Errorf("%s not written: %v", path, err)
					return nil
				}
				if path == "manifest.json" && tt.cfg != nil {
					// A launched browser's extension has the downloads
					// permission outright; a person's asks for it.
					var g, w map[string]any
					json.Unmarshal(got, &g)
					json.Unmarshal(want, &w)
					if fmt.Sprint(w["optional_permissions"]) != "[downloads]" || g["optional_permissions"] != nil ||
						fmt.Sprint(g["permissions"]) != strings.TrimSuffix(fmt.Sprint(w["permissions"]), "]")+" downloads]" {
						t.Errorf("manifest permissions: %v / %v, embedded %v / %v", g["permissions"], g["optional_permissions"], w["permissions"], w["optional_permissions"])
					}
					delete(g, "permissions")
					delete(w, "permissions")
					delete(w, "optional_permissions")
					if fmt.Sprint(g) != fmt.Sprint(w) {
						t.Errorf("manifest.json differs beyond its permissions:\n%v\n%v", g, w)
					}
					return nil
				}
				if string(got) != string(want) {
					t.Errorf("%s differs from the embedded copy", path)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"manifest.json", "sw.js", "common.js", "connect.html", "connect.js", "connect.css", "icons/icon128.png"} {
				if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
					t.Errorf("%s missing: %v", name, err)
				}
			}

			var manifest struct {
				ManifestVersion int    `json:"manifest_version"`
				Name            string `json:"name"`
				Key             string `json:"key"`
				Background      struct {
					ServiceWorker string `json:"service_worker"`
				} `json:"background"`
			}
			data, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(data, &manifest); err != nil {
				t.Fatalf("manifest.json: %v", err)
			}
			if manifest.ManifestVersion != 3 || manifest.Name != "cdprelay" || manifest.Background.ServiceWorker != "sw.js" {
				t.Errorf("manifest = %+v", manifest)
			}
			if got := idFromKey(t, manifest.Key); got != ID {
				t.Errorf("key hashes to id %s, ID is %s", got, ID)
			}

			data, err = os.ReadFile(filepath.Join(dir, "config.json"))
			if tt.cfg == nil {
				if err == nil {
					t.Errorf("config.json written without a config")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got Config
			if err := json.Unmarshal(data, &got); err != nil {
				t.Fatalf("config.json: %v", err)
			}
			if got != *tt.cfg {
				t.Errorf("config.json = %+v, want %+v", got, *tt.cfg)
			}
		})
	}
}

// Loading a dedicated browser's directory later without a config must not
// keep pointing the extension at the old relay.
func TestWriteDirRemovesStaleConfig(t *testing.T) {
	dir := t.TempDir()
	if err := WriteDir(dir, &Config{Relay: "ws://127.0.0.1:1/extension/a", Share: "all"}); err != nil {
		t.Fatal(err)
	}
	if err := WriteDir(dir, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "config.json")); !os.IsNotExist(err) {
		t.Errorf("config.json still there: %v", err)
	}
}
