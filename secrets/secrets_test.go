package secrets

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConfig(t *testing.T) {
	if _, err := New([]Config{{Name: "a", Origins: []string{"https://x.test"}, Env: "A"}}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []Config{
		{Name: "", Origins: []string{"https://x.test"}, Env: "A"},
		{Name: "a b", Origins: []string{"https://x.test"}, Env: "A"},
		{Name: "a", Env: "A"},
		{Name: "a", Origins: []string{"https://x.test/path"}, Env: "A"},
		{Name: "a", Origins: []string{"x.test"}, Env: "A"},
		{Name: "a", Origins: []string{"https://x.test"}},
		{Name: "a", Origins: []string{"https://x.test"}, Env: "A", File: "/f"},
		{Name: "a", Origins: []string{"https://x.test"}, Env: "A", Fields: "text"},
	} {
		if _, err := New([]Config{bad}); err == nil {
			t.Errorf("accepted %+v", bad)
		}
	}
	if _, err := New([]Config{{Name: "a", Origins: []string{"https://x.test"}, Env: "A"}, {Name: "a", Origins: []string{"https://x.test"}, Env: "B"}}); err == nil {
		t.Error("accepted a name twice")
	}
	// Password fields only, unless a secret says any field.
	s, err := New([]Config{{Name: "pw", Origins: []string{"https://x.test"}, Env: "A"}, {Name: "otp", Origins: []string{"https://x.test"}, Env: "B", Fields: FieldsAny}})
	if err != nil {
		t.Fatal(err)
	}
	if s.AnyField("pw") || !s.AnyField("otp") || s.AnyField("none") {
		t.Errorf("AnyField: pw %v, otp %v, none %v", s.AnyField("pw"), s.AnyField("otp"), s.AnyField("none"))
	}
	if x := s.Explain(); !strings.Contains(x, "pw: into password fields") || !strings.Contains(x, "otp: into any field") {
		t.Errorf("explain: %s", x)
	}
}

func TestOrigins(t *testing.T) {
	s, err := New([]Config{{Name: "gh", Origins: []string{"https://GitHub.com:443/", "http://127.0.0.1:8080"}, Env: "X"}})
	if err != nil {
		t.Fatal(err)
	}
	for o, want := range map[string]bool{
		"https://github.com": true, "https://github.com:443": true, "http://github.com": false,
		"https://evil.github.com": false, "http://127.0.0.1:8080": true, "http://127.0.0.1": false,
	} {
		if got := s.Allowed("gh", o); got != want {
			t.Errorf("Allowed(gh, %s) = %v", o, got)
		}
	}
}

func TestSources(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "pw")
	os.WriteFile(f, []byte("from-a-file\n"), 0o600)
	t.Setenv("CDPRELAY_TEST_SECRET", "from-env")
	s, err := New([]Config{
		{Name: "env", Origins: []string{"https://a.test"}, Env: "CDPRELAY_TEST_SECRET"},
		{Name: "file", Origins: []string{"https://a.test"}, File: f},
		{Name: "cmd", Origins: []string{"https://a.test"}, Command: []string{"printf", "  from-a-command \n"}},
		{Name: "failing", Origins: []string{"https://a.test"}, Command: []string{"sh", "-c", "echo the-secret-value; exit 3"}},
		{Name: "missing", Origins: []string{"https://a.test"}, File: filepath.Join(dir, "none")},
		{Name: "unset", Origins: []string{"https://a.test"}, Env: "CDPRELAY_TEST_UNSET"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"env": "from-env", "file": "from-a-file", "cmd": "from-a-command"} {
		v, err := s.Value(context.Background(), name)
		if err != nil || string(v) != want {
			t.Errorf("%s: %q, %v", name, v, err)
		}
	}
	for _, name := range []string{"failing", "missing", "unset", "nope"} {
		_, err := s.Value(context.Background(), name)
		if err == nil || strings.Contains(err.Error(), "the-secret-value") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if strings.Contains(s.Explain(), "from-") {
		t.Fatal("Explain shows a value")
	}
}

func TestParseRef(t *testing.T) {
	for text, want := range map[string][3]any{
		"{{secret:github}}":  {"github", true, false},
		"x{{secret:github}}": {"", false, true},
		"{{secret:github}} ": {"", false, true},
		"{{secret:}}":        {"", false, true},
		"plain":              {"", false, false},
		"{{secret:a b}}":     {"", false, true},
	} {
		n, whole, partial := ParseRef(text)
		if n != want[0] || whole != want[1] || partial != want[2] {
			t.Errorf("ParseRef(%q) = %q %v %v", text, n, whole, partial)
		}
	}
}

func TestLockForms(t *testing.T) {
	secret := `p"ss wörd&=1/+x~*<`
	l := (*Lock)(nil).Add("site", []byte(secret))
	b64 := base64.StdEncoding.EncodeToString([]byte("password=" + secret + "&next=1"))
	jsonForm, _ := json.Marshal(map[string]string{"value": secret})
	// What a browser's URLSearchParams and form posts write (WHATWG
	// application/x-www-form-urlencoded): '*' kept, '~' encoded.
	form := "p%22ss+w%C3%B6rd%26%3D1%2F%2Bx%7E*%3C"
	// encodeURIComponent.
	component := "p%22ss%20w%C3%B6rd%26%3D1%2F%2Bx~*%3C"
	for _, msg := range []string{
		`{"postData":"user=a&password=` + form + `"}`,
		`{"postData":"user=a&password=` + strings.ToLower(form) + `"}`,
		`{"url":"https://a.test/?q=` + component + `"}`,
		`{"postDataEntries":[{"bytes":"` + base64.StdEncoding.EncodeToString([]byte("password="+form+"&next=1")) + `"}]}`,
		`{"postDataEntries":[{"bytes":"` + base64.StdEncoding.EncodeToString([]byte("x=1&password="+form)) + `"}]}`,
		`{"outerHTML":"<p>p\"ss wörd&amp;=1/+x~*&lt;</p>"}`,
		`{"outerHTML":"<input value=\"p&quot;ss wörd&amp;=1/+x~*<\">"}`,
		`{"result":{"value":"` + strings.Trim(string(jsonForm[9:]), `"}`) + `"}}`,
		`{"postData":"user=a&password=` + url.QueryEscape(secret) + `"}`,
		`{"url":"https://a.test/` + url.PathEscape(secret) + `"}`,
		`{"postDataEntries":[{"bytes":"` + b64 + `"}]}`,
		"the text of a title: " + secret,
	} {
		if !l.Contains([]byte(msg)) {
			t.Errorf("not found in %s", msg)
			continue
		}
		out := string(l.Replace(nil, []byte(msg)))
		if strings.Contains(out, secret) || strings.Contains(out, url.QueryEscape(secret)) || l.Contains([]byte(out)) {
			t.Errorf("still there: %s", out)
		}
		shown := out
		var entries struct {
			PostDataEntries []struct {
				Bytes []byte `json:"bytes"`
			} `json:"postDataEntries"`
		}
		if json.Unmarshal([]byte(out), &entries) == nil && len(entries.PostDataEntries) > 0 {
			// Base64 text is decoded, replaced in and encoded again: what
			// the client decodes holds the reference.
			shown = string(entries.PostDataEntries[0].Bytes)
			if !strings.HasPrefix(shown, "password=") && !strings.HasPrefix(shown, "x=1&") {
				t.Errorf("the body decodes to %q", shown)
			}
		}
		if !strings.Contains(shown, "{{secret:site}}") && !strings.Contains(shown, url.QueryEscape("{{secret:site}}")) {
			t.Errorf("no reference in %s", out)
		}
	}
	if l.Contains([]byte(`{"result":{"value":"something else entirely"}}`)) {
		t.Fatal("found in a message without it")
	}
}

func FuzzLock(f *testing.F) {
	f.Add([]byte("s3cret-value"), []byte(`{"a":"xx s3cret-value yy"}`), uint8(3))
	f.Add([]byte("ab"), []byte("abab"), uint8(0))
	f.Fuzz(func(t *testing.T, secret, msg []byte, at uint8) {
		if len(secret) == 0 {
			return
		}
		l := (*Lock)(nil).Add("s", secret)
		i := int(at) % (len(msg) + 1)
		in := append(append(append([]byte(nil), msg[:i]...), secret...), msg[i:]...)
		if looksJSON(in) && bytes.ContainsAny(secret, "\"\\") {
			// In a JSON message a bare quote ends a string and a backslash
			// begins an escape: a value with them is there escaped
			// (FuzzLockEncoded).
			return
		}
		out := l.Replace(nil, in)
		// What stands between the references is what the client reads of
		// the message: none of it may hold the value. A reference next to
		// the message's own bytes can spell the value across the seam (a
		// secret `}"` before a quote): that shows the client nothing it
		// does not already have, the reference and the page's own text.
		for _, piece := range strings.Split(string(out), Ref("s")) {
			if strings.Contains(piece, string(secret)) {
				t.Fatalf("secret %q left in %q (from %q)", secret, out, in)
			}
		}
	})
}

// BenchmarkLock: the outbound scan of a 1 KiB message with 0, 1 and 20
// locked secrets.
func BenchmarkLock(b *testing.B) {
	msg := benchMessage()
	for _, n := range []int{0, 1, 20} {
		var l *Lock
		for i := 0; i < n; i++ {
			l = l.Add("s"+strconvI(i), []byte("correct-horse-battery-"+strconvI(i*7919)))
		}
		b.Run("secrets="+strconvI(n), func(b *testing.B) {
			b.SetBytes(int64(len(msg)))
			b.ReportAllocs()
			for b.Loop() {
				if l != nil && l.Contains(msg) {
					b.Fatal("found")
				}
			}
		})
	}
}

// benchMessage is a Network.requestWillBeSent of 1 KiB.
func benchMessage() []byte {
	msg := []byte(`{"method":"Network.requestWillBeSent","params":{"requestId":"1000.12","loaderId":"AB12","documentURL":"https://example.com/app","request":{"url":"https://example.com/api/items?page=2&sort=desc","method":"GET","headers":{"Accept":"application/json","User-Agent":"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36","Referer":"https://example.com/app"},"mixedContentType":"none","initialPriority":"High","referrerPolicy":"strict-origin-when-cross-origin"},"timestamp":123456.789,"wallTime":1764444660.123,"initiator":{"type":"script","stack":{"callFrames":[{"functionName":"load","scriptId":"17","url":"https://example.com/app.js","lineNumber":120,"columnNumber":14}]}},"redirectHasExtraInfo":false,"type":"Fetch","frameId":"5B1E6D0C1A2B3C4D5E6F","hasUserGesture":false}}`)
	for len(msg) < 1024 {
		msg = append(msg, ' ')
	}
	return msg[:1024]
}

func strconvI(i int) string { return strings.TrimSpace(strings.Repeat(" ", 0) + itoa(i)) }

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}
