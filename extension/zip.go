package extension

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"time"
)

// zipTime is every entry's time: the same files make the same zip, byte
// for byte, whenever and wherever it is built, so that its checksum says
// what it holds.
var zipTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// keyLine is the manifest's "key" member, one line of its own.
var keyLine = regexp.MustCompile(`(?m)^[ \t]*"key":[ \t]*"[^"]*",[ \t]*\r?\n`)

// WriteZip writes the extension as a person loads it: the files WriteDir
// writes without a config (the extension waits to be connected), at the
// top of the archive, as the Chrome Web Store wants them. Unpacked and
// loaded with "Load unpacked", it has the id ID, which the relay lets in
// by default.
//
// forStore leaves the manifest's "key" out, which the Chrome Web Store
// refuses (it gives the extension an id of its own, which the relay's
// origins.extension_ids must then list).
func WriteZip(w io.Writer, forStore bool) error {
	zw := zip.NewWriter(w)
	err := fs.WalkDir(files, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := files.ReadFile(path)
		if err != nil {
			return err
		}
		if path == "manifest.json" && forStore {
			if data, err = withoutKey(data); err != nil {
				return err
			}
		}
		h := &zip.FileHeader{Name: path, Method: zip.Deflate, Modified: zipTime}
		h.SetMode(0o644)
		f, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		_, err = f.Write(data)
		return err
	})
	if err != nil {
		return fmt.Errorf("extension zip: %w", err)
	}
	return zw.Close()
}

// withoutKey is the manifest without its "key" line, the rest as written.
func withoutKey(manifest []byte) ([]byte, error) {
	out := keyLine.ReplaceAll(manifest, nil)
	var m map[string]json.RawMessage
	if err := json.Unmarshal(out, &m); err != nil {
		return nil, fmt.Errorf("manifest.json without its key: %w", err)
	}
	if _, ok := m["key"]; ok || bytes.Equal(out, manifest) {
		return nil, errors.New("manifest.json: its key is not on a line of its own")
	}
	return out, nil
}
