package e2e

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/extension"
	"github.com/cdprelay/cdprelay/internal/cdptest"
)

// TestPickModeSharing plays the person in "pick" mode through our real
// extension: its connect page switches the mode and ticks a tab on and
// off, and a connected client sees the tab appear and go as a target. The
// connect page is driven through the browser's own debugging port, which
// only the test uses. The mode is "all" again at the end.
func TestPickModeSharing(t *testing.T) {
	requireEnv(t)
	if env.BrowserWS == "" {
		t.Fatal("the environment has no browser debugging port")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	person := dialOrFail(ctx, t, env.BrowserWS)
	defer person.Close()
	res := callOrFail(ctx, t, person, "", "Target.createTarget", map[string]any{"url": "chrome-extension://" + extension.ID + "/connect.html"})
	var page struct{ TargetID string }
	json.Unmarshal(res, &page)
	defer callOrFail(ctx, t, person, "", "Target.closeTarget", map[string]any{"targetId": page.TargetID})
	res = callOrFail(ctx, t, person, "", "Target.attachToTarget", map[string]any{"targetId": page.TargetID, "flatten": true})
	var att struct{ SessionID string }
	json.Unmarshal(res, &att)
	connectPage := func(expr string) json.RawMessage {
		t.Helper()
		// The page's own script may still be loading: retry until the
		// extension API answers.
		for {
			res, err := person.Call(ctx, att.SessionID, "Runtime.evaluate", map[string]any{"expression": expr, "awaitPromise": true, "returnByValue": true})
			var r struct {
				Result           struct{ Value json.RawMessage }
				ExceptionDetails json.RawMessage
			}
			if err == nil && json.Unmarshal(res, &r) == nil && r.ExceptionDetails == nil {
				return r.Result.Value
			}
			if ctx.Err() != nil {
				t.Fatalf("%s: %v %s", expr, err, res)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	request := func(msg string) {
		t.Helper()
		var r struct {
			OK    bool
			Error string
		}
		v := connectPage("chrome.runtime.sendMessage(" + msg + ")")
		if json.Unmarshal(v, &r) != nil || !r.OK {
			t.Fatalf("%s: %s", msg, v)
		}
	}

	c := dialOrFail(ctx, t, env.WSEndpoint())
	defer c.Close()
	callOrFail(ctx, t, c, "", "Target.setDiscoverTargets", map[string]any{"discover": true})
	callOrFail(ctx, t, c, "", "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true})
	// A tab of the client's own: picked, so it stays shared in pick mode
	// and the client keeps a page.
	res = callOrFail(ctx, t, c, "", "Target.createTarget", map[string]any{"url": "about:blank"})
	var own struct{ TargetID string }
	json.Unmarshal(res, &own)
	defer callOrFail(ctx, t, c, "", "Target.closeTarget", map[string]any{"targetId": own.TargetID})

	request(`{type: "mode", share: "pick"}`)
	defer request(`{type: "mode", share: "all"}`)

	// A tab the person opens is not shared in pick mode, until ticked.
	from := len(c.Messages())
	url := env.Pages.Main + "/form.html?picked"
	tabID := string(connectPage(`chrome.tabs.create({url: "` + url + `", active: false}).then((t) => t.id)`))
	defer connectPage(`chrome.tabs.remove(` + tabID + `).then(() => true, () => true)`)
	id, _ := strconv.Atoi(tabID)
	time.Sleep(300 * time.Millisecond)
	for _, m := range c.Messages()[from:] {
		if m.Method == "Target.targetCreated" && strings.Contains(string(m.Params), "?picked") {
			t.Fatalf("an unpicked tab became a target: %s", m.Raw)
		}
	}
	request(`{type: "share", tabId: ` + strconv.Itoa(id) + `, on: true}`)
	attached, _, err := c.WaitMessage(ctx, from, func(m cdptest.Message) bool {
		return m.Method == "Target.attachedToTarget" && strings.Contains(string(m.Params), "/form.html?picked")
	})
	if err != nil {
		t.Fatalf("the picked tab was not attached: %v", err)
	}
	var ev struct {
		SessionID  string
		TargetInfo struct{ TargetID string }
	}
	json.Unmarshal(attached.Params, &ev)
	t.Logf("ok - ticked: the tab is target %s, session %s", ev.TargetInfo.TargetID, ev.SessionID)
	for {
		res := callOrFail(ctx, t, c, ev.SessionID, "Runtime.evaluate", map[string]any{"expression": "document.title", "returnByValue": true})
		if strings.Contains(string(res), `"Form"`) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}

	from = len(c.Messages())
	request(`{type: "share", tabId: ` + strconv.Itoa(id) + `, on: false}`)
	if _, _, err := c.WaitMessage(ctx, from, func(m cdptest.Message) bool {
		return m.Method == "Target.targetDestroyed" && strings.Contains(string(m.Params), ev.TargetInfo.TargetID)
	}); err != nil {
		t.Fatalf("the unticked tab is still a target: %v", err)
	}
	if _, _, err := c.WaitMessage(ctx, from, func(m cdptest.Message) bool {
		return m.Method == "Target.detachedFromTarget" && strings.Contains(string(m.Params), ev.SessionID)
	}); err != nil {
		t.Fatalf("the unticked tab's session did not detach: %v", err)
	}
	t.Log("ok - unticked: the target is gone")
}

func dialOrFail(ctx context.Context, t *testing.T, url string) *cdptest.Client {
	t.Helper()
	c, err := cdptest.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func callOrFail(ctx context.Context, t *testing.T, c *cdptest.Client, session, method string, params any) json.RawMessage {
	t.Helper()
	res, err := c.Call(ctx, session, method, params)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return res
}
