package owneronly

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFileReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "default-guid")
	for _, content := range []string{"first\n", "second, longer than the first\n", ""} {
		if err := WriteFile(path, []byte(content)); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != content {
			t.Fatalf("read %q, wrote %q", got, content)
		}
	}
	// No temporary file is left beside it.
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("the folder holds %v, want the file alone", names)
	}
}

func TestWriteFileNeedsItsFolder(t *testing.T) {
	if err := WriteFile(filepath.Join(t.TempDir(), "missing", "key"), []byte("x")); err == nil {
		t.Fatal("wrote into a folder that does not exist")
	}
}

func TestMkdirAll(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "a", "b", "cdprelay")
	for range 2 { // the second time, everything is there
		if err := MkdirAll(dir); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			t.Fatalf("%s: %v", dir, err)
		}
	}
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := MkdirAll(file); err == nil {
		t.Error("MkdirAll of a file succeeded")
	}
	if err := MkdirAll(filepath.Join(file, "below")); err == nil {
		t.Error("MkdirAll below a file succeeded")
	}
}
