package person

import "testing"

var askTable = []struct {
	method, params string
	acts, submit   bool
}{
	{"Input.dispatchMouseEvent", `{"type":"mousePressed","x":1,"y":2}`, true, true},
	{"Input.dispatchMouseEvent", `{"type":"mouseReleased","x":1,"y":2}`, false, false},
	{"Input.dispatchMouseEvent", `{"type":"mouseMoved"}`, false, false},
	{"Input.dispatchKeyEvent", `{"type":"keyDown","key":"Enter"}`, true, true},
	{"Input.dispatchKeyEvent", `{"type":"rawKeyDown","code":"Enter"}`, true, true},
	{"Input.dispatchKeyEvent", `{"type":"rawKeyDown","windowsVirtualKeyCode":13}`, true, true},
	{"Input.dispatchKeyEvent", `{"type":"char","text":"\r"}`, true, true},
	{"Input.dispatchKeyEvent", `{"type":"keyDown","key":"a"}`, true, false},
	{"Input.dispatchKeyEvent", `{"type":"keyUp","key":"Enter"}`, false, false},
	{"Input.dispatchTouchEvent", `{"type":"touchStart"}`, true, false},
	{"Input.dispatchTouchEvent", `{"type":"touchEnd"}`, false, false},
	{"Input.dispatchDragEvent", `{"type":"drop"}`, true, false},
	{"Input.dispatchDragEvent", `{"type":"dragEnter"}`, false, false},
	{"Input.insertText", `{"text":"\r"}`, true, false},
	{"Page.navigate", `{"url":"https://a.example/"}`, true, false},
	{"Input.dispatchMouseEvent", `not json`, false, false},
}

func TestActsAndSubmitLike(t *testing.T) {
	for _, tc := range askTable {
		if got := Acts(tc.method, []byte(tc.params)); got != tc.acts {
			t.Errorf("Acts(%s %s) = %v, want %v", tc.method, tc.params, got, tc.acts)
		}
		if got := SubmitLike(tc.method, []byte(tc.params)); got != tc.submit {
			t.Errorf("SubmitLike(%s %s) = %v, want %v", tc.method, tc.params, got, tc.submit)
		}
	}
	for m, want := range map[string]bool{"Input.dispatchMouseEvent": true, "Input.dispatchKeyEvent": true, "Input.insertText": true,
		"Input.dispatchTouchEvent": false, "Page.navigate": false} {
		if LooksFirst(m) != want {
			t.Errorf("LooksFirst(%s) = %v", m, !want)
		}
	}
}

// FuzzAsks: no params make the classification panic, and what may submit
// a form is always something that acts.
func FuzzAsks(f *testing.F) {
	for _, tc := range askTable {
		f.Add(tc.method, tc.params)
	}
	f.Fuzz(func(t *testing.T, method, params string) {
		acts, submit := Acts(method, []byte(params)), SubmitLike(method, []byte(params))
		if submit && !acts {
			t.Errorf("%s %s may submit a form but does not act", method, params)
		}
	})
}
