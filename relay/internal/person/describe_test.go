package person

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/api"
)

var describeTable = []struct {
	name string
	d    Description
	want string
}{
	{"navigate", Description{Method: "Page.navigate", Origin: "https://a.example", URL: "https://b.example/pay?x=1"}, "navigate to https://b.example/pay?x=1"},
	{"new tab", Description{Method: "Target.createTarget"}, "open a new tab at about:blank"},
	{"new tab at", Description{Method: "Target.createTarget", URL: "https://b.example/\n  next"}, "open a new tab at https://b.example/ next"},
	{"upload", Description{Method: "DOM.setFileInputFiles", Origin: "https://shop.example", Files: []string{"/home/p/a.pdf", "/tmp/b.png"}}, "upload a.pdf, b.png on shop.example"},
	{"drop nothing", Description{Method: "Input.dispatchDragEvent", Origin: "https://shop.example"}, "drop onto the page on shop.example"},
	{"type", Description{Method: "Input.insertText", Origin: "https://shop.example", Params: []byte(`{"text":"hello  world"}`)}, `type "hello world" on shop.example`},
	{"type a secret into a field", Description{Method: "Input.insertText", Origin: "https://shop.example", Params: []byte(`{"text":"{{secret:bank}}"}`),
		Looked: true, Target: api.PointTarget{Origin: "https://shop.example", Kind: "field", Text: "Password"}}, `type the secret bank into the field "Password" on shop.example`},
	{"click unseen", Description{Method: "Input.dispatchMouseEvent", Origin: "https://shop.example", Params: []byte(`{"type":"mousePressed","x":10.5,"y":2e1}`)}, "click at (10.5, 20) on shop.example"},
	{"click no point", Description{Method: "Input.dispatchMouseEvent", Params: []byte(`{"type":"mousePressed","x":"ten"}`)}, "click at (?, ?)"},
	{"click submit", Description{Method: "Input.dispatchMouseEvent", Origin: "https://shop.example", Params: []byte(`{"x":1,"y":2}`),
		Looked: true, Target: api.PointTarget{Origin: "https://shop.example", Kind: "button", Text: "Place order", Submit: true}}, `click the submit button "Place order" on shop.example`},
	{"click in a frame of another origin", Description{Method: "Input.dispatchMouseEvent", Origin: "https://shop.example", Params: []byte(`{"x":1,"y":2}`),
		Looked: true, Target: api.PointTarget{Origin: "https://pay.example", Kind: "link", Text: "Pay"}}, `click the link "Pay" in a frame of pay.example on shop.example`},
	{"click a frame unseen", Description{Method: "Input.dispatchMouseEvent", Origin: "https://shop.example", Params: []byte(`{"x":1,"y":2}`),
		Looked: true, Target: api.PointTarget{Origin: "https://shop.example", Kind: "frame", Frame: "https://ads.example/x"}}, "click inside a frame from ads.example on shop.example (cdprelay cannot see what is there)"},
	{"click nothing", Description{Method: "Input.dispatchMouseEvent", Params: []byte(`{"x":3,"y":4}`), Looked: true, Target: api.PointTarget{Kind: "nothing"}}, "click at (3, 4)"},
	{"click a tag", Description{Method: "Input.dispatchMouseEvent", Params: []byte(`{"x":3,"y":4}`), Looked: true, Target: api.PointTarget{Kind: "div"}}, "click a div element"},
	{"click a tag with text", Description{Method: "Input.dispatchMouseEvent", Params: []byte(`{"x":3,"y":4}`), Looked: true, Target: api.PointTarget{Kind: "div", Text: "Menu"}}, `click "Menu"`},
	{"enter", Description{Method: "Input.dispatchKeyEvent", Origin: "https://shop.example", Params: []byte(`{"type":"char","text":"\r"}`)}, "press Enter on shop.example"},
	{"enter in a form", Description{Method: "Input.dispatchKeyEvent", Origin: "https://shop.example", Params: []byte(`{"type":"keyDown","key":"Enter"}`),
		Looked: true, Target: api.PointTarget{Origin: "https://shop.example", Kind: "field", Text: "Card", Form: true}}, `press Enter in the field "Card" of a form on shop.example (it submits the form)`},
	{"tap", Description{Method: "Input.dispatchTouchEvent", Origin: "http://127.0.0.1:8080/x"}, "tap the page on 127.0.0.1:8080"},
	{"other", Description{Method: "Storage.clearDataForOrigin", Origin: "https://shop.example"}, "Storage.clearDataForOrigin on shop.example"},
	{"origin without a scheme", Description{Method: "Input.dispatchTouchEvent", Origin: "data:"}, "tap the page on data:"},
}

func TestDescriptionText(t *testing.T) {
	for _, tc := range describeTable {
		if got := tc.d.Text(); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestClipText(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"  a\n\tb  ", 10, "a b"},
		{"abcdef", 3, "abc…"},
		{"äöüß", 4, "äöüß"},
		{"äöüßx", 4, "äöüß…"},
		{"", 5, ""},
	} {
		if got := ClipText(tc.in, tc.max); got != tc.want {
			t.Errorf("ClipText(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}

// FuzzDescriptionText: whatever a client sends, the card's words come
// without a panic, and what it typed stays on one short line.
func FuzzDescriptionText(f *testing.F) {
	for _, tc := range describeTable {
		f.Add(tc.d.Method, tc.d.Origin, tc.d.URL, string(tc.d.Params), tc.d.Looked, tc.d.Target.Kind, tc.d.Target.Text)
	}
	f.Fuzz(func(t *testing.T, method, origin, url, params string, looked bool, kind, text string) {
		d := Description{Method: method, Origin: origin, URL: url, Params: []byte(params), Looked: looked,
			Target: api.PointTarget{Origin: origin, Kind: kind, Text: ClipText(text, 80)}}
		got := d.Text()
		if !utf8.ValidString(method+origin+url+params+kind+text) || strings.ContainsAny(method+origin+kind, "\r\n") {
			return
		}
		// A secret's reference is named as it is; typed text is clipped.
		if _, secret := secretName(string(wire.StringField([]byte(params), "text"))); method == "Input.insertText" && !secret && strings.ContainsAny(got, "\r\n") {
			t.Errorf("%q: the card breaks a line: %q", params, got)
		}
		if c := ClipText(text, 80); utf8.RuneCountInString(c) > 81 || strings.ContainsAny(c, "\r\n\t") {
			t.Errorf("ClipText(%q) = %q", text, c)
		}
	})
}
