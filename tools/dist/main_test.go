package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRun: every file of the folder is in SHA256SUMS with its sum, the
// zips included, and the listing names each.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	bins := map[string]string{"cdprelay-linux-amd64": "elf", "cdprelay-windows-arm64.exe": "pe"}
	for name, data := range bins {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	if err := run(dir, &out); err != nil {
		t.Fatal(err)
	}
	sums, err := os.ReadFile(filepath.Join(dir, sumsFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(sums), "\n"), "\n")
	want := []string{"cdprelay-extension-store.zip", "cdprelay-extension.zip", "cdprelay-linux-amd64", "cdprelay-windows-arm64.exe"}
	if len(lines) != len(want) {
		t.Fatalf("SHA256SUMS:\n%s", sums)
	}
	for i, line := range lines {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok || name != want[i] {
			t.Fatalf("line %d: %q, want the sum of %s", i, line, want[i])
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		got := sha256.Sum256(data)
		if hex.EncodeToString(got[:]) != sum {
			t.Errorf("%s: the sum is wrong", name)
		}
		if !strings.Contains(out.String(), name) {
			t.Errorf("the listing does not name %s:\n%s", name, out.String())
		}
	}
	if size(1234567) != "1,234,567 (1.2 MiB)" || size(999) != "999" || size(1000) != "1,000" {
		t.Errorf("size: %s, %s, %s", size(1234567), size(999), size(1000))
	}
}
