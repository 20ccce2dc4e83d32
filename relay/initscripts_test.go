package relay

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/internal/fakeext"
)

func TestRunsNothing(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want bool
	}{
		{"", true},
		{"  \n\t", true},
		{"//# sourceURL=pptr:internal", true},
		{"/* a */ // b\n  /* c */", true},
		{"// a\nalert(1)", false},
		{"// a\ralert(1)", false},
		{"/* unclosed", false},
		{"/* a */x", false},
		{"/", false},
		{"x", false},
		{"\u2028alert(1)", false},
		{"// a\u2028alert(1)", false},
		{"// a\u2029alert(1)", false},
		{"<!-- html comment\nalert(1)", false},
	} {
		if got := runsNothing(tc.src); got != tc.want {
			t.Errorf("runsNothing(%q) = %v", tc.src, got)
		}
	}
}

func FuzzRunsNothing(f *testing.F) {
	for _, s := range []string{"", "// x", "/* */", "a", "//\nb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if !runsNothing(src) {
			return
		}
		// What runs nothing has nothing but white space outside its
		// comments: remove them, and nothing is left.
		rest := []byte{}
		for i := 0; i < len(src); i++ {
			switch {
			case src[i] == '/' && i+1 < len(src) && src[i+1] == '/':
				for i < len(src) && src[i] != '\n' && src[i] != '\r' && !strings.HasPrefix(src[i:], "\u2028") && !strings.HasPrefix(src[i:], "\u2029") {
					i++
				}
			case src[i] == '/' && i+1 < len(src) && src[i+1] == '*':
				i += 2
				for i+1 < len(src) && !(src[i] == '*' && src[i+1] == '/') {
					i++
				}
				i++
			default:
				rest = append(rest, src[i])
			}
		}
		for _, c := range rest {
			if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
				t.Fatalf("runsNothing(%q), yet %q is left", src, rest)
			}
		}
	})
}

// cdpSent lists the CDP commands e was sent from index from on, in order,
// as "Method params".
func cdpSent(e *fakeext.Ext, from int) []string {
	var out []string
	for _, c := range e.Commands()[from:] {
		if c.Method != "chrome.debugger.sendCommand" {
			continue
		}
		var args []json.RawMessage
		if json.Unmarshal(c.Params, &args) != nil || len(args) < 2 {
			continue
		}
		var m string
		json.Unmarshal(args[1], &m)
		p := ""
		if len(args) > 2 {
			p = string(args[2])
		}
		out = append(out, m+" "+p)
	}
	return out
}

func indexOf(list []string, prefix string) int {
	for i, s := range list {
		if strings.HasPrefix(s, prefix) {
			return i
		}
	}
	return -1
}

// TestTierInitScriptsFollowTheTab: a script the client adds for new
// documents on a full site is taken out of Chrome before the tab goes to
// a read-only site, put back when it returns to a full one, and removed
// by the identifier the client was given; a world's bootstrap, which runs
// nothing, stays.
func TestTierInitScriptsFollowTheTab(t *testing.T) {
	var n atomic.Int64
	handler := func(tabID int, sid, method string, params json.RawMessage) (any, error) {
		if method == "Page.addScriptToEvaluateOnNewDocument" {
			return map[string]string{"identifier": fmt.Sprint("S", n.Add(1))}, nil
		}
		return fakeext.DefaultHandler(tabID, sid, method, params)
	}
	h := newHarness(t, Config{Policy: tiers})
	e := h.ext(fakeext.Options{Handler: handler, Tabs: []fakeext.Tab{{ID: 1, URL: "https://a.example/", Title: "A"}}})
	c := h.client()
	sess := h.autoAttach(c)[0]
	id := jsonString(t, h.call(c, sess, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": "fetch('/act')"}), "identifier")
	h.call(c, sess, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": "//# sourceURL=boot", "worldName": "w"})

	from := len(e.Commands())
	h.call(c, sess, "Page.navigate", map[string]any{"url": "https://ro.example/"})
	sent := cdpSent(e, from)
	rm, nav := indexOf(sent, `Page.removeScriptToEvaluateOnNewDocument {"identifier":"`+id+`"}`), indexOf(sent, "Page.navigate")
	if rm < 0 || nav < 0 || rm > nav {
		t.Fatalf("the script was not taken out before the navigation: %q", sent)
	}
	if indexOf(sent, `Page.removeScriptToEvaluateOnNewDocument {"identifier":"S2"}`) >= 0 {
		t.Fatalf("the world's bootstrap was taken out: %q", sent)
	}
	e.Navigate(1, "https://ro.example/", "RO")

	// Back on a full site: put back, under a new identifier of Chrome's.
	from = len(e.Commands())
	e.Navigate(1, "https://a.example/2", "A2")
	deadline := time.Now().Add(5 * time.Second)
	for indexOf(cdpSent(e, from), `Page.addScriptToEvaluateOnNewDocument {"source":"fetch('/act')"}`) < 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the script was not put back: %q", cdpSent(e, from))
		}
		time.Sleep(5 * time.Millisecond)
	}
	h.call(c, sess, "Target.getTargets", nil) // the put-back's reply has been read
	from = len(e.Commands())
	h.call(c, sess, "Page.removeScriptToEvaluateOnNewDocument", map[string]any{"identifier": id})
	if sent := cdpSent(e, from); len(sent) != 1 || sent[0] != `Page.removeScriptToEvaluateOnNewDocument {"identifier":"S3"}` {
		t.Fatalf("the client's removal went as %q", sent)
	}
	// Removed: not put back after another trip.
	h.call(c, sess, "Page.navigate", map[string]any{"url": "https://ro.example/"})
	e.Navigate(1, "https://ro.example/", "RO")
	from = len(e.Commands())
	e.Navigate(1, "https://a.example/3", "A3")
	h.call(c, sess, "Target.getTargets", nil)
	if i := indexOf(cdpSent(e, from), "Page.addScriptToEvaluateOnNewDocument"); i >= 0 {
		t.Fatalf("a removed script was put back: %q", cdpSent(e, from))
	}
}

// TestTierBlindSettingsApplyOnLeaving: what a blind tab acknowledged
// without applying is applied once it is on a full site.
func TestTierBlindSettingsApplyOnLeaving(t *testing.T) {
	h := newHarness(t, Config{Policy: tiers})
	e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: "https://blind.example/", Title: "B"}}})
	c := h.client()
	sess := h.autoAttach(c)[0]
	from := len(e.Commands())
	h.call(c, sess, "Emulation.setFocusEmulationEnabled", map[string]any{"enabled": true})
	h.call(c, sess, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 400, "height": 300, "deviceScaleFactor": 1, "mobile": false})
	h.call(c, sess, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 500, "height": 300, "deviceScaleFactor": 1, "mobile": false})
	if i := indexOf(cdpSent(e, from), "Emulation."); i >= 0 {
		t.Fatalf("a setting reached the blind tab: %q", cdpSent(e, from))
	}
	e.Navigate(1, "https://a.example/", "A")
	h.waitFor("the settings applied", func() bool { return indexOf(cdpSent(e, from), "Emulation.setDeviceMetricsOverride") >= 0 })
	sent := cdpSent(e, from)
	focus, metrics := indexOf(sent, `Emulation.setFocusEmulationEnabled {"enabled":true}`), indexOf(sent, `Emulation.setDeviceMetricsOverride {"deviceScaleFactor":1,"height":300,"mobile":false,"width":500}`)
	if focus < 0 || metrics < 0 || focus > metrics || strings.Count(strings.Join(sent, "\n"), "setDeviceMetricsOverride") != 1 {
		t.Fatalf("applied on leaving: %q", sent)
	}
}
