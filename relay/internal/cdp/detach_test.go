package cdp

import "testing"

func TestParseDetachCause(t *testing.T) {
	for _, tc := range []struct {
		arg  string
		want DetachCause
	}{
		{``, DetachCause{}},
		{`null`, DetachCause{}},
		{`"restricted_url"`, DetachCause{}}, // not an object
		{`{"cause":"restricted_url"}`, DetachCause{Cause: CauseRestrictedURL}},
		{`{"cause":"extension_frame","cleared":true,"guard":true}`, DetachCause{Cause: CauseExtensionFrame, Cleared: true, Guard: true}},
		{`{"cause":"discarded","replacedBy":42}`, DetachCause{Cause: CauseDiscarded, ReplacedBy: 42}},
		{`{"cause":"made_up","cleared":true}`, DetachCause{}}, // a cause nobody reports
		{`{"cause":"` + CausePolicyBlockedHost + `"}`, DetachCause{Cause: CausePolicyBlockedHost}},
		{`{"cause":1}`, DetachCause{}},
	} {
		if got := ParseDetachCause([]byte(tc.arg)); got != tc.want {
			t.Errorf("ParseDetachCause(%s) = %+v, want %+v", tc.arg, got, tc.want)
		}
	}
	for _, c := range []string{CauseExtensionFrame, CauseRestrictedURL, CauseDiscarded, CauseCanceledByUser, CauseTabClosed, CauseUnknown} {
		d := DetachCause{Cause: c}
		if d.Text() == "" || d.Short() == "" {
			t.Errorf("cause %s has no words: %q %q", c, d.Text(), d.Short())
		}
	}
	if d := (DetachCause{}); d.Text() != "" || d.Short() != "" {
		t.Errorf("an unknown cause has words: %q %q", d.Text(), d.Short())
	}
}

// FuzzParseDetachCause: whatever the extension sends, the cause read is
// none or one the relay has words for.
func FuzzParseDetachCause(f *testing.F) {
	for _, s := range []string{``, `{"cause":"restricted_url"}`, `{"cause":"extension_frame","cleared":true}`, `{"cause":"` + CausePolicyBlockedHost + `"}`, `{"cause":"x"}`, `[1]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, arg []byte) {
		d := ParseDetachCause(arg)
		if d.Cause != "" && (d.Text() == "" || d.Short() == "") {
			t.Fatalf("cause %q read from %q has no words", d.Cause, arg)
		}
		if d.Cause == "" && d != (DetachCause{}) {
			t.Fatalf("no cause, but %+v from %q", d, arg)
		}
	})
}
