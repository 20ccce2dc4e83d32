package browser

import (
	"encoding/json"
	"maps"
	"testing"
)

// windowUpdates are setWindowBounds' bounds, with what chrome.windows.update
// is given ("" for an error in Chrome's words).
var windowUpdates = []struct {
	bounds, want string
}{
	{`{"width":900,"height":700}`, `{"height":700,"width":900}`},
	{`{"left":-5,"top":0}`, `{"left":-5,"top":0}`},
	{`{"windowState":"minimized"}`, `{"state":"minimized"}`},
	{`{"windowState":"normal","width":800}`, `{"state":"normal","width":800}`},
	{`{}`, `{}`},
	{`{"width":900,"windowState":"maximized"}`, ""},
	{`{"top":1,"windowState":"fullscreen"}`, ""},
	{`{"windowState":"sideways"}`, ""},
	{`{"windowState":"locked-fullscreen"}`, ""},
}

func TestWindowUpdate(t *testing.T) {
	t.Parallel()
	for _, tt := range windowUpdates {
		var b WindowBounds
		if err := json.Unmarshal([]byte(tt.bounds), &b); err != nil {
			t.Fatal(err)
		}
		got, err := WindowUpdate(&b)
		if tt.want == "" {
			if err == nil {
				t.Errorf("%s: %v, want an error", tt.bounds, got)
			}
			continue
		}
		var want map[string]any
		json.Unmarshal([]byte(tt.want), &want)
		gotJSON, _ := json.Marshal(got)
		var gotBack map[string]any
		json.Unmarshal(gotJSON, &gotBack)
		if err != nil || !maps.Equal(gotBack, want) {
			t.Errorf("%s: %s %v, want %s", tt.bounds, gotJSON, err, tt.want)
		}
	}
}

// FuzzWindowUpdate: whatever bounds a client sends, chrome.windows.update
// is given only the four sizes and a state Chrome's browser target takes,
// and never a state with a size.
func FuzzWindowUpdate(f *testing.F) {
	for _, tt := range windowUpdates {
		f.Add([]byte(tt.bounds))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var b WindowBounds
		if json.Unmarshal(raw, &b) != nil {
			return
		}
		update, err := WindowUpdate(&b)
		if err != nil {
			return
		}
		sized := false
		for k := range update {
			switch k {
			case "left", "top", "width", "height":
				sized = true
			case "state":
			default:
				t.Fatalf("%s: key %q", raw, k)
			}
		}
		switch state, _ := update["state"].(string); state {
		case "", "normal":
		case "minimized", "maximized", "fullscreen":
			if sized {
				t.Fatalf("%s: %v", raw, update)
			}
		default:
			t.Fatalf("%s: state %q", raw, state)
		}
	})
}

// TestWindowBounds: a window as chrome.windows gives it, as Chrome's
// browser target reports it.
func TestWindowBounds(t *testing.T) {
	t.Parallel()
	for state, want := range map[string]string{"normal": "normal", "minimized": "minimized", "locked-fullscreen": "fullscreen"} {
		w := Window{ID: 3, Left: 10, Top: 20, Width: 780, Height: 580, State: state}
		b, _ := json.Marshal(w.Bounds())
		if got := `{"left":10,"top":20,"width":780,"height":580,"windowState":"` + want + `"}`; string(b) != got {
			t.Errorf("%s: %s, want %s", state, b, got)
		}
	}
}
