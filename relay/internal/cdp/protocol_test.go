package cdp

import (
	"regexp"
	"slices"
	"testing"
)

// The generated list reads as the protocol's names: each a Domain.method,
// none twice, the commands before the events, and the ones the relay
// depends on present.
func TestNames(t *testing.T) {
	method := regexp.MustCompile(`^[A-Z][A-Za-z]*\.[a-z][A-Za-z]*$`)
	seen := map[Name]bool{}
	events := false
	for _, n := range Names() {
		if !method.MatchString(n.Method) {
			t.Errorf("%q is not a Domain.method", n.Method)
		}
		if seen[n] {
			t.Errorf("%+v given twice", n)
		}
		seen[n] = true
		if events && !n.Event {
			t.Errorf("command %s after the events", n.Method)
		}
		events = events || n.Event
	}
	cmds, evs := Commands(), Events()
	if len(cmds)+len(evs) != len(seen) || len(cmds) == 0 || len(evs) == 0 {
		t.Fatalf("%d commands and %d events of %d names", len(cmds), len(evs), len(seen))
	}
	for _, c := range []string{"Page.navigate", "Target.attachToTarget", "Runtime.evaluate"} {
		if !slices.Contains(cmds, c) {
			t.Errorf("command %s missing", c)
		}
	}
	for _, e := range []string{"Target.attachedToTarget", "Page.frameNavigated"} {
		if !slices.Contains(evs, e) {
			t.Errorf("event %s missing", e)
		}
	}
	Names()[0].Method = "changed"
	if Names()[0].Method == "changed" {
		t.Error("Names shares its slice with callers")
	}
}
