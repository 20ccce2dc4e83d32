package core

import (
	"encoding/json"
	"testing"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
)

// The browser in an instance's status reads as the browser the extension
// reported: the conversion keeps every field, and the JSON keeps every
// name (a conversion would compile with a tag changed on one side only).
func TestBrowserStatusAsReported(t *testing.T) {
	b := cdp.BrowserInfo{Product: "Chrome/156.0.8078.129", UserAgent: "Mozilla/5.0 x", Version: "156.0.8078.129"}
	want, _ := json.Marshal(b)
	got, _ := json.Marshal(api.BrowserStatus(b))
	if string(got) != string(want) {
		t.Fatalf("status %s, reported %s", got, want)
	}
}
