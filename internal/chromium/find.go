package chromium

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

// ErrNotFound means no browser that loads the cdprelay extension was
// found. Find's error says where it looked, and what to do.
var ErrNotFound = errors.New("no Chromium found")

// Host is what Find looks at: this machine (ThisHost), or a made-up one
// in a test, so that every platform's search is tested on any.
type Host struct {
	GOOS   string              // "linux", "darwin", "windows", ...
	Getenv func(string) string // the environment
	Home   string              // the user's home folder; "" when unknown
	// Check says why path is not a browser binary this system could
	// run, or nil when it is.
	Check func(path string) error
	// ReadDir lists the names in dir; nil when there is none.
	ReadDir func(dir string) []string
}

// ThisHost is the machine this process runs on.
func ThisHost() Host {
	home, _ := os.UserHomeDir()
	return Host{
		GOOS:   runtime.GOOS,
		Getenv: os.Getenv,
		Home:   home,
		Check:  executable,
		ReadDir: func(dir string) []string {
			entries, _ := os.ReadDir(dir)
			names := make([]string, len(entries))
			for i, e := range entries {
				names[i] = e.Name()
			}
			return names
		},
	}
}

func executable(p string) error {
	st, err := os.Stat(p)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return errors.New("not an executable file")
	}
	// Windows has no execute bits: a file is run by its extension.
	if runtime.GOOS != "windows" && st.Mode()&0o111 == 0 {
		return errors.New("not an executable file")
	}
	return nil
}

// A Candidate is one place a browser is looked for.
type Candidate struct {
	// Name says which browser it is: "Chromium", "Chrome for Testing
	// (Playwright's download)", "Google Chrome Beta", ...
	Name string
	// Path is the binary. For a download kept in one folder per version,
	// the version's folder is a * (Find tries the newest first).
	Path string
	// LoadsExtension is false for Google Chrome itself: since version 137
	// its builds ignore --load-extension, so the browser would start
	// without the cdprelay extension and never connect. Chromium, Chrome
	// for Testing and Edge load it.
	LoadsExtension bool

	// For a download: Path is dir/<a name with prefix>/rest.
	dir, prefix, rest string
}

// Find returns the browser binary to use: explicit if non-empty, else
// $CHROME_PATH, else the first of this platform's Candidates that is
// installed and loads the cdprelay extension.
func Find(explicit string) (string, error) { return FindOn(ThisHost(), explicit) }

// FindOn is Find on h.
func FindOn(h Host, explicit string) (string, error) {
	for _, p := range []string{explicit, h.Getenv("CHROME_PATH")} {
		if p == "" {
			continue
		}
		if err := h.Check(p); err != nil {
			return "", fmt.Errorf("chromium %s: %w", p, err)
		}
		return p, nil
	}
	cands := Candidates(h)
	var branded []string
	for _, c := range cands {
		for _, p := range c.paths(h) {
			if h.Check(p) != nil {
				continue
			}
			if c.LoadsExtension {
				return p, nil
			}
			branded = append(branded, p)
		}
	}
	return "", &NotFoundError{GOOS: h.GOOS, Looked: cands, Branded: branded}
}

// IsGoogleChrome reports whether path looks like Google Chrome itself (any
// channel, any platform; not Chrome for Testing), which ignores
// --load-extension: a CHROME_PATH or --chrome may name it.
func IsGoogleChrome(path string) bool {
	p := strings.ToLower(strings.ReplaceAll(path, `\`, "/"))
	if strings.Contains(p, "for testing") {
		return false
	}
	for _, mark := range []string{"/google chrome", "/google/chrome", "/opt/google/chrome", "google-chrome"} {
		if strings.Contains(p, mark) {
			return true
		}
	}
	return false
}

// paths are the binaries c names on h, the newest version first.
func (c Candidate) paths(h Host) []string {
	if c.dir == "" {
		return []string{c.Path}
	}
	var versions []string
	for _, name := range h.ReadDir(c.dir) {
		if strings.HasPrefix(name, c.prefix) {
			versions = append(versions, name)
		}
	}
	slices.SortFunc(versions, func(a, b string) int {
		return compareVersions(b[len(c.prefix):], a[len(c.prefix):])
	})
	out := make([]string, len(versions))
	for i, v := range versions {
		out[i] = join(h.GOOS, c.dir, v, c.rest)
	}
	return out
}

// compareVersions orders "139.0.7258.66" and "1169" by their numbers, a
// name that is not a version after every one that is.
func compareVersions(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		x, errX := strconv.Atoi(as[i])
		y, errY := strconv.Atoi(bs[i])
		switch {
		case errX != nil || errY != nil:
			if errX == nil {
				return 1
			}
			if errY == nil {
				return -1
			}
			return strings.Compare(as[i], bs[i])
		case x != y:
			return cmp.Compare(x, y)
		}
	}
	return cmp.Compare(len(as), len(bs))
}

// NotFoundError is Find's error when nothing fits: every place it looked,
// and the Google Chrome it found but cannot use.
type NotFoundError struct {
	GOOS    string
	Looked  []Candidate
	Branded []string // Google Chrome binaries found
}

func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

func (e *NotFoundError) Error() string {
	var b strings.Builder
	b.WriteString("no browser found that loads the cdprelay extension. Looked at CHROME_PATH (not set) and:\n")
	width := 0
	for _, c := range e.Looked {
		width = max(width, len(c.Name))
	}
	for _, c := range e.Looked {
		fmt.Fprintf(&b, "  %-*s  %s\n", width, c.Name, c.Path)
	}
	for _, p := range e.Branded {
		fmt.Fprintf(&b, "Found Google Chrome at %s, but Google Chrome (137 and later) ignores --load-extension, so it would start without the extension.\n", p)
	}
	b.WriteString("Install one of these (it is then found by itself), or point CHROME_PATH or --chrome at a Chromium:\n")
	for _, hint := range installHints(e.GOOS) {
		fmt.Fprintf(&b, "  %s\n", hint)
	}
	b.WriteString("Or leave --launch out and share tabs from your own Chrome: load the cdprelay extension there (chrome://extensions, Developer mode, Load unpacked).")
	return b.String()
}

func installHints(goos string) []string {
	pw := "Chrome for Testing: npx playwright install chromium"
	switch goos {
	case "darwin":
		return []string{"Chromium: brew install --cask chromium", pw}
	case "windows":
		return []string{"Microsoft Edge (part of Windows; reinstall it from microsoft.com/edge)", pw}
	case "linux":
		return []string{"Chromium: sudo apt-get install chromium (Debian), or your distribution's chromium package", pw}
	}
	return []string{"Chromium, from your system's packages", pw}
}

// join joins path elements with goos's separator, whatever the system
// Find runs on (a test builds Windows paths on Linux).
func join(goos string, elems ...string) string {
	if goos != "windows" {
		return path.Join(elems...)
	}
	parts := make([]string, 0, len(elems))
	for i, e := range elems {
		e = strings.ReplaceAll(e, "/", `\`)
		if i > 0 {
			e = strings.TrimLeft(e, `\`)
		}
		if e = strings.TrimRight(e, `\`); e != "" {
			parts = append(parts, e)
		}
	}
	return strings.Join(parts, `\`)
}
