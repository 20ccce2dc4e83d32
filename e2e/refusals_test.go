package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/internal/testenv"
	"github.com/cdprelay/cdprelay/relay"
)

// refusalBound is how soon an action on a tab automation may not act on
// must fail, with its own timeout set to 30 s: a refusal a client takes
// for a passing state (and retries until its timeout) takes 30 s.
const refusalBound = 5 * time.Second

// TestRefusalsFailFast: on a read-only site and on a tab a person holds
// from the live view, every action of Playwright and Puppeteer fails at
// once with the tier's or the person's reason, rather than waiting out its
// timeout, and none of them acts. (Playwright's tap needs a context with
// touch, which a connected browser's default one is not; its uncheck of a
// box that is not checked has nothing to do. Puppeteer's locators retry
// every error until their timeout, by design.)
func TestRefusalsFailFast(t *testing.T) {
	requireEnv(t)
	cfg := tierConfig()
	cfg.UploadsDir = []string{t.TempDir()} // so that the tier refuses an upload, not the upload rule
	setPolicy(t, cfg)
	for _, client := range []struct {
		name    string
		actions []string
	}{
		{"playwright", []string{"click", "dblclick", "hover", "check", "fill", "type", "press", "focus", "selectOption", "setInputFiles", "dragTo", "locator.click"}},
		{"puppeteer", []string{"click", "type", "hover", "select", "focus", "uploadFile", "keyboard.press", "mouse.click"}},
	} {
		t.Run(client.name, func(t *testing.T) {
			ctx := testCtx(t, 4*time.Minute)
			newPerson(ctx, t)
			a := newAttacker(ctx, t)
			// The person holds a tab on a full site.
			heldURL := siteURL(env.Pages.Main, newMark(), false)
			target, _ := a.newTab(heldURL)
			inst := env.Relay.Default()
			tabID := tabIDOf(t, target)
			if err := inst.TakeControl(tabID, "person"); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { inst.ReleaseControl(tabID, "person") })
			a.c.Close() // the scripts are the clients now

			roURL := siteURL(env.Pages.Other, newMark(), false)
			dir := cfg.UploadsDir[0]
			upload := filepath.Join(dir, "upload.txt")
			os.WriteFile(upload, []byte("a file to upload\n"), 0o600)
			actsBefore := env.Pages.HitsUnder(env.Pages.Other, "/tier/act/") + env.Pages.HitsUnder(env.Pages.Main, "/tier/act/")
			mark := env.Audit.Len()
			nctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
			defer cancel()
			out, err := testenv.Node(nctx, "refusals.mjs", nil, client.name, env.HTTPEndpoint(), roURL, heldURL, upload, dir)
			t.Logf("refusals.mjs:\n%s", out)
			for _, ev := range env.Audit.Since(mark) {
				if ev.Outcome == relay.OutcomeDenied {
					t.Logf("refused: %s (%s) %.160s", ev.Method, ev.Rule, ev.Detail)
				}
			}
			if err != nil {
				t.Fatalf("refusals.mjs: %v", err)
			}
			b, err := os.ReadFile(filepath.Join(dir, "report.json"))
			if err != nil {
				t.Fatal(err)
			}
			var report map[string]json.RawMessage
			json.Unmarshal(b, &report)
			for _, group := range []struct{ name, reason string }{
				{"readOnly", "read-only"},
				{"held", "a person has taken control of this tab"},
			} {
				var got map[string]struct {
					OK    bool
					MS    int64
					Error string
				}
				json.Unmarshal(report[group.name], &got)
				for _, action := range client.actions {
					r, ok := got[action]
					switch {
					case !ok:
						t.Errorf("%s %s was not tried", group.name, action)
					case r.OK:
						t.Errorf("%s %s: the client reports success", group.name, action)
					case time.Duration(r.MS)*time.Millisecond > refusalBound:
						t.Errorf("%s %s failed after %d ms (its timeout 30 s), not at once: %s", group.name, action, r.MS, r.Error)
					case !strings.Contains(r.Error, group.reason):
						t.Errorf("%s %s failed without the reason (%q): %s", group.name, action, group.reason, r.Error)
					}
				}
				var after string
				json.Unmarshal(report[group.name+"After"], &after)
				if after != "untouched" {
					t.Errorf("the %s page changed: it reads %q", group.name, after)
				}
			}
			if n := env.Pages.HitsUnder(env.Pages.Other, "/tier/act/") + env.Pages.HitsUnder(env.Pages.Main, "/tier/act/") - actsBefore; n != 0 {
				t.Errorf("%d requests of an act reached a site", n)
			}
		})
	}
}
