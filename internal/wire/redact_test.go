package wire

import (
	"encoding/json"
	"strings"
	"testing"
)

func credential(name []byte) bool {
	switch strings.ToLower(string(name)) {
	case "cookie", "set-cookie", "authorization", "proxy-authorization", "x-api-key":
		return true
	}
	return false
}

func TestRedact(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"extra info headers and cookies",
			`{"requestId":"1","associatedCookies":[{"blockedReasons":[],"cookie":{"name":"sid","value":"s3cr3t","domain":"a.test","httpOnly":true}}],"headers":{"Cookie":"sid=s3cr3t","accept":"*/*","AUTHORIZATION":"Basic dTpw"}}`,
			`{"requestId":"1","associatedCookies":[{"blockedReasons":[],"cookie":{"name":"sid","value":"cdprelay-redacted:6","domain":"a.test","httpOnly":true}}],"headers":{"Cookie":"cdprelay-redacted:10","accept":"*/*","AUTHORIZATION":"cdprelay-redacted:10"}}`},
		{"response extra info with raw text and blocked cookies",
			`{"headers":{"set-cookie":"sid=new; HttpOnly"},"headersText":"HTTP/1.1 200 OK\r\nSet-Cookie: sid=new; HttpOnly\r\nX: y\r\n","blockedCookies":[{"cookieLine":"t=1; Path=/","blockedReasons":["x"]}]}`,
			`{"headers":{"set-cookie":"cdprelay-redacted:17"},"headersText":"HTTP/1.1 200 OK\r\nSet-Cookie: cdprelay-redacted:17\r\nX: y\r\n","blockedCookies":[{"cookieLine":"t=cdprelay-redacted:1; Path=/","blockedReasons":["x"]}]}`},
		{"Fetch header lists",
			`{"requestId":"i","request":{"url":"https://a.test/","headers":{"Cookie":"a=b"}},"responseHeaders":[{"name":"Set-Cookie","value":"a=c"},{"name":"Content-Type","value":"text/html"}]}`,
			`{"requestId":"i","request":{"url":"https://a.test/","headers":{"Cookie":"cdprelay-redacted:3"}},"responseHeaders":[{"name":"Set-Cookie","value":"cdprelay-redacted:3"},{"name":"Content-Type","value":"text/html"}]}`},
		{"getCookies: HttpOnly ones only",
			`{"cookies":[{"name":"a","value":"1","httpOnly":false},{"name":"b","value":"22","httpOnly":true}]}`,
			`{"cookies":[{"name":"a","value":"1","httpOnly":false},{"name":"b","value":"cdprelay-redacted:2","httpOnly":true}]}`},
		{"escaped keys and values",
			`{"head\u0065rs":{"Co\u006fkie":"\u0073id=1"}}`,
			`{"head\u0065rs":{"Co\u006fkie":"cdprelay-redacted:5"}}`},
		{"nothing to redact", `{"a":[1,{"b":"c"}],"headers":{"accept":"x"}}`, `{"a":[1,{"b":"c"}],"headers":{"accept":"x"}}`},
		{"an Audits cookie issue's raw line: the cookie's name and attributes stay",
			`{"issue":{"code":"CookieIssue","details":{"cookieIssueDetails":{"cookie":{"name":"sid","path":"/","domain":"a.test"},"rawCookieLine":"sid=s3cr3t; Path=/; HttpOnly; secure; SameSite=None; Max-Age=60; Expires=Wed, 21 Oct 2099 07:28:00 GMT","operation":"SetCookie"}}}}`,
			`{"issue":{"code":"CookieIssue","details":{"cookieIssueDetails":{"cookie":{"name":"sid","path":"/","domain":"a.test"},"rawCookieLine":"sid=cdprelay-redacted:6; Path=/; HttpOnly; secure; SameSite=None; Max-Age=60; Expires=Wed, 21 Oct 2099 07:28:00 GMT","operation":"SetCookie"}}}}`},
		{"a raw line that is not one Set-Cookie: every pair that is no attribute, and text with no name",
			`{"rawCookieLine":" s3cr3t ; Path=/;; other=dTpw;dTpw; x = s3cr3t ","cookieLine":"a=\"s3cr3t;dTpw\"; HttpOnly"}`,
			`{"rawCookieLine":" cdprelay-redacted:6 ; Path=/;; other=cdprelay-redacted:4;cdprelay-redacted:4; x = cdprelay-redacted:6 ","cookieLine":"a=cdprelay-redacted:7;cdprelay-redacted:5; HttpOnly"}`},
		{"a signature base: the credential headers it covers",
			`{"signatureBase":"\"unencoded-digest\";sf: sha-256=:AAA=:\n\"set-cookie\": sid=s3cr3t; HttpOnly\n\"authorization\";req: Basic dTpw\n\"cookie\";req;bs: :czNjcjN0:\n\"accept\";req: */*\n\"@path\";req: /cookie\n\"@signature-params\": (\"set-cookie\" \"authorization\";req);keyid=\"k\";tag=\"ed25519-integrity\""}`,
			`{"signatureBase":"\"unencoded-digest\";sf: sha-256=:AAA=:\n\"set-cookie\": cdprelay-redacted:20\n\"authorization\";req: cdprelay-redacted:10\n\"cookie\";req;bs: cdprelay-redacted:10\n\"accept\";req: */*\n\"@path\";req: /cookie\n\"@signature-params\": (\"set-cookie\" \"authorization\";req);keyid=\"k\";tag=\"ed25519-integrity\""}`},
	} {
		var seen []string
		r := Redactor{Sensitive: credential, Redacted: func(f, n, v []byte) { seen = append(seen, string(f)+":"+string(n)+"="+string(v)) }}
		got := string(r.Redact(nil, []byte(tc.in)))
		if got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("%s: invalid JSON %s", tc.name, got)
		}
		if strings.Contains(got, "s3cr3t") || strings.Contains(got, "dTpw") || strings.Contains(got, "czNjcjN0") {
			t.Errorf("%s: a secret is left: %s", tc.name, got)
		}
	}
}

// Redacted tells which member the headers were in, so that a paused
// request's values and its response's are kept apart.
func TestRedactedField(t *testing.T) {
	var seen []string
	r := Redactor{Sensitive: credential, Redacted: func(f, n, v []byte) { seen = append(seen, string(f)+" "+string(n)+"="+string(v)) }}
	r.Redact(nil, []byte(`{"requestId":"i","request":{"url":"https://a.test/","headers":{"Cookie":"a=b"}},"responseHeaders":[{"name":"Set-Cookie","value":"c=d"},{"name":"set-cookie","value":"e=f"},{"name":"Content-Type","value":"text/html"}]}`))
	if want := []string{"headers Cookie=a=b", "responseHeaders Set-Cookie=c=d", "responseHeaders set-cookie=e=f"}; strings.Join(seen, "|") != strings.Join(want, "|") {
		t.Fatalf("seen %q, want %q", seen, want)
	}
}

// FuzzRedact: the output is valid JSON, and no value of a sensitive header
// the input held (as a header map) survives in it.
func FuzzRedact(f *testing.F) {
	f.Add([]byte(`{"headers":{"Cookie":"sid=s3cr3tvalue"}}`), "s3cr3tvalue")
	f.Add([]byte(`{"x":{"headers":[{"name":"authorization","value":"Bearer s3cr3tvalue"}]}}`), "s3cr3tvalue")
	f.Add([]byte(`{"headersText":"cookie: s3cr3tvalue\n"}`), "s3cr3tvalue")
	f.Add([]byte(`{"rawCookieLine":"sid=s3cr3tvalue; Path=/; x=s3cr3tvalue"}`), "s3cr3tvalue")
	f.Add([]byte(`{"signatureBase":"\"set-cookie\": s3cr3tvalue\n\"@signature-params\": ()"}`), "s3cr3tvalue")
	f.Fuzz(func(t *testing.T, in []byte, secret string) {
		if Valid(in) != nil {
			return
		}
		r := Redactor{Sensitive: credential}
		out := r.Redact(nil, in)
		if err := Valid(out); err != nil {
			t.Fatalf("%s -> invalid %s: %v", in, out, err)
		}
		var v any
		if json.Unmarshal(in, &v) != nil {
			return
		}
		// Every credential header value of a header map in the input is
		// gone from the output.
		var walk func(any, string)
		walk = func(x any, key string) {
			switch x := x.(type) {
			case map[string]any:
				for k, e := range x {
					if key == "headers" || key == "requestHeaders" || key == "responseHeaders" {
						if s, ok := e.(string); ok && credential([]byte(k)) && len(s) >= 8 && !strings.HasPrefix(s, RedactedPrefix) {
							var o any
							json.Unmarshal(out, &o)
							if strings.Contains(toJSON(o), toJSON(s)) {
								t.Fatalf("header %s value %q survived: %s", k, s, out)
							}
						}
					}
					walk(e, k)
				}
			case []any:
				for _, e := range x {
					walk(e, "")
				}
			}
		}
		walk(v, "")
	})
}

func toJSON(v any) string { b, _ := json.Marshal(v); return string(b) }
