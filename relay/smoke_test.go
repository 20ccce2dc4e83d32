package relay

import (
	"encoding/json"
	"testing"

	"github.com/cdprelay/cdprelay/internal/fakeext"
	"github.com/cdprelay/cdprelay/relay/internal/config"
)

func TestSmokePlaywrightSequence(t *testing.T) {
	h := newHarness(t, config.Config{})
	h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: "https://example.com/", Title: "Example"}}})
	c := h.client()
	res, err := c.Call(h.ctx, "", "Browser.getVersion", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("version: %s", res)
	if _, err := c.Call(h.ctx, "", "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true}); err != nil {
		t.Fatal(err)
	}
	ev := c.Events("Target.attachedToTarget")
	if len(ev) != 1 {
		t.Fatalf("attachedToTarget events: %d", len(ev))
	}
	var p struct {
		SessionID string
	}
	json.Unmarshal(ev[0].Params, &p)
	res, err = c.Call(h.ctx, p.SessionID, "Runtime.evaluate", map[string]any{"expression": "1+1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("eval: %s", res)
}
