package main

import (
	"path/filepath"
	"slices"
	"testing"
)

const exampleConfig = "../../docs/config.example.yaml"

func TestExampleConfigIsAccepted(t *testing.T) {
	if code := checkConfig([]string{exampleConfig}); code != 0 {
		t.Fatalf("check-config %s exited %d", exampleConfig, code)
	}
	if _, err := loadConfig(exampleConfig, policyFlags{}); err != nil {
		t.Fatal(err)
	}
}

// TestDownloadDirsFlag: --download-dirs names the folders a client's
// download folder must be in; a relative one is refused at start.
func TestDownloadDirsFlag(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	cfg, err := loadConfig("", policyFlags{downloadDirs: a + ", " + b})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.Downloads.Dirs, []string{a, b}) {
		t.Errorf("downloads.dirs: %q", cfg.Downloads.Dirs)
	}
	if cfg, _ := loadConfig("", policyFlags{}); cfg.Downloads.Dirs != nil {
		t.Errorf("without the flag, downloads.dirs is %q, not the default", cfg.Downloads.Dirs)
	}
	if _, err := loadConfig("", policyFlags{downloadDirs: filepath.Join("rel", "dir")}); err == nil {
		t.Error("a relative folder was accepted")
	}
}
