package browser

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cdprelay/cdprelay/relay/internal/cdp"
)

// The files of downloads (downloadcalls.go tells the whole way):
// which folders a client may have downloads written to, the names they
// get there, and the copy of the file the person's Chrome saved. Everything here works on the relay's own file
// system and trusts nothing it is given: the client names the folder,
// Chrome's events (through the extension) name the file.

// Folder is a client's download folder, checked: root is the
// allowed folder it lies in (resolved), rel its path below root ("." for
// root itself). The folder is opened below root when a file is written
// (os.Root), so a symlink put in its path later cannot lead out of root.
type Folder struct {
	asked string // as the client gave it, for messages
	root  string
	rel   string
}

// Asked is the folder as the client named it, for messages.
func (f Folder) Asked() string { return f.asked }

// DownloadTo is where a client wants its downloads: Behavior "allow"
// (the site's name for the file) or "allowAndName" (the guid), into
// Folder; "" for none (default or deny: the person's Chrome keeps them).
type DownloadTo struct {
	Behavior string
	Folder   Folder
}

// CheckFolder decides whether the relay may write downloads into dir,
// which a client named. dir must be absolute; its symlinks are
// resolved (the part that exists), and the result must be one of roots or
// below one.
func CheckFolder(roots []string, dir string) (Folder, error) {
	f := Folder{asked: dir}
	if len(roots) == 0 {
		return f, errors.New("this relay copies no downloads (its downloads.dirs is empty)")
	}
	if dir == "" {
		return f, errors.New("downloadPath is required with behavior allow or allowAndName")
	}
	if strings.ContainsRune(dir, 0) || !utf8.ValidString(dir) {
		return f, fmt.Errorf("downloadPath %q is not a valid path", dir)
	}
	if !filepath.IsAbs(dir) {
		return f, fmt.Errorf("downloadPath %q is not an absolute path on the relay's machine", dir)
	}
	resolved, err := resolveExisting(filepath.Clean(dir))
	if err != nil {
		return f, fmt.Errorf("downloadPath %q: %w", dir, err)
	}
	for _, root := range roots {
		rel, err := filepath.Rel(root, resolved)
		if err != nil || !filepath.IsLocal(rel) && rel != "." {
			continue
		}
		f.root, f.rel = root, rel
		return f, nil
	}
	return f, fmt.Errorf("downloadPath %q is outside the folders this relay writes downloads into (%s); the relay's operator sets them (downloads.dirs)", dir, strings.Join(roots, ", "))
}

// resolveExisting resolves the symlinks of the longest part of p that
// exists and appends the rest, which holds no symlink yet (nor ".."; p
// is clean).
func resolveExisting(p string) (string, error) {
	var rest []string
	for {
		r, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(append([]string{r}, rest...)...), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(p)
		if parent == p {
			return "", err
		}
		// A path that goes on below a file is no folder.
		rest = append([]string{filepath.Base(p)}, rest...)
		p = parent
	}
}

// downloadGUID is what a download's guid may look like: Chrome's are
// UUIDs. It becomes a file name (allowAndName), so nothing else passes.
var downloadGUID = regexp.MustCompile(`^[0-9A-Za-z-]{1,64}$`)

// ValidGUID reports whether guid may name a download's file
// (allowAndName).
func ValidGUID(guid string) bool { return downloadGUID.MatchString(guid) }

// windowsReserved are names Windows gives to devices, whatever the
// extension.
var windowsReserved = map[string]bool{
	"CON": true, "PRN": true, "AUX": true, "NUL": true, "CONIN$": true, "CONOUT$": true,
	"COM1": true, "COM2": true, "COM3": true, "COM4": true, "COM5": true, "COM6": true, "COM7": true, "COM8": true, "COM9": true,
	"LPT1": true, "LPT2": true, "LPT3": true, "LPT4": true, "LPT5": true, "LPT6": true, "LPT7": true, "LPT8": true, "LPT9": true,
}

// maxNameBytes bounds a file name: most file systems take 255 bytes, and
// the relay adds " (N)" and ".crdownload" while it writes.
const maxNameBytes = 200

// SafeFileName makes a download's suggested name (a web site chose it)
// into one file name in a folder: no folder separators, no "." or "..",
// no control characters, no leading dots or spaces, no device names, at
// most maxNameBytes bytes, the extension kept.
func SafeFileName(suggested string) string {
	var b strings.Builder
	for _, r := range suggested {
		switch {
		case r == utf8.RuneError, r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			// Controls, and the marks that make a name read backwards
			// ("txt.exe" shown as "exe.txt").
			b.WriteByte('_')
		case strings.ContainsRune(`/\:*?"<>|`, r):
			b.WriteByte('_')
		default:
			b.WriteRune(r)
		}
	}
	name := strings.Trim(b.String(), " .")
	if name == "" {
		name = "download"
	}
	stem, ext := name, filepath.Ext(name)
	if len(ext) > 16 || ext == name {
		ext = ""
	}
	stem = strings.TrimSuffix(name, ext)
	if dot := strings.IndexByte(stem, '.'); windowsReserved[strings.ToUpper(stem)] || (dot > 0 && windowsReserved[strings.ToUpper(stem[:dot])]) {
		stem = "_" + stem
	}
	if len(stem)+len(ext) > maxNameBytes {
		stem = strings.TrimRight(truncateUTF8(stem, maxNameBytes-len(ext)), " .")
		if stem == "" {
			stem = "download"
		}
	}
	return stem + ext
}

func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// numbered is name with " (n)" before its extension, as Chrome names a
// download whose name is taken.
func numbered(name string, n int) string {
	if n == 0 {
		return name
	}
	ext := filepath.Ext(name)
	if ext == name {
		ext = ""
	}
	return fmt.Sprintf("%s (%d)%s", strings.TrimSuffix(name, ext), n, ext)
}

// errNotHere: the file the browser saved is not on the relay's machine.
var errNotHere = errors.New("the browser saved the file at a path this relay cannot see: the browser runs on another machine (or in a container of its own), so the file is only in that browser's download folder")

// SavedFile is the file the person's Chrome saved for a download, as the
// extension reports it.
type SavedFile struct {
	Path  string `json:"path"`
	Bytes int64  `json:"bytes"`
}

// mtimeSlack allows for file systems that keep coarse modification times.
const mtimeSlack = 2 * time.Second

// OpenSaved opens the file Chrome saved, after checking that it is the
// download's: a regular file (no symlink, no device), of the size Chrome
// reported, written since the download began. The path comes from the
// extension; these checks keep it from naming any other file of the
// relay's machine.
func OpenSaved(src SavedFile, size int64, began time.Time, maxBytes int64) (*os.File, error) {
	if !filepath.IsAbs(src.Path) {
		return nil, errors.New("the browser reported a path that is not absolute")
	}
	fi, err := os.Lstat(src.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errNotHere
	}
	if err != nil {
		return nil, fmt.Errorf("the file the browser saved: %w", pathless(err))
	}
	switch {
	case !fi.Mode().IsRegular():
		return nil, errors.New("the path the browser reported is not a regular file")
	case fi.Size() > maxBytes:
		return nil, fmt.Errorf("the file is %d bytes, more than this relay copies (%d, downloads.max_bytes)", fi.Size(), maxBytes)
	case fi.Size() != size || src.Bytes != size:
		return nil, fmt.Errorf("the file the browser reported has %d bytes where the download had %d: it is not this download's", fi.Size(), size)
	case fi.ModTime().Before(began.Add(-mtimeSlack)):
		return nil, errors.New("the file the browser reported was written before the download began: it is not this download's")
	}
	f, err := os.Open(src.Path)
	if err != nil {
		return nil, fmt.Errorf("the file the browser saved: %w", pathless(err))
	}
	// What was checked is what was opened (no symlink swapped in since).
	if fi2, err := f.Stat(); err != nil || !os.SameFile(fi, fi2) {
		f.Close()
		return nil, errors.New("the file the browser saved changed while it was opened")
	}
	return f, nil
}

// pathless drops the path from a file system error: the path of the
// person's file is not the client's to read.
func pathless(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// HoldsPersonFolder reports whether the client's folder is the folder
// where the browser saved saved (the person's download folder), or below
// it: the relay copies into the person's folder nothing.
func (f Folder) HoldsPersonFolder(saved string) bool {
	person, err := filepath.EvalSymlinks(filepath.Dir(saved))
	if err != nil {
		return false // no such folder here: OpenSaved says why
	}
	rel, err := filepath.Rel(person, filepath.Join(f.root, f.rel))
	return err == nil && (rel == "." || filepath.IsLocal(rel))
}

// WriteDownload copies size bytes of src into folder as name and returns
// the path written. The file appears under its name only once whole (it
// is written as name.crdownload, as Chrome does, and linked into place), and
// never replaces a file: with unique, a taken name gets " (1)", " (2)", ...
// as Chrome does; without, it is an error.
func WriteDownload(folder Folder, name string, unique bool, src io.Reader, size int64) (string, error) {
	if !filepath.IsLocal(name) || filepath.Base(name) != name {
		return "", fmt.Errorf("%q is no file name", name)
	}
	root, err := os.OpenRoot(folder.root)
	if err != nil {
		return "", fmt.Errorf("the downloads folder: %w", err)
	}
	defer root.Close()
	if folder.rel != "." {
		if err := root.MkdirAll(folder.rel, 0o700); err != nil {
			return "", fmt.Errorf("downloadPath %q: %w", folder.asked, err)
		}
	}
	dir, err := root.OpenRoot(folder.rel)
	if err != nil {
		return "", fmt.Errorf("downloadPath %q: %w", folder.asked, err)
	}
	defer dir.Close()

	tmp, part, err := createPart(dir, name)
	if err != nil {
		return "", fmt.Errorf("downloadPath %q: %w", folder.asked, err)
	}
	done := false
	defer func() {
		if !done {
			part.Close()
			dir.Remove(tmp)
		}
	}()
	n, err := io.CopyN(part, src, size)
	if err != nil {
		return "", fmt.Errorf("copy the file (%d of %d bytes): %w", n, size, err)
	}
	if extra, _ := src.Read(make([]byte, 1)); extra > 0 {
		return "", errors.New("the file grew after the download ended: it is not this download's")
	}
	if err := part.Close(); err != nil {
		return "", fmt.Errorf("write the file: %w", err)
	}
	for i := 0; i < 100; i++ {
		final := numbered(name, i)
		err := placeFile(dir, tmp, final)
		if err == nil {
			done = true
			dir.Remove(tmp)
			return filepath.Join(folder.asked, final), nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("downloadPath %q: %w", folder.asked, err)
		}
		if !unique {
			return "", fmt.Errorf("downloadPath %q already holds a file named %s", folder.asked, final)
		}
	}
	return "", fmt.Errorf("downloadPath %q already holds %s and 99 numbered copies", folder.asked, name)
}

// createPart creates name.crdownload (or a name beside it, if taken) for
// writing, never opening a file that exists.
func createPart(dir *os.Root, name string) (string, *os.File, error) {
	for i := 0; ; i++ {
		tmp := name + ".crdownload"
		if i > 0 {
			tmp = name + "." + cdp.RandHex(4) + ".crdownload"
		}
		f, err := dir.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil || !errors.Is(err, fs.ErrExist) || i >= 8 {
			return tmp, f, err
		}
	}
}

// placeFile gives the written file tmp its final name, failing with
// fs.ErrExist when the name is taken. A hard link never replaces a file;
// where the file system has none, a rename after a look.
func placeFile(dir *os.Root, tmp, final string) error {
	err := dir.Link(tmp, final)
	if err == nil || errors.Is(err, fs.ErrExist) {
		return err
	}
	if _, lerr := dir.Lstat(final); lerr == nil {
		return fs.ErrExist
	}
	return dir.Rename(tmp, final)
}

// CanceledDownload is Chrome's Page.downloadProgress of a canceled
// download.
func CanceledDownload(guid string, size int64) []byte {
	b, _ := json.Marshal(map[string]any{"guid": guid, "totalBytes": size, "receivedBytes": size, "state": "canceled"})
	return b
}
