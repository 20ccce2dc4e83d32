package core

import (
	"slices"
	"testing"
)

// TestMissingHooksNamesEach: every hook of every service is required, at
// any depth (an emulation's handler too), and named by its path; a
// service whose hooks are all set is not named.
func TestMissingHooksNamesEach(t *testing.T) {
	none := missingHooks(Services{})
	for _, want := range []string{"Scrubber.Frame", "Scrubber.String", "Dialogs.Answer", "Authority.Stop",
		"Tiers.ChildLocked", "Away.ExtensionGoneLocked", "Lines.ForTabLocked", "Switches.Runtime.Fn", "Switches.Domain.Fn", "Attacher.FinishDetach"} {
		if !slices.Contains(none, want) {
			t.Errorf("an empty Services: %q not named missing in %v", want, none)
		}
	}
	s := Services{Scrubber: Scrubber{
		Frame:  func(*Instance, *[]byte) *[]byte { return nil },
		String: func(_ *Instance, s string) string { return s },
	}}
	got := missingHooks(s)
	if slices.ContainsFunc(got, func(p string) bool { return p == "Scrubber.Frame" || p == "Scrubber.String" }) {
		t.Errorf("the scrubber's hooks set, still named missing: %v", got)
	}
	if len(got) != len(none)-2 {
		t.Errorf("%d hooks missing with the scrubber set, want %d", len(got), len(none)-2)
	}
	s.Scrubber.String = nil
	if got := missingHooks(s); !slices.Contains(got, "Scrubber.String") {
		t.Errorf("one hook of a service unset: not named in %v", got)
	}
}
