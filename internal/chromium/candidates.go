package chromium

// Candidates are the places Find looks, in order, on h: the browsers that
// load the cdprelay extension first (Chromium, Chrome for Testing, Edge),
// Google Chrome last, only to say that it was found and cannot be used.
// Places under a folder the environment does not name are left out.
func Candidates(h Host) []Candidate {
	t := table{h: h}
	switch h.GOOS {
	case "darwin":
		t.darwin()
	case "windows":
		t.windows()
	default:
		t.linux()
	}
	return t.out
}

type table struct {
	h   Host
	out []Candidate
}

// add adds the binary at root/rest, if root is known.
func (t *table) add(name, root, rest string, loads bool) {
	if root == "" {
		return
	}
	t.out = append(t.out, Candidate{Name: name, Path: join(t.h.GOOS, root, rest), LoadsExtension: loads})
}

// download adds a browser kept in dir, one folder per version named
// prefix<version>, at rest within it.
func (t *table) download(name, dir, prefix, rest string) {
	if dir == "" {
		return
	}
	t.out = append(t.out, Candidate{
		Name: name, Path: join(t.h.GOOS, dir, prefix+"*", rest), LoadsExtension: true,
		dir: dir, prefix: prefix, rest: rest,
	})
}

// under is root/rest, or "" when root is not known.
func (t *table) under(root, rest string) string {
	if root == "" {
		return ""
	}
	return join(t.h.GOOS, root, rest)
}

func (t *table) home(rest string) string { return t.under(t.h.Home, rest) }

// env is the variable's value, or def when it is unset.
func (t *table) env(name, def string) string {
	if v := t.h.Getenv(name); v != "" {
		return v
	}
	return def
}

const (
	pwName = "Chrome for Testing (Playwright's)"
	ppName = "Chrome for Testing (Puppeteer's)"
	cft    = "Google Chrome for Testing"
)

// playwright is where `npx playwright install chromium` keeps its
// browsers: PLAYWRIGHT_BROWSERS_PATH, else ms-playwright in the
// platform's cache folder. "0" (browsers inside node_modules) is not
// looked into.
func (t *table) playwright(cache string) string {
	dir := t.env("PLAYWRIGHT_BROWSERS_PATH", t.under(cache, "ms-playwright"))
	if dir == "0" {
		return ""
	}
	return dir
}

// puppeteer is where Puppeteer keeps its Chrome for Testing.
func (t *table) puppeteer() string {
	return t.under(t.env("PUPPETEER_CACHE_DIR", t.home(".cache/puppeteer")), "chrome")
}

func (t *table) linux() {
	// Debian's /usr/bin/chromium is a wrapper script that adds flags of
	// its own, so the real binary comes first.
	t.add("Chromium (Debian)", "/usr/lib/chromium", "chromium", true)
	t.add("Chromium", "/usr/bin", "chromium", true)
	t.add("Chromium", "/usr/bin", "chromium-browser", true)
	pw := t.playwright(t.env("XDG_CACHE_HOME", t.home(".cache")))
	t.download(pwName, pw, "chromium-", "chrome-linux64/chrome")
	t.download(pwName, pw, "chromium-", "chrome-linux/chrome")
	t.download(ppName, t.puppeteer(), "linux-", "chrome-linux64/chrome")
	t.add("Microsoft Edge", "/opt/microsoft/msedge", "msedge", true)
	t.add("Microsoft Edge Beta", "/opt/microsoft/msedge-beta", "msedge", true)
	t.add("Microsoft Edge Dev", "/opt/microsoft/msedge-dev", "msedge", true)
	t.add("Google Chrome", "/opt/google/chrome", "chrome", false)
	t.add("Google Chrome", "/usr/bin", "google-chrome-stable", false)
	t.add("Google Chrome", "/usr/bin", "google-chrome", false)
	t.add("Google Chrome Beta", "/opt/google/chrome-beta", "chrome", false)
	t.add("Google Chrome Dev", "/opt/google/chrome-unstable", "chrome", false)
	t.add("Google Chrome Canary", "/opt/google/chrome-canary", "chrome", false)
}

func (t *table) darwin() {
	// An app is installed for everyone in /Applications, or for one
	// person in ~/Applications.
	apps := []string{"/Applications", t.home("Applications")}
	app := func(name, bundle string, loads bool) {
		for _, dir := range apps {
			t.add(name, dir, bundle+".app/Contents/MacOS/"+bundle, loads)
		}
	}
	app("Chrome for Testing", cft, true)
	app("Chromium", "Chromium", true)
	pw := t.playwright(t.home("Library/Caches"))
	t.download(pwName, pw, "chromium-", "chrome-mac-arm64/"+cft+".app/Contents/MacOS/"+cft)
	t.download(pwName, pw, "chromium-", "chrome-mac-x64/"+cft+".app/Contents/MacOS/"+cft)
	t.download(pwName, pw, "chromium-", "chrome-mac/Chromium.app/Contents/MacOS/Chromium")
	pp := t.puppeteer()
	t.download(ppName, pp, "mac_arm-", "chrome-mac-arm64/"+cft+".app/Contents/MacOS/"+cft)
	t.download(ppName, pp, "mac-", "chrome-mac-x64/"+cft+".app/Contents/MacOS/"+cft)
	app("Microsoft Edge", "Microsoft Edge", true)
	app("Microsoft Edge Beta", "Microsoft Edge Beta", true)
	app("Microsoft Edge Dev", "Microsoft Edge Dev", true)
	app("Microsoft Edge Canary", "Microsoft Edge Canary", true)
	app("Google Chrome", "Google Chrome", false)
	app("Google Chrome Beta", "Google Chrome Beta", false)
	app("Google Chrome Dev", "Google Chrome Dev", false)
	app("Google Chrome Canary", "Google Chrome Canary", false)
}

func (t *table) windows() {
	// Installed for everyone under Program Files (64- or 32-bit), or for
	// one person under their local application data.
	local := t.h.Getenv("LOCALAPPDATA")
	roots := []string{t.h.Getenv("ProgramFiles"), t.h.Getenv("ProgramFiles(x86)"), local}
	app := func(name, folder, exe string, loads bool) {
		for _, root := range roots {
			t.add(name, root, folder+`\Application\`+exe, loads)
		}
	}
	app("Chromium", "Chromium", "chrome.exe", true)
	pw := t.playwright(local)
	t.download(pwName, pw, "chromium-", `chrome-win64\chrome.exe`)
	t.download(pwName, pw, "chromium-", `chrome-win\chrome.exe`)
	t.download(ppName, t.puppeteer(), "win64-", `chrome-win64\chrome.exe`)
	app("Microsoft Edge", `Microsoft\Edge`, "msedge.exe", true)
	app("Microsoft Edge Beta", `Microsoft\Edge Beta`, "msedge.exe", true)
	app("Microsoft Edge Dev", `Microsoft\Edge Dev`, "msedge.exe", true)
	t.add("Microsoft Edge Canary", local, `Microsoft\Edge SxS\Application\msedge.exe`, true)
	app("Google Chrome", `Google\Chrome`, "chrome.exe", false)
	app("Google Chrome Beta", `Google\Chrome Beta`, "chrome.exe", false)
	app("Google Chrome Dev", `Google\Chrome Dev`, "chrome.exe", false)
	t.add("Google Chrome Canary", local, `Google\Chrome SxS\Application\chrome.exe`, false)
}
