package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/extension"
	"github.com/cdprelay/cdprelay/internal/cdptest"
	"github.com/cdprelay/cdprelay/internal/chromium"
	"github.com/cdprelay/cdprelay/relay"
	"github.com/cdprelay/cdprelay/viewer"
)

// debianPolicies is where Debian's Chromium reads the machine's mandatory
// policies: every JSON file there, for every profile (a --user-data-dir
// one too), read again a few seconds after the folder changes.
const debianPolicies = "/etc/chromium/policies/managed"

// TestManagedPolicy makes the browser a managed one for a moment: a policy
// file keeps our extension off one site (ExtensionSettings,
// runtime_blocked_hosts), which Chromium enforces on chrome.debugger. A
// Playwright client that goes there, opens a tab there or follows a link
// there is told in words which policy and where to look (its error, its
// console); so are the live view (the page, in a second browser), the
// extension's page and the audit log.
//
// The policy file is the machine's, read by every Chromium on it: it exists
// only while this package holds the machine-wide browser lock (TestMain),
// names a site no other test visits (127.0.0.7), and is removed when the
// test ends.
func TestManagedPolicy(t *testing.T) {
	requireEnv(t)
	if env.BrowserWS == "" {
		t.Fatal("the environment has no browser debugging port")
	}
	skipUnlessPolicyFiles(t)

	ln, err := net.Listen("tcp", "127.0.0.7:0")
	if err != nil {
		t.Skipf("no loopback address 127.0.0.7 here: %v", err)
	}
	blocked := "http://" + ln.Addr().String()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!doctype html><title>Blocked site</title><p>a site the policy keeps extensions off</p>")
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	file := filepath.Join(debianPolicies, fmt.Sprintf("zz-cdprelay-e2e-%d.json", os.Getpid()))
	policy, _ := json.Marshal(map[string]any{"ExtensionSettings": map[string]any{
		extension.ID: map[string]any{"runtime_blocked_hosts": []string{"*://127.0.0.7"}},
	}})
	made := madeDirs(debianPolicies)
	if err := os.MkdirAll(debianPolicies, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// The folders this test made go too, once empty.
		for _, d := range made {
			os.Remove(d)
		}
	})
	// Once the file is gone (the cleanup below runs first), Chrome reads
	// its policies again: the tests after this one get a browser without
	// it.
	t.Cleanup(func() { reloadPolicies(t) })
	// The file goes in a cleanup of its own, registered before anything
	// else can fail, so that a failing step (one that ends the test
	// with t.Fatal, in a cleanup too) cannot leave it behind.
	t.Cleanup(func() {
		if err := os.Remove(file); err != nil && !os.IsNotExist(err) {
			t.Errorf("the policy file: %v", err)
		}
	})
	if err := os.WriteFile(file, policy, 0o644); err != nil {
		t.Fatal(err)
	}
	// Chrome reads a policy file written while it runs when its watch
	// says so, which takes from seconds to most of a minute; the person's
	// "Reload policies" (chrome://policy) reads it now.
	reloadPolicies(t)
	t.Cleanup(func() { closePersonTabs(t, blocked) })

	vs, err := viewer.New(viewer.Config{Source: viewer.FromRelay(env.Relay), Interactive: asThePerson})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(vs)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		vs.Close(ctx)
		hs.Close()
	})

	mark := env.Audit.Len()
	runNode(t, "managed.mjs", hs.URL+"/", env.HTTPEndpoint(), env.Pages.Main, blocked)

	audited := false
	for _, ev := range env.Audit.Since(mark) {
		if ev.Kind == relay.KindAttach && ev.Outcome == relay.OutcomeDenied && strings.Contains(ev.Detail, "ExtensionSettings") && strings.Contains(ev.Detail, "chrome://policy") {
			audited = true
		}
	}
	if !audited {
		t.Errorf("no audit record names the policy: %+v", env.Audit.Since(mark))
	}
	text := connectPageText(t, "#refused")
	if !strings.Contains(text, "runtime_blocked_hosts") || !strings.Contains(text, "chrome://policy") || !strings.Contains(text, "127.0.0.7") {
		t.Errorf("the extension's page says: %q", text)
	} else {
		t.Logf("ok - the extension's page: %s", text)
	}
	assertTabsKept(t)
}

// skipUnlessPolicyFiles skips where the test cannot make the browser a
// managed one: a machine policy file of Debian's Chromium needs Linux, that
// Chromium, and root.
func skipUnlessPolicyFiles(t *testing.T) {
	t.Helper()
	path, err := chromium.Find("")
	switch {
	case runtime.GOOS != "linux":
		t.Skip("machine policies are files only on Linux")
	case err != nil || !strings.HasPrefix(path, "/usr/lib/chromium/"):
		t.Skipf("the browser (%s) is not Debian's Chromium, whose policies are files in %s", path, debianPolicies)
	case os.Geteuid() != 0:
		t.Skipf("writing %s needs root", debianPolicies)
	}
}

// removeStalePolicies removes the policy files a run of TestManagedPolicy
// killed before its cleanups (a test binary's timeout) left behind. Only
// the holder of the browser lock writes one, so any found by the holder is
// stale.
func removeStalePolicies() {
	old, _ := filepath.Glob(filepath.Join(debianPolicies, "zz-cdprelay-e2e-*.json"))
	for _, f := range old {
		os.Remove(f)
	}
}

// madeDirs lists the folders MkdirAll(dir) would make, deepest first.
func madeDirs(dir string) []string {
	var made []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil || d == filepath.Dir(d) {
			return made
		}
		made = append(made, d)
	}
}

// closePersonTabs closes, as the person would, every tab whose URL starts
// with origin.
func closePersonTabs(t *testing.T, origin string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	person := dialOrFail(ctx, t, env.BrowserWS)
	defer person.Close()
	res := callOrFail(ctx, t, person, "", "Target.getTargets", nil)
	var r struct {
		TargetInfos []struct{ TargetID, Type, URL string }
	}
	json.Unmarshal(res, &r)
	for _, ti := range r.TargetInfos {
		if ti.Type == "page" && strings.HasPrefix(ti.URL, origin) {
			person.Call(ctx, "", "Target.closeTarget", map[string]any{"targetId": ti.TargetID})
		}
	}
}

// personPage opens url in a tab of the person's own, as they would, and
// attaches to it; done closes the tab and the connection.
func personPage(ctx context.Context, t *testing.T, url string) (person *cdptest.Client, sid string, done func()) {
	t.Helper()
	person = dialOrFail(ctx, t, env.BrowserWS)
	res := callOrFail(ctx, t, person, "", "Target.createTarget", map[string]any{"url": url})
	var page struct{ TargetID string }
	json.Unmarshal(res, &page)
	done = func() {
		person.Call(ctx, "", "Target.closeTarget", map[string]any{"targetId": page.TargetID})
		person.Close()
	}
	res, err := person.Call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": page.TargetID, "flatten": true})
	if err != nil {
		done()
		t.Fatalf("attaching to %s: %v", url, err)
	}
	var att struct{ SessionID string }
	json.Unmarshal(res, &att)
	return person, att.SessionID, done
}

// reloadButton clicks chrome://policy's "Reload policies", in the
// toolbar's shadow tree, once the page has loaded, and says whether it
// did.
const reloadButton = `(() => {
	const deep = (root) => {
		for (const e of root.querySelectorAll('*')) {
			if (e.id === 'reload-policies') return e;
			const in_ = e.shadowRoot && deep(e.shadowRoot);
			if (in_) return in_;
		}
		return null;
	};
	if (document.readyState !== 'complete') return false;
	const b = deep(document);
	if (!b) return false;
	b.click();
	return true;
})()`

// reloadPolicies has Chrome read its policies again, as the person's
// "Reload policies" on chrome://policy does: Chrome's own watch of the
// policy folder may take most of a minute, or never come. Chrome reads
// them a few seconds after a click.
func reloadPolicies(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	person, sid, done := personPage(ctx, t, "chrome://policy")
	defer done()
	// Clicked a few times, a second apart: a click that comes before the
	// page has wired its button does nothing, and a reload more is
	// harmless.
	clicks := 0
	for clicks < 5 {
		res, err := person.Call(ctx, sid, "Runtime.evaluate", map[string]any{"expression": reloadButton, "returnByValue": true})
		var r struct{ Result struct{ Value bool } }
		if err == nil && json.Unmarshal(res, &r) == nil && r.Result.Value {
			clicks++
			time.Sleep(time.Second)
			continue
		}
		if ctx.Err() != nil {
			t.Fatalf("chrome://policy's Reload policies was not found: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// connectPageText opens the extension's page as the person and returns
// the text of selector once it has some.
func connectPageText(t *testing.T, selector string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	person, sid, done := personPage(ctx, t, "chrome-extension://"+extension.ID+"/connect.html")
	defer done()
	for {
		res, err := person.Call(ctx, sid, "Runtime.evaluate", map[string]any{
			"expression": "(document.querySelector(" + jsString(selector) + ") || {}).textContent || ''", "returnByValue": true,
		})
		var r struct{ Result struct{ Value string } }
		if err == nil && json.Unmarshal(res, &r) == nil && r.Result.Value != "" {
			return r.Result.Value
		}
		if ctx.Err() != nil {
			return ""
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
