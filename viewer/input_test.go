package viewer

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

var geom = Geometry{Width: 800, Height: 600}

// TestMapEveryKind: each allowed input maps to exactly the expected method
// and params, and nothing else.
func TestMapEveryKind(t *testing.T) {
	for _, tc := range []struct {
		name   string
		in     Input
		method string
		params string // JSON; a Sequence is a JSON array of calls
	}{
		{"mouse move", Input{Kind: "mouse", Action: "move", X: 0.5, Y: 0.5},
			"Input.dispatchMouseEvent", `{"type":"mouseMoved","x":400,"y":300,"button":"none"}`},
		{"mouse drag", Input{Kind: "mouse", Action: "move", X: 0.25, Y: 0.5, Button: "left", Buttons: 1, Modifiers: 8},
			"Input.dispatchMouseEvent", `{"type":"mouseMoved","x":200,"y":300,"modifiers":8,"button":"left","buttons":1}`},
		{"mouse down", Input{Kind: "mouse", Action: "down", X: 0.1, Y: 0.2},
			"Input.dispatchMouseEvent", `{"type":"mousePressed","x":80,"y":120,"button":"left","clickCount":1}`},
		{"mouse down right double", Input{Kind: "mouse", Action: "down", X: 0.1, Y: 0.2, Button: "right", Buttons: 2, ClickCount: 2},
			"Input.dispatchMouseEvent", `{"type":"mousePressed","x":80,"y":120,"button":"right","buttons":2,"clickCount":2}`},
		{"mouse up", Input{Kind: "mouse", Action: "up", X: 1, Y: 1, Button: "middle"},
			"Input.dispatchMouseEvent", `{"type":"mouseReleased","x":800,"y":600,"button":"middle","clickCount":1}`},
		{"mouse click", Input{Kind: "mouse", Action: "click", X: 0.5, Y: 0.25, Modifiers: 2},
			"Input.dispatchMouseEvent", `[{"type":"mousePressed","x":400,"y":150,"modifiers":2,"button":"left","clickCount":1},{"type":"mouseReleased","x":400,"y":150,"modifiers":2,"button":"left","clickCount":1}]`},
		{"mouse wheel", Input{Kind: "mouse", Action: "wheel", X: 0.5, Y: 0.5, DeltaY: 120, DeltaX: -3},
			"Input.dispatchMouseEvent", `{"type":"mouseWheel","x":400,"y":300,"deltaX":-3,"deltaY":120}`},
		{"key down typing", Input{Kind: "key", Action: "down", Key: "a", Code: "KeyA", Text: "a", KeyCode: 65},
			"Input.dispatchKeyEvent", `{"type":"keyDown","text":"a","unmodifiedText":"a","code":"KeyA","key":"a","windowsVirtualKeyCode":65}`},
		{"key down enter", Input{Kind: "key", Action: "down", Key: "Enter", Code: "Enter", Text: "\r", KeyCode: 13},
			"Input.dispatchKeyEvent", `{"type":"keyDown","text":"\r","unmodifiedText":"\r","code":"Enter","key":"Enter","windowsVirtualKeyCode":13}`},
		{"key down raw", Input{Kind: "key", Action: "down", Key: "ArrowLeft", Code: "ArrowLeft", KeyCode: 37, Modifiers: 8},
			"Input.dispatchKeyEvent", `{"type":"rawKeyDown","modifiers":8,"code":"ArrowLeft","key":"ArrowLeft","windowsVirtualKeyCode":37}`},
		{"key down right shift", Input{Kind: "key", Action: "down", Key: "Shift", Code: "ShiftRight", KeyCode: 16, Location: 2},
			"Input.dispatchKeyEvent", `{"type":"rawKeyDown","code":"ShiftRight","key":"Shift","windowsVirtualKeyCode":16,"location":2}`},
		{"key down keypad", Input{Kind: "key", Action: "down", Key: "1", Code: "Numpad1", Text: "1", KeyCode: 97, Location: 3},
			"Input.dispatchKeyEvent", `{"type":"keyDown","text":"1","unmodifiedText":"1","code":"Numpad1","key":"1","windowsVirtualKeyCode":97,"isKeypad":true}`},
		{"key up", Input{Kind: "key", Action: "up", Key: "a", Code: "KeyA", KeyCode: 65},
			"Input.dispatchKeyEvent", `{"type":"keyUp","code":"KeyA","key":"a","windowsVirtualKeyCode":65}`},
		{"key text", Input{Kind: "key", Action: "text", Text: "héllo wörld"},
			"Input.insertText", `{"text":"héllo wörld"}`},
		{"bring to front", Input{Kind: "bring-to-front"},
			"Page.bringToFront", `null`},
		{"reload", Input{Kind: "reload"},
			"Page.reload", `null`},
		{"resize", Input{Kind: "resize", Width: 1280, Height: 720},
			"Emulation.setDeviceMetricsOverride", `{"width":1280,"height":720,"deviceScaleFactor":0,"mobile":false}`},
		{"resize small clamped", Input{Kind: "resize", Width: 100, Height: 50},
			"Emulation.setDeviceMetricsOverride", `{"width":320,"height":240,"deviceScaleFactor":0,"mobile":false}`},
		{"resize large clamped", Input{Kind: "resize", Width: 9000, Height: 9000},
			"Emulation.setDeviceMetricsOverride", `{"width":3840,"height":2160,"deviceScaleFactor":0,"mobile":false}`},
		{"navigate", Input{Kind: "navigate", URL: "https://example.com/a?b=c"},
			"Page.navigate", `{"url":"https://example.com/a?b=c"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			method, params, err := Map(tc.in, geom)
			if err != nil {
				t.Fatalf("Map: %v", err)
			}
			if method != tc.method {
				t.Errorf("method = %s, want %s", method, tc.method)
			}
			if !slices.Contains(Methods, method) {
				t.Errorf("method %s is not in Methods", method)
			}
			got, err := json.Marshal(params)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.params {
				t.Errorf("params = %s\n          want %s", got, tc.params)
			}
		})
	}
}

// TestMapRefuses: malformed or out-of-range input is refused, with no
// method.
func TestMapRefuses(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, tc := range []struct {
		name string
		in   Input
		geom Geometry
		want string // part of the error
	}{
		{"no kind", Input{}, geom, "no kind"},
		{"runtime", Input{Kind: "Runtime.evaluate"}, geom, "not allowed"},
		{"evaluate", Input{Kind: "evaluate", Text: "alert(1)"}, geom, "not allowed"},
		{"mouse no action", Input{Kind: "mouse", X: .5, Y: .5}, geom, "not allowed"},
		{"mouse drag action", Input{Kind: "mouse", Action: "drag", X: .5, Y: .5}, geom, "not allowed"},
		{"key no action", Input{Kind: "key", Key: "a"}, geom, "not allowed"},
		{"key press action", Input{Kind: "key", Action: "press", Key: "a"}, geom, "not allowed"},
		{"no frame", Input{Kind: "mouse", Action: "click", X: .5, Y: .5}, Geometry{}, "no frame"},
		{"frame NaN", Input{Kind: "mouse", Action: "click", X: .5, Y: .5}, Geometry{nan, 600}, "no frame"},
		{"frame Inf", Input{Kind: "mouse", Action: "click", X: .5, Y: .5}, Geometry{800, inf}, "no frame"},
		{"frame negative", Input{Kind: "mouse", Action: "click", X: .5, Y: .5}, Geometry{-800, 600}, "no frame"},
		{"bad button", Input{Kind: "mouse", Action: "down", X: .5, Y: .5, Button: "thumb"}, geom, "not a button"},
		{"click count 0 explicit negative", Input{Kind: "mouse", Action: "down", X: .5, Y: .5, ClickCount: -1}, geom, "click count"},
		{"click count 4", Input{Kind: "mouse", Action: "click", X: .5, Y: .5, ClickCount: 4}, geom, "click count"},
		{"buttons 32", Input{Kind: "mouse", Action: "move", X: .5, Y: .5, Buttons: 32}, geom, "buttons"},
		{"modifiers 16", Input{Kind: "mouse", Action: "move", X: .5, Y: .5, Modifiers: 16}, geom, "modifiers"},
		{"modifiers negative", Input{Kind: "key", Action: "down", Key: "a", Modifiers: -1}, geom, "modifiers"},
		{"wheel NaN", Input{Kind: "mouse", Action: "wheel", X: .5, Y: .5, DeltaY: nan}, geom, "wheel delta"},
		{"wheel Inf", Input{Kind: "mouse", Action: "wheel", X: .5, Y: .5, DeltaX: -inf}, geom, "wheel delta"},
		{"wheel huge", Input{Kind: "mouse", Action: "wheel", X: .5, Y: .5, DeltaY: 10001}, geom, "wheel delta"},
		{"key no key", Input{Kind: "key", Action: "down"}, geom, "key and code"},
		{"key long key", Input{Kind: "key", Action: "down", Key: strings.Repeat("a", 33)}, geom, "key and code"},
		{"key long code", Input{Kind: "key", Action: "up", Key: "a", Code: strings.Repeat("a", 33)}, geom, "key and code"},
		{"key bad utf8", Input{Kind: "key", Action: "down", Key: "\xff"}, geom, "key and code"},
		{"key long text", Input{Kind: "key", Action: "down", Key: "a", Text: strings.Repeat("a", 17)}, geom, "at most"},
		{"key up with text", Input{Kind: "key", Action: "up", Key: "a", Text: "a"}, geom, "types no text"},
		{"key code 256", Input{Kind: "key", Action: "down", Key: "a", KeyCode: 256}, geom, "key code"},
		{"key location 4", Input{Kind: "key", Action: "down", Key: "a", Location: 4}, geom, "location"},
		{"text empty", Input{Kind: "key", Action: "text"}, geom, "text to insert"},
		{"text huge", Input{Kind: "key", Action: "text", Text: strings.Repeat("a", 8193)}, geom, "text to insert"},
		{"text bad utf8", Input{Kind: "key", Action: "text", Text: "a\xffb"}, geom, "text to insert"},
		{"resize zero", Input{Kind: "resize"}, geom, "positive"},
		{"resize negative", Input{Kind: "resize", Width: -1, Height: 500}, geom, "positive"},
		{"navigate empty", Input{Kind: "navigate"}, geom, "needs a URL"},
		{"navigate relative", Input{Kind: "navigate", URL: "/etc/passwd"}, geom, "absolute"},
		{"navigate javascript", Input{Kind: "navigate", URL: "javascript:alert(document.cookie)"}, geom, "javascript"},
		{"navigate JavaScript", Input{Kind: "navigate", URL: "JaVaScRiPt:alert(1)"}, geom, "javascript"},
		{"navigate huge", Input{Kind: "navigate", URL: "https://a/" + strings.Repeat("a", 8192)}, geom, "needs a URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			method, params, err := Map(tc.in, tc.geom)
			if err == nil {
				t.Fatalf("Map accepted it: %s %v", method, params)
			}
			if method != "" || params != nil {
				t.Errorf("refused, yet method %q params %v", method, params)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
		})
	}
}

// TestMapGeometry: coordinates at the edges and the middle map with the
// last frame's CSS size; just outside, NaN and Inf are refused, never
// clamped.
func TestMapGeometry(t *testing.T) {
	g := Geometry{Width: 1280, Height: 720}
	for _, v := range []struct {
		x, y   float64
		px, py float64
	}{
		{0, 0, 0, 0},
		{0.5, 0.5, 640, 360},
		{1, 1, 1280, 720},
		{0, 1, 0, 720},
		{1, 0, 1280, 0},
		{0.25, 0.75, 320, 540},
	} {
		for _, action := range []string{"move", "down", "up", "wheel"} {
			_, params, err := Map(Input{Kind: "mouse", Action: action, X: v.x, Y: v.y}, g)
			if err != nil {
				t.Fatalf("%s at (%v, %v): %v", action, v.x, v.y, err)
			}
			p := mouseParams(t, params)
			if p.X != v.px || p.Y != v.py {
				t.Errorf("%s at (%v, %v) → (%v, %v), want (%v, %v)", action, v.x, v.y, p.X, p.Y, v.px, v.py)
			}
		}
	}
	for _, bad := range []float64{-0.0001, 1.0001, -1, 2, math.NaN(), math.Inf(1), math.Inf(-1), -math.SmallestNonzeroFloat64} {
		for _, in := range []Input{
			{Kind: "mouse", Action: "click", X: bad, Y: 0.5},
			{Kind: "mouse", Action: "move", X: 0.5, Y: bad},
			{Kind: "mouse", Action: "wheel", X: bad, Y: bad},
		} {
			if m, p, err := Map(in, g); err == nil || !strings.Contains(err.Error(), "outside [0, 1]") {
				t.Errorf("(%v, %v): Map = %s %v %v, want refused as outside [0, 1]", in.X, in.Y, m, p, err)
			}
		}
	}
	// Without a frame, even a valid point is refused.
	if _, _, err := Map(Input{Kind: "mouse", Action: "click", X: 0.5, Y: 0.5}, Geometry{}); !errors.Is(err, ErrNoFrame) {
		t.Errorf("no frame: %v, want ErrNoFrame", err)
	}
}

func mouseParams(t *testing.T, params any) struct{ X, Y float64 } {
	t.Helper()
	b, _ := json.Marshal(params)
	var p struct{ X, Y float64 }
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDefaultURLFence(t *testing.T) {
	for url, want := range map[string]bool{
		"http://example.com":                true,
		"https://example.com/x?y#z":         true,
		"HTTPS://EXAMPLE.COM":               true,
		"about:blank":                       true,
		"about:srcdoc":                      false,
		"file:///etc/passwd":                false,
		"chrome://settings":                 false,
		"data:text/html,<script>x</script>": false,
		"javascript:alert(1)":               false,
		"https:///nohost":                   false,
		"ftp://example.com":                 false,
		"":                                  false,
	} {
		if ok, why := DefaultURLFence(url); ok != want || (!ok && why == "") {
			t.Errorf("DefaultURLFence(%q) = %v %q, want %v", url, ok, why, want)
		}
	}
}

// FuzzMap: whatever a viewer sends, Map returns a method of the allow-list
// or an error, and a pointer point within the frame.
func FuzzMap(f *testing.F) {
	seeds := []string{
		`{"kind":"mouse","action":"click","x":0.5,"y":0.5}`,
		`{"kind":"mouse","action":"wheel","x":1,"y":0,"deltaY":-120}`,
		`{"kind":"mouse","action":"move","x":1.0001,"y":0.5,"buttons":1}`,
		`{"kind":"key","action":"down","key":"a","code":"KeyA","text":"a","keyCode":65}`,
		`{"kind":"key","action":"text","text":"hello"}`,
		`{"kind":"bring-to-front"}`,
		`{"kind":"reload"}`,
		`{"kind":"resize","width":1,"height":99999}`,
		`{"kind":"navigate","url":"javascript:alert(1)"}`,
		`{"kind":"Runtime.evaluate","expression":"1"}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s), 800.0, 600.0)
	}
	f.Fuzz(func(t *testing.T, b []byte, w, h float64) {
		var in Input
		if json.Unmarshal(b, &in) != nil {
			return
		}
		method, params, err := Map(in, Geometry{w, h})
		if err != nil {
			if method != "" || params != nil {
				t.Fatalf("error with a method: %s", method)
			}
			return
		}
		if !slices.Contains(Methods, method) {
			t.Fatalf("method %q outside the allow-list", method)
		}
		if strings.HasPrefix(method, "Runtime.") {
			t.Fatalf("Runtime reached: %s", method)
		}
		if in.Kind == KindMouse {
			calls := Sequence{params}
			if s, ok := params.(Sequence); ok {
				calls = s
			}
			for _, c := range calls {
				p := mouseParams(t, c)
				if !(p.X >= 0 && p.X <= w && p.Y >= 0 && p.Y <= h) {
					t.Fatalf("point (%v, %v) outside the %v×%v viewport", p.X, p.Y, w, h)
				}
			}
		}
		if in.Kind == KindNavigate && strings.Contains(strings.ToLower(in.URL), "javascript:") && strings.HasPrefix(strings.ToLower(strings.TrimSpace(in.URL)), "javascript:") {
			t.Fatalf("javascript: URL accepted: %q", in.URL)
		}
	})
}
