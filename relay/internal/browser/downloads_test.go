package browser

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cdprelay/cdprelay/relay/internal/config"
)

// The path checks of downloads: a client's folder, a site's file name.

var fileNames = []struct{ in, want string }{
	{"report.csv", "report.csv"},
	{"../../etc/passwd", "_.._etc_passwd"},
	{`..\..\evil.bat`, `_.._evil.bat`},
	{"..", "download"},
	{".", "download"},
	{"", "download"},
	{"   ", "download"},
	{".bashrc", "bashrc"},
	{"CON", "_CON"},
	{"con.txt", "_con.txt"},
	{"nul.tar.gz", "_nul.tar.gz"},
	{"a:b*c?d\"e<f>g|h", "a_b_c_d_e_f_g_h"},
	{"line\nbreak\x00nul", "line_break_nul"},
	{"photo\u202egnp.exe", "photo_gnp.exe"},
	{"name. ", "name"},
	{"résumé.pdf", "résumé.pdf"},
	{strings.Repeat("a", 300) + ".pdf", strings.Repeat("a", maxNameBytes-4) + ".pdf"},
	{strings.Repeat("é", 150), strings.Repeat("é", maxNameBytes/2)},
	{"\xff\xfe.txt", "__.txt"},
}

func TestSafeFileName(t *testing.T) {
	t.Parallel()
	for _, tt := range fileNames {
		if got := SafeFileName(tt.in); got != tt.want {
			t.Errorf("SafeFileName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzSafeFileName: whatever a site suggests, the name is one plain file
// name inside the folder.
func FuzzSafeFileName(f *testing.F) {
	for _, tt := range fileNames {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got := SafeFileName(in)
		switch {
		case got == "" || got == "." || got == "..":
			t.Fatalf("%q → %q", in, got)
		case strings.ContainsAny(got, "/\\\x00:"):
			t.Fatalf("%q → %q holds a separator", in, got)
		case !utf8.ValidString(got), len(got) > maxNameBytes:
			t.Fatalf("%q → %q (%d bytes)", in, got, len(got))
		case strings.HasPrefix(got, ".") || strings.HasSuffix(got, ".") || strings.HasPrefix(got, " "):
			t.Fatalf("%q → %q", in, got)
		case !filepath.IsLocal(got) || filepath.Base(got) != got:
			t.Fatalf("%q → %q is not a local name", in, got)
		}
		for _, n := range []int{1, 99} {
			if nb := numbered(got, n); !filepath.IsLocal(nb) || filepath.Base(nb) != nb {
				t.Fatalf("numbered %q → %q", got, nb)
			}
		}
	})
}

// folderCases are client folders for a relay that allows root (a temp
// dir made by the test; "$ROOT" stands for it, "$OUT" for another).
var folderCases = []struct {
	path string
	ok   bool
	rel  string
}{
	{"$ROOT", true, "."},
	{"$ROOT/", true, "."},
	{"$ROOT/playwright-artifacts-abc", true, "playwright-artifacts-abc"},
	{"$ROOT/a/b/../c", true, "a/c"},
	{"$ROOT/./d", true, "d"},
	{"$ROOT/..", false, ""},
	{"$ROOT/../x", false, ""},
	{"$ROOT/link", false, ""},
	{"$ROOT/link/deeper", false, ""},
	{"$ROOT/inner-link", true, "inside"},
	{"$ROOT/..x", true, "..x"},
	{"$OUT", false, ""},
	{"/", false, ""},
	{"/etc", false, ""},
	{"relative", false, ""},
	{"~/.ssh", false, ""},
	{"", false, ""},
	{"$ROOT/\x00", false, ""},
	{"$ROOT/\xff", false, ""},
}

func folderWorld(t testing.TB) (root, out string) {
	t.Helper()
	root, out = t.TempDir(), t.TempDir()
	os.Symlink(out, filepath.Join(root, "link"))
	os.Mkdir(filepath.Join(root, "inside"), 0o700)
	os.Symlink(filepath.Join(root, "inside"), filepath.Join(root, "inner-link"))
	return root, out
}

func TestCheckDownloadFolder(t *testing.T) {
	t.Parallel()
	root, out := folderWorld(t)
	roots, err := config.DownloadsConfig{Dirs: []string{root}}.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range folderCases {
		p := strings.NewReplacer("$ROOT", root, "$OUT", out).Replace(tt.path)
		f, err := CheckFolder(roots, p)
		if (err == nil) != tt.ok {
			t.Errorf("%s: %v", tt.path, err)
			continue
		}
		if tt.ok && (f.root != roots[0] || f.rel != filepath.FromSlash(tt.rel) || f.asked != p) {
			t.Errorf("%s: %+v", tt.path, f)
		}
	}
	if _, err := CheckFolder(nil, root); err == nil || !strings.Contains(err.Error(), "downloads.dirs") {
		t.Errorf("no folders: %v", err)
	}
}

// FuzzCheckDownloadFolder: whatever a client names, a folder that passes
// lies inside the allowed one, and its path below it is local.
func FuzzCheckDownloadFolder(f *testing.F) {
	for _, tt := range folderCases {
		f.Add(tt.path)
	}
	f.Fuzz(func(t *testing.T, path string) {
		root, out := folderWorld(t)
		roots, err := config.DownloadsConfig{Dirs: []string{root}}.Resolve()
		if err != nil {
			t.Fatal(err)
		}
		p := strings.NewReplacer("$ROOT", root, "$OUT", out).Replace(path)
		fd, err := CheckFolder(roots, p)
		if err != nil {
			return
		}
		if fd.root != roots[0] || !filepath.IsLocal(fd.rel) && fd.rel != "." {
			t.Fatalf("%q passed as %+v", p, fd)
		}
		real, err := resolveExisting(filepath.Join(fd.root, fd.rel))
		if err != nil {
			t.Fatal(err)
		}
		if rel, err := filepath.Rel(roots[0], real); err != nil || !filepath.IsLocal(rel) && rel != "." {
			t.Fatalf("%q resolves to %q, outside %q", p, real, roots[0])
		}
	})
}

// TestWriteDownloadNeverReplaces: a name that is taken gets a number
// (allow) or is an error (allowAndName); an existing file, or a symlink
// planted under the name, is never written through.
func TestWriteDownloadNeverReplaces(t *testing.T) {
	t.Parallel()
	root, out := t.TempDir(), t.TempDir()
	victim := filepath.Join(out, "victim")
	os.WriteFile(victim, []byte("keep"), 0o644)
	os.Symlink(victim, filepath.Join(root, "g-1"))
	os.Symlink(victim, filepath.Join(root, "r.txt"))
	os.Symlink(victim, filepath.Join(root, "r.txt.crdownload"))
	f := Folder{asked: root, root: root, rel: "."}
	if _, err := WriteDownload(f, "g-1", false, strings.NewReader("new!"), 4); err == nil {
		t.Error("allowAndName over a taken name succeeded")
	}
	p, err := WriteDownload(f, "r.txt", true, strings.NewReader("new!"), 4)
	if err != nil || p != filepath.Join(root, "r (1).txt") {
		t.Errorf("allow over a taken name: %q %v", p, err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("written through a symlink: %q", b)
	}
	// A source that is longer than the download said is refused.
	if _, err := WriteDownload(f, "long", false, strings.NewReader("12345"), 4); err == nil {
		t.Error("a longer file was copied")
	}
	if _, err := os.Lstat(filepath.Join(root, "long")); err == nil {
		t.Error("the refused file is there")
	}
	if _, err := WriteDownload(f, "../escape", false, strings.NewReader("1234"), 4); err == nil {
		t.Error("a name with .. was written")
	}
}
