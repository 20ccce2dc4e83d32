// Package e2e holds end-to-end tests: real headless Chromium with the
// cdprelay extension, the relay, and real CDP clients.
package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/denylist"
	"github.com/cdprelay/cdprelay/internal/relaypolicy"
	"github.com/cdprelay/cdprelay/internal/testenv"
	"github.com/cdprelay/cdprelay/relay"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	code := func() int {
		if testenv.Require(true) != "" {
			// Each test reports the skip (or, in CI, the failure).
			return m.Run()
		}
		// The other end-to-end packages with browsers (e2e/team) wait
		// for this one, and this one for them.
		unlock, err := testenv.LockBrowsers()
		if err != nil {
			println("e2e: lock:", err.Error())
			return 1
		}
		defer unlock()
		removeStalePolicies()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		// The browser's own port lets a test act as the person (pick_test.go);
		// the stand-ins are the person's other extensions (realchrome_test.go).
		env, err = testenv.Start(ctx, testenv.Options{DebugPort: true, StandIns: true})
		if err != nil {
			println("e2e: start:", err.Error())
			return 1
		}
		defer env.Close()
		if err := startBasePolicy(); err != nil {
			println("e2e:", err.Error())
			return 1
		}
		code := m.Run()
		if code != 0 && env.LogPath != "" {
			b, _ := os.ReadFile(env.LogPath)
			println("e2e: relay and browser log (" + env.LogPath + "):\n" + tail(string(b), 150))
		}
		return code
	}()
	os.Exit(code)
}

// basePolicy is the policy every test starts from and goes back to: none
// (the default policy), or with CDPRELAY_E2E_ALLOWED_DOMAINS the URL fence
// that --allowed-domains sets, so that the clients' tests run with the
// navigation backstop and the first-request rules on.
var basePolicy relay.Policy

func startBasePolicy() error {
	hosts := os.Getenv("CDPRELAY_E2E_ALLOWED_DOMAINS")
	if hosts == "" {
		return nil
	}
	p, err := denylist.Compile(denylist.Config{AllowedHosts: strings.Split(hosts, ",")}, nil)
	if err != nil {
		return err
	}
	basePolicy = relaypolicy.Adapter{P: p}
	env.Relay.SetPolicy(basePolicy)
	return nil
}

// resetPolicy puts the base policy back.
func resetPolicy() { env.Relay.SetPolicy(basePolicy) }

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func requireEnv(t *testing.T) {
	t.Helper()
	testenv.SkipOrFail(t, true)
	if env == nil {
		t.Fatal("end-to-end environment did not start")
	}
}

func runNode(t *testing.T, script string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	out, err := testenv.Node(ctx, script, nil, args...)
	t.Logf("%s:\n%s", script, out)
	if err != nil {
		t.Fatalf("%s: %v", script, err)
	}
	return out
}

func TestPlaywrightHTTPEndpoint(t *testing.T) {
	requireEnv(t)
	runNode(t, "playwright.mjs", env.HTTPEndpoint(), env.Pages.Main, env.Pages.Other)
	assertTabsKept(t)
}

func TestPlaywrightWSEndpoint(t *testing.T) {
	requireEnv(t)
	runNode(t, "playwright.mjs", env.WSEndpoint(), env.Pages.Main, env.Pages.Other)
	assertTabsKept(t)
}

// assertTabsKept checks that browser.close() left the person's tabs open
// and released: still shared, no debugger attached, no client.
func assertTabsKept(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := env.Relay.Default().Status()
		attached := 0
		for _, tab := range st.Tabs {
			if tab.Attached {
				attached++
			}
		}
		if len(st.Tabs) >= 1 && attached == 0 && !st.Client {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after browser.close(): %d tabs, %d attached, client=%v", len(st.Tabs), attached, st.Client)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestPlaywrightChildSessionsRouted(t *testing.T) {
	requireEnv(t)
	before := env.Relay.Default().Status().ChildSessions
	runNode(t, "playwright.mjs", env.HTTPEndpoint(), env.Pages.Main, env.Pages.Other)
	after := env.Relay.Default().Status().ChildSessions
	if after <= before {
		t.Fatalf("no child session was routed (before %d, after %d): the cross-site frame did not get its own session", before, after)
	}
}

func TestTabOfferedAgainAfterTargetClosed(t *testing.T) {
	requireEnv(t)
	runNode(t, "reoffer.mjs", env.HTTPEndpoint(), env.Pages.Main)
	assertTabsKept(t)
}

func TestPuppeteerBrowserURL(t *testing.T) {
	requireEnv(t)
	runNode(t, "puppeteer.mjs", "browserURL", env.HTTPEndpoint(), env.Pages.Main)
	assertTabsKept(t)
}

func TestPuppeteerBrowserWSEndpoint(t *testing.T) {
	requireEnv(t)
	runNode(t, "puppeteer.mjs", "browserWSEndpoint", env.WSEndpoint(), env.Pages.Main)
	assertTabsKept(t)
}

func TestChromeRemoteInterface(t *testing.T) {
	requireEnv(t)
	_, port, _ := strings.Cut(env.Addr, ":")
	runNode(t, "cri.mjs", port, env.Pages.Main)
	assertTabsKept(t)
}

// TestPlaywrightDownloadAndSessions: page.waitForEvent("download") through
// the extension path, download.path() and saveAs() with the file's bytes,
// and the person's copy untouched in the browser's download folder;
// Playwright's raw CDP sessions.
func TestPlaywrightDownloadAndSessions(t *testing.T) {
	requireEnv(t)
	runNode(t, "playwright-extras.mjs", env.HTTPEndpoint(), env.Pages.Main)
	assertPersonDownloads(t, "report.csv")
	assertTabsKept(t)
}

// assertPersonDownloads checks that the person's download folder holds
// exactly the files Chrome saved there (the relay copies, never moves),
// each with the downloaded bytes, and empties it for the next test.
func assertPersonDownloads(t *testing.T, names ...string) {
	t.Helper()
	ents, err := os.ReadDir(env.Downloads)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
		p := filepath.Join(env.Downloads, e.Name())
		if b, err := os.ReadFile(p); err != nil || string(b) != testenv.DownloadBody {
			t.Errorf("the person's %s: %q, %v", e.Name(), b, err)
		}
		os.Remove(p)
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Fatalf("the person's download folder holds %v, want %v", got, names)
	}
}

// logDownloadRecords logs the audit records of downloads since mark: what
// the relay did with each file, and why.
func logDownloadRecords(t *testing.T, mark int) {
	for _, ev := range env.Audit.Since(mark) {
		if ev.Kind == relay.KindDownload {
			t.Logf("audit: %s %s", ev.Outcome, ev.Detail)
		}
	}
}

// TestPuppeteerDownloadFolder: Puppeteer's downloadBehavior folder gets the
// file of a download the automation clicks; a folder outside the ones the
// relay allows is refused; the person's copy stays where their Chrome put
// it, and a client that names the browser's own download folder (the
// person's, inside the allowed folders here) gets nothing written there.
func TestPuppeteerDownloadFolder(t *testing.T) {
	requireEnv(t)
	folder := filepath.Join(t.TempDir(), "puppeteer-downloads")
	mark := env.Audit.Len()
	defer logDownloadRecords(t, mark)
	runNode(t, "puppeteer-download.mjs", env.HTTPEndpoint(), env.Pages.Main, folder, env.Downloads)
	// The second download, into the browser's own folder, is only the
	// one Chrome saved there (under the next free name).
	assertPersonDownloads(t, "report (1).csv", "report.csv")
	assertTabsKept(t)
}
