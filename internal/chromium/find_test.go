package chromium

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
)

// fakeHost is a machine of goos whose only files are files.
func fakeHost(goos, home string, env map[string]string, files ...string) Host {
	sep := "/"
	if goos == "windows" {
		sep = `\`
	}
	set := map[string]bool{}
	for _, f := range files {
		set[f] = true
	}
	return Host{
		GOOS:   goos,
		Getenv: func(k string) string { return env[k] },
		Home:   home,
		Check: func(p string) error {
			if set[p] {
				return nil
			}
			return fs.ErrNotExist
		},
		ReadDir: func(dir string) []string {
			seen := map[string]bool{}
			var names []string
			for f := range set {
				rest, ok := strings.CutPrefix(f, dir+sep)
				if !ok {
					continue
				}
				name, _, _ := strings.Cut(rest, sep)
				if !seen[name] {
					seen[name] = true
					names = append(names, name)
				}
			}
			return names
		},
	}
}

var winEnv = map[string]string{
	"ProgramFiles":      `C:\Program Files`,
	"ProgramFiles(x86)": `C:\Program Files (x86)`,
	"LOCALAPPDATA":      `C:\Users\ada\AppData\Local`,
}

const (
	macChrome = "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome"
	macCfT    = "Google Chrome for Testing.app/Contents/MacOS/Google Chrome for Testing"
)

func TestFind(t *testing.T) {
	tests := []struct {
		name     string
		goos     string
		home     string
		env      map[string]string
		explicit string
		files    []string
		want     string
		// wantErr are pieces of the error, when one is expected.
		wantErr []string
	}{
		{
			name: "linux: Debian's binary before its wrapper", goos: "linux", home: "/home/ada",
			files: []string{"/usr/bin/chromium", "/usr/lib/chromium/chromium", "/opt/google/chrome/chrome"},
			want:  "/usr/lib/chromium/chromium",
		},
		{
			name: "linux: CHROME_PATH first", goos: "linux", home: "/home/ada",
			env:   map[string]string{"CHROME_PATH": "/opt/cft/chrome"},
			files: []string{"/usr/lib/chromium/chromium", "/opt/cft/chrome"},
			want:  "/opt/cft/chrome",
		},
		{
			name: "linux: --chrome before CHROME_PATH", goos: "linux", home: "/home/ada",
			env: map[string]string{"CHROME_PATH": "/opt/cft/chrome"}, explicit: "/opt/mine/chrome",
			files: []string{"/opt/cft/chrome", "/opt/mine/chrome"},
			want:  "/opt/mine/chrome",
		},
		{
			name: "linux: a CHROME_PATH that is not there is an error, not a search", goos: "linux", home: "/home/ada",
			env:     map[string]string{"CHROME_PATH": "/opt/gone/chrome"},
			files:   []string{"/usr/lib/chromium/chromium"},
			wantErr: []string{"/opt/gone/chrome"},
		},
		{
			name: "linux: Playwright's newest download", goos: "linux", home: "/home/ada",
			files: []string{
				"/home/ada/.cache/ms-playwright/chromium-999/chrome-linux/chrome",
				"/home/ada/.cache/ms-playwright/chromium-1200/chrome-linux64/chrome",
				"/home/ada/.cache/ms-playwright/chromium_headless_shell-1300/chrome-linux/headless_shell",
				"/opt/google/chrome/chrome",
			},
			want: "/home/ada/.cache/ms-playwright/chromium-1200/chrome-linux64/chrome",
		},
		{
			name: "linux: PLAYWRIGHT_BROWSERS_PATH", goos: "linux", home: "/home/ada",
			env:   map[string]string{"PLAYWRIGHT_BROWSERS_PATH": "/srv/pw"},
			files: []string{"/srv/pw/chromium-1200/chrome-linux64/chrome"},
			want:  "/srv/pw/chromium-1200/chrome-linux64/chrome",
		},
		{
			name: "linux: Puppeteer's newest Chrome for Testing", goos: "linux", home: "/home/ada",
			files: []string{
				"/home/ada/.cache/puppeteer/chrome/linux-139.0.7258.66/chrome-linux64/chrome",
				"/home/ada/.cache/puppeteer/chrome/linux-140.0.7339.5/chrome-linux64/chrome",
			},
			want: "/home/ada/.cache/puppeteer/chrome/linux-140.0.7339.5/chrome-linux64/chrome",
		},
		{
			name: "linux: Edge before Google Chrome", goos: "linux", home: "/home/ada",
			files: []string{"/usr/bin/google-chrome-stable", "/opt/microsoft/msedge/msedge"},
			want:  "/opt/microsoft/msedge/msedge",
		},
		{
			name: "linux: only Google Chrome, which ignores --load-extension", goos: "linux", home: "/home/ada",
			files: []string{"/opt/google/chrome/chrome"},
			wantErr: []string{
				"Found Google Chrome at /opt/google/chrome/chrome",
				"/usr/lib/chromium/chromium", "/home/ada/.cache/ms-playwright/chromium-*/chrome-linux64/chrome",
				"apt-get install chromium", "npx playwright install chromium", "Load unpacked",
			},
		},
		{
			name: "linux: nothing at all", goos: "linux", home: "/home/ada",
			wantErr: []string{"CHROME_PATH (not set)", "/usr/lib/chromium/chromium", "/opt/microsoft/msedge/msedge", "apt-get install chromium"},
		},
		{
			name: "darwin: Chromium in ~/Applications before Google Chrome", goos: "darwin", home: "/Users/ada",
			files: []string{macChrome, "/Users/ada/Applications/Chromium.app/Contents/MacOS/Chromium"},
			want:  "/Users/ada/Applications/Chromium.app/Contents/MacOS/Chromium",
		},
		{
			name: "darwin: Chrome for Testing first", goos: "darwin", home: "/Users/ada",
			files: []string{"/Applications/Chromium.app/Contents/MacOS/Chromium", "/Applications/" + macCfT},
			want:  "/Applications/" + macCfT,
		},
		{
			name: "darwin: Playwright's download, Apple silicon", goos: "darwin", home: "/Users/ada",
			files: []string{macChrome, "/Users/ada/Library/Caches/ms-playwright/chromium-1200/chrome-mac-arm64/" + macCfT},
			want:  "/Users/ada/Library/Caches/ms-playwright/chromium-1200/chrome-mac-arm64/" + macCfT,
		},
		{
			name: "darwin: Puppeteer's download, Intel", goos: "darwin", home: "/Users/ada",
			files: []string{"/Users/ada/.cache/puppeteer/chrome/mac-140.0.7339.5/chrome-mac-x64/" + macCfT},
			want:  "/Users/ada/.cache/puppeteer/chrome/mac-140.0.7339.5/chrome-mac-x64/" + macCfT,
		},
		{
			name: "darwin: Edge Beta", goos: "darwin", home: "/Users/ada",
			files: []string{"/Applications/Google Chrome Canary.app/Contents/MacOS/Google Chrome Canary", "/Applications/Microsoft Edge Beta.app/Contents/MacOS/Microsoft Edge Beta"},
			want:  "/Applications/Microsoft Edge Beta.app/Contents/MacOS/Microsoft Edge Beta",
		},
		{
			name: "darwin: only Google Chrome and Canary", goos: "darwin", home: "/Users/ada",
			files: []string{macChrome, "/Users/ada/Applications/Google Chrome Canary.app/Contents/MacOS/Google Chrome Canary"},
			wantErr: []string{
				"Found Google Chrome at " + macChrome,
				"Found Google Chrome at /Users/ada/Applications/Google Chrome Canary.app",
				"/Applications/Chromium.app/Contents/MacOS/Chromium",
				"/Users/ada/Applications/Chromium.app/Contents/MacOS/Chromium",
				"brew install --cask chromium",
			},
		},
		{
			name: "windows: Edge where Windows puts it", goos: "windows", home: `C:\Users\ada`, env: winEnv,
			files: []string{`C:\Program Files (x86)\Microsoft\Edge\Application\msedge.exe`, `C:\Program Files\Google\Chrome\Application\chrome.exe`},
			want:  `C:\Program Files (x86)\Microsoft\Edge\Application\msedge.exe`,
		},
		{
			name: "windows: Chromium for one person before Edge", goos: "windows", home: `C:\Users\ada`, env: winEnv,
			files: []string{`C:\Program Files (x86)\Microsoft\Edge\Application\msedge.exe`, `C:\Users\ada\AppData\Local\Chromium\Application\chrome.exe`},
			want:  `C:\Users\ada\AppData\Local\Chromium\Application\chrome.exe`,
		},
		{
			name: "windows: Playwright's download", goos: "windows", home: `C:\Users\ada`, env: winEnv,
			files: []string{`C:\Users\ada\AppData\Local\ms-playwright\chromium-1200\chrome-win64\chrome.exe`},
			want:  `C:\Users\ada\AppData\Local\ms-playwright\chromium-1200\chrome-win64\chrome.exe`,
		},
		{
			name: "windows: Puppeteer's download", goos: "windows", home: `C:\Users\ada`, env: winEnv,
			files: []string{`C:\Users\ada\.cache\puppeteer\chrome\win64-140.0.7339.5\chrome-win64\chrome.exe`},
			want:  `C:\Users\ada\.cache\puppeteer\chrome\win64-140.0.7339.5\chrome-win64\chrome.exe`,
		},
		{
			name: "windows: Edge Canary is one person's", goos: "windows", home: `C:\Users\ada`, env: winEnv,
			files: []string{`C:\Users\ada\AppData\Local\Microsoft\Edge SxS\Application\msedge.exe`},
			want:  `C:\Users\ada\AppData\Local\Microsoft\Edge SxS\Application\msedge.exe`,
		},
		{
			name: "windows: only Google Chrome Canary", goos: "windows", home: `C:\Users\ada`, env: winEnv,
			files: []string{`C:\Users\ada\AppData\Local\Google\Chrome SxS\Application\chrome.exe`},
			wantErr: []string{
				`Found Google Chrome at C:\Users\ada\AppData\Local\Google\Chrome SxS\Application\chrome.exe`,
				`C:\Program Files (x86)\Microsoft\Edge\Application\msedge.exe`,
				`C:\Program Files\Chromium\Application\chrome.exe`,
				"Microsoft Edge",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FindOn(fakeHost(tt.goos, tt.home, tt.env, tt.files...), tt.explicit)
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("found %s, want an error", got)
				}
				for _, piece := range tt.wantErr {
					if !strings.Contains(err.Error(), piece) {
						t.Errorf("the error does not say %q:\n%v", piece, err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("found %s, want %s", got, tt.want)
			}
		})
	}
}

func TestNotFoundIsErrNotFound(t *testing.T) {
	_, err := FindOn(fakeHost("linux", "/home/ada", nil), "")
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("%v is not ErrNotFound", err)
	}
	// CHROME_PATH that is not there is the person's mistake to fix, not a
	// missing browser.
	_, err = FindOn(fakeHost("linux", "/home/ada", map[string]string{"CHROME_PATH": "/nope"}), "")
	if err == nil || errors.Is(err, ErrNotFound) {
		t.Fatalf("a missing CHROME_PATH: %v", err)
	}
}

// TestCandidatesAbsolute: a folder the environment does not name leaves
// its places out, rather than looking for them relative to wherever the
// relay was started.
func TestCandidatesAbsolute(t *testing.T) {
	hosts := map[string]Host{
		"linux":               fakeHost("linux", "/home/ada", nil),
		"linux, no home":      fakeHost("linux", "", nil),
		"darwin":              fakeHost("darwin", "/Users/ada", nil),
		"darwin, no home":     fakeHost("darwin", "", nil),
		"windows":             fakeHost("windows", `C:\Users\ada`, winEnv),
		"windows, bare":       fakeHost("windows", "", nil),
		"windows, no LOCALAP": fakeHost("windows", `C:\Users\ada`, map[string]string{"ProgramFiles": `C:\Program Files`}),
	}
	for name, h := range hosts {
		cands := Candidates(h)
		if len(cands) == 0 && name != "windows, bare" {
			t.Errorf("%s: no candidates", name)
		}
		for _, c := range cands {
			abs := strings.HasPrefix(c.Path, "/")
			if h.GOOS == "windows" {
				abs = len(c.Path) > 3 && c.Path[1] == ':' && c.Path[2] == '\\'
			}
			if !abs {
				t.Errorf("%s: %s at %q is not absolute", name, c.Name, c.Path)
			}
			// Google Chrome, every channel, and nothing else.
			if strings.HasPrefix(c.Name, "Google Chrome") == c.LoadsExtension {
				t.Errorf("%s: %s at %s: LoadsExtension %v", name, c.Name, c.Path, c.LoadsExtension)
			}
		}
	}
}

var versionOrder = []string{"", "x", "1", "1.0", "1.2", "1.10", "9", "139.0.7258.66", "140.0.7339.5", "999", "1169", "1200"}

func TestCompareVersions(t *testing.T) {
	for i, a := range versionOrder {
		for j, b := range versionOrder {
			got := compareVersions(a, b)
			if (i < j) != (got < 0) || (i == j) != (got == 0) {
				t.Errorf("compareVersions(%q, %q) = %d", a, b, got)
			}
		}
	}
}

// FuzzCompareVersions: the order is one (antisymmetric), whatever folder
// names a cache holds, so sorting by it is sound.
func FuzzCompareVersions(f *testing.F) {
	for _, a := range versionOrder {
		for _, b := range versionOrder[:3] {
			f.Add(a, b)
		}
	}
	f.Add("-9223372036854775808", "9223372036854775807")
	f.Fuzz(func(t *testing.T, a, b string) {
		x, y := compareVersions(a, b), compareVersions(b, a)
		if (x < 0) != (y > 0) || (x == 0) != (y == 0) {
			t.Errorf("compareVersions(%q, %q) = %d but (%q, %q) = %d", a, b, x, b, a, y)
		}
	})
}

func TestIsGoogleChrome(t *testing.T) {
	// Every Google Chrome candidate, and no other, on every platform.
	for _, h := range []Host{fakeHost("linux", "/home/ada", nil), fakeHost("darwin", "/Users/ada", nil), fakeHost("windows", `C:\Users\ada`, winEnv)} {
		for _, c := range Candidates(h) {
			if got := IsGoogleChrome(c.Path); got != !c.LoadsExtension {
				t.Errorf("%s: IsGoogleChrome(%s) = %v", h.GOOS, c.Path, got)
			}
		}
	}
	for _, p := range []string{"/usr/bin/chromium", "/opt/cft/chrome-linux64/chrome", "/Applications/Google Chrome for Testing.app/Contents/MacOS/Google Chrome for Testing"} {
		if IsGoogleChrome(p) {
			t.Errorf("IsGoogleChrome(%s)", p)
		}
	}
	for _, p := range []string{"/usr/bin/google-chrome-beta", `D:\Apps\Google\Chrome\Application\chrome.exe`} {
		if !IsGoogleChrome(p) {
			t.Errorf("!IsGoogleChrome(%s)", p)
		}
	}
}
