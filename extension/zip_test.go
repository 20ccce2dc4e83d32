package extension

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func unzip(t *testing.T, b []byte) map[string][]byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if f.Mode().Perm() != 0o644 || f.Mode().IsDir() {
			t.Errorf("%s has mode %v", f.Name, f.Mode())
		}
		out[f.Name] = data
	}
	return out
}

// TestWriteZip: the zip holds exactly what WriteDir writes without a
// config, manifest at the top; the store's differs only by the key; both
// are the same bytes every time.
func TestWriteZip(t *testing.T) {
	dir := t.TempDir()
	if err := WriteDir(dir, nil); err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		want[filepath.ToSlash(rel)], err = os.ReadFile(p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	var plain, store, again bytes.Buffer
	for _, z := range []struct {
		buf      *bytes.Buffer
		forStore bool
	}{{&plain, false}, {&store, true}, {&again, false}} {
		if err := WriteZip(z.buf, z.forStore); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(plain.Bytes(), again.Bytes()) {
		t.Error("two zips of the same files differ")
	}

	got := unzip(t, plain.Bytes())
	if !slices.Equal(slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want))) {
		t.Fatalf("the zip holds %v, want %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
	}
	for name, data := range want {
		if !bytes.Equal(got[name], data) {
			t.Errorf("%s differs from what WriteDir writes", name)
		}
	}

	st := unzip(t, store.Bytes())
	var orig, stripped map[string]any
	if err := json.Unmarshal(got["manifest.json"], &orig); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(st["manifest.json"], &stripped); err != nil {
		t.Fatalf("the store's manifest: %v", err)
	}
	if _, ok := stripped["key"]; ok {
		t.Error("the store's manifest has a key")
	}
	if idFromKey(t, orig["key"].(string)) != ID {
		t.Error("the zip's manifest key is not the extension's")
	}
	delete(orig, "key")
	a, _ := json.Marshal(orig)
	b, _ := json.Marshal(stripped)
	if !bytes.Equal(a, b) {
		t.Errorf("the store's manifest differs by more than the key:\n%s\n%s", a, b)
	}
	for name, data := range want {
		if name != "manifest.json" && !bytes.Equal(st[name], data) {
			t.Errorf("the store's %s differs", name)
		}
	}
}

func TestWithoutKeyRefusesWhatItCannotCut(t *testing.T) {
	for _, m := range []string{
		`{"name": "x", "key": "abc"}`,                  // not on a line of its own
		"{\n  \"name\": \"x\",\n  \"key\": \"abc\"\n}", // last: no comma after it
		"{\n  \"name\": \"x\"\n}",                      // none at all
	} {
		if out, err := withoutKey([]byte(m)); err == nil {
			t.Errorf("withoutKey(%q) = %q", m, out)
		}
	}
}
