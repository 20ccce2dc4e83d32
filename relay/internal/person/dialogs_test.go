package person

import (
	"testing"
	"time"
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
