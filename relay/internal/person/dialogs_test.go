package person

import (
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
)

func TestDialogs(t *testing.T) {
	at := time.Unix(1700000000, 0)
	got := OpenedDialog(7, []byte(`{"url":"https://a.example/","type":"prompt","message":"Name?","defaultPrompt":"Ann","hasBrowserHandler":false}`), at)
	want := DialogStatus{ID: 7, Type: "prompt", Message: "Name?", DefaultPrompt: "Ann", OpenedAt: at}
	if got != want {
		t.Errorf("OpenedDialog: %+v, want %+v", got, want)
	}
	for typ, want := range map[string]bool{"alert": true, "beforeunload": true, "confirm": false, "prompt": false, "": false} {
		if AcceptedByDefault(typ) != want {
			t.Errorf("AcceptedByDefault(%q) = %v", typ, !want)
		}
	}
}

// The first answer wins: the automation's answer after another's is
// refused, naming who answered.
func TestDialogClaim(t *testing.T) {
	for _, tc := range []struct {
		by, answeredBy string
		refusal        string
	}{
		{"", "", ""},
		{api.DialogByPerson, "viewer-1", "cdprelay: the dialog was already answered by viewer-1"},
		{api.DialogByTimeout, "the relay, after 1m0s", "cdprelay: the dialog was already answered by timeout"},
		{api.DialogByAutomation, "the automation", "cdprelay: the dialog was already answered by automation"},
	} {
		d := &Dialog{DialogStatus: DialogStatus{ID: 1, Type: "confirm", AnsweredBy: tc.answeredBy}, By: tc.by}
		dec, ok := d.Claim()
		if tc.refusal == "" {
			if !ok || dec.Verdict != api.Allow || d.By != api.DialogByAutomation || d.AnsweredBy != "the automation" {
				t.Errorf("open dialog: %+v %v, dialog %+v", dec, ok, d)
			}
			if dec, ok := d.Claim(); ok || dec.Rule != api.RuleDialogAnswered {
				t.Errorf("claimed twice: %+v %v", dec, ok)
			}
			continue
		}
		if ok || dec.Rule != api.RuleDialogAnswered || dec.Message != tc.refusal || d.By != tc.by {
			t.Errorf("answered by %s: %+v %v, want %q", tc.by, dec, ok, tc.refusal)
		}
	}
}
