package creds

import (
	"slices"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/cdprelay/cdprelay/internal/wire"
)

// pausedEvent is a Fetch.requestPaused at the response stage, as Chrome
// sends it: the request's cookie and key, and two Set-Cookie lines of one
// length.
const pausedEvent = `{"requestId":"P1","frameId":"F","resourceType":"Document",` +
	`"request":{"url":"https://a.example/inbox","method":"GET","headers":{"Cookie":"sid=person-session","X-Api-Key":"the-api-key","Accept":"text/html"}},` +
	`"responseStatusCode":200,"responseHeaders":[{"name":"Set-Cookie","value":"a=first-line"},{"name":"set-cookie","value":"b=other-line"},{"name":"Content-Type","value":"text/html"}]}`

var m = wire.Marker

// restoreCases are a client's continues of pausedEvent; m is the marker
// of a value of that length.
var restoreCases = []struct {
	name, method, params string
	want                 []string // in the params forwarded
	refused              string   // in the refusal
	invalid              bool
}{
	{name: "the request's markers", method: "Fetch.continueRequest",
		params: `{"requestId":"P1","headers":[{"name":"cookie","value":"` + m(18) + `"},{"name":"x-api-key","value":"` + m(11) + `"}]}`,
		want:   []string{"sid=person-session", "the-api-key"}},
	{name: "no headers", method: "Fetch.continueRequest", params: `{"requestId":"P1"}`, want: []string{`{"requestId":"P1"}`}},
	{name: "a marker of another length", method: "Fetch.continueRequest",
		params: `{"requestId":"P1","headers":[{"name":"Cookie","value":"` + m(17) + `"}]}`, refused: "not this request's"},
	{name: "a cookie of the client's", method: "Fetch.continueRequest",
		params: `{"requestId":"P1","headers":[{"name":"Cookie","value":"sid=the-clients"}]}`, refused: "a cookie of its own"},
	{name: "to another origin with a marker", method: "Fetch.continueRequest",
		params: `{"requestId":"P1","url":"https://b.example/","headers":[{"name":"Cookie","value":"` + m(18) + `"}]}`, refused: "another origin"},
	{name: "to another origin, Chrome's headers", method: "Fetch.continueRequest",
		params: `{"requestId":"P1","url":"https://b.example/"}`, want: []string{`"headers":[{"name":"Accept","value":"text/html"}]`}},
	{name: "the response's lines, in order", method: "Fetch.continueResponse",
		params: `{"requestId":"P1","responseHeaders":[{"name":"Set-Cookie","value":"` + m(12) + `"},{"name":"Set-Cookie","value":"` + m(12) + `"}]}`,
		want:   []string{`"value":"a=first-line"},{"name":"Set-Cookie","value":"b=other-line"`}},
	{name: "a response line once too often", method: "Fetch.continueResponse",
		params:  `{"requestId":"P1","responseHeaders":[{"name":"Set-Cookie","value":"` + m(12) + `"},{"name":"Set-Cookie","value":"` + m(12) + `"},{"name":"Set-Cookie","value":"` + m(12) + `"}]}`,
		refused: "not this response's"},
	{name: "the request's cookie in the response", method: "Fetch.continueResponse",
		params: `{"requestId":"P1","responseHeaders":[{"name":"Cookie","value":"` + m(18) + `"}]}`, refused: "not this response's"},
	{name: "a response that sets a cookie", method: "Fetch.fulfillRequest",
		params: `{"requestId":"P1","responseCode":200,"responseHeaders":[{"name":"Set-Cookie","value":"sid=x"}]}`, refused: "Set-Cookie"},
	{name: "a made response with the response's marker", method: "Fetch.fulfillRequest",
		params: `{"requestId":"P1","responseCode":200,"responseHeaders":[{"name":"Set-Cookie","value":"` + m(12) + `"}]}`, refused: "Set-Cookie"},
	{name: "binary headers that set a cookie", method: "Fetch.fulfillRequest",
		params: `{"requestId":"P1","responseCode":200,"binaryResponseHeaders":"U2V0LUNvb2tpZTogc2lkPXgAQ29udGVudC1UeXBlOiB0ZXh0L2h0bWw="}`, refused: "Set-Cookie"},
	{name: "headers that are not a list", method: "Fetch.continueRequest",
		params: `{"requestId":"P1","headers":{"Cookie":"x"}}`, invalid: true},
}

// A paused request's markers go back as the real values of that request
// (or, in response headers, of its response, each line once and in the
// order shown); whatever would let the client act as the person is
// refused.
func TestRestore(t *testing.T) {
	names := NewHeaders([]string{"X-Api-Key"})
	for _, tc := range restoreCases {
		t.Run(tc.name, func(t *testing.T) {
			red, id, kept := Redact(nil, wire.Redactor{Sensitive: names.Has}, []byte("Fetch.requestPaused"), []byte(pausedEvent))
			if id != "P1" || kept == nil {
				t.Fatalf("kept %q %v of %s", id, kept, red)
			}
			for _, v := range []string{"person-session", "the-api-key", "first-line", "other-line"} {
				if strings.Contains(string(red), v) {
					t.Fatalf("%s shown: %s", v, red)
				}
			}
			var p map[string]jsontext.Value
			if err := jsonv2.Unmarshal([]byte(tc.params), &p); err != nil {
				t.Fatal(err)
			}
			out, refusal, err := Restore(tc.method, []byte(tc.params), p, kept, names)
			switch {
			case tc.invalid:
				if err == nil {
					t.Fatalf("forwarded %s, refused %q", out, refusal)
				}
			case tc.refused != "":
				if !strings.Contains(refusal, tc.refused) || out != nil || err != nil {
					t.Fatalf("forwarded %s, refused %q, %v", out, refusal, err)
				}
			default:
				if refusal != "" || err != nil {
					t.Fatalf("refused %q, %v", refusal, err)
				}
				for _, w := range tc.want {
					if !strings.Contains(string(out), w) {
						t.Errorf("%s lacks %s", out, w)
					}
				}
				if strings.Contains(string(out), wire.RedactedPrefix) {
					t.Errorf("a marker forwarded: %s", out)
				}
			}
		})
	}
}

// Without a kept request, a marker is no one's.
func TestRestoreNothingKept(t *testing.T) {
	params := `{"requestId":"P9","headers":[{"name":"Cookie","value":"` + wire.Marker(16) + `"}]}`
	var p map[string]jsontext.Value
	if err := jsonv2.Unmarshal([]byte(params), &p); err != nil {
		t.Fatal(err)
	}
	if out, refusal, err := Restore("Fetch.continueRequest", []byte(params), p, nil, NewHeaders(nil)); refusal == "" || out != nil || err != nil {
		t.Fatalf("forwarded %s, refused %q, %v", out, refusal, err)
	}
}

// FuzzRestore: whatever the client continues a paused request with, what
// is forwarded carries no marker in its headers, no cookie but the
// request's own, and no Set-Cookie in a response the client makes.
func FuzzRestore(f *testing.F) {
	methods := []string{"Fetch.continueRequest", "Fetch.continueResponse", "Fetch.fulfillRequest"}
	for _, tc := range restoreCases {
		f.Add(byte(slices.Index(methods, tc.method)), []byte(tc.params))
	}
	names := NewHeaders([]string{"X-Api-Key"})
	f.Fuzz(func(t *testing.T, which byte, params []byte) {
		method := methods[int(which)%len(methods)]
		var p map[string]jsontext.Value
		if jsonv2.Unmarshal(params, &p) != nil {
			return
		}
		_, _, kept := Redact(nil, wire.Redactor{Sensitive: names.Has}, []byte("Fetch.requestPaused"), []byte(pausedEvent))
		out, refusal, err := Restore(method, params, p, kept, names)
		if refusal != "" || err != nil {
			if out != nil {
				t.Fatalf("refused (%q, %v) and forwarded %s", refusal, err, out)
			}
			return
		}
		type header struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		}
		var fwd struct {
			Headers         []header `json:"headers"`
			ResponseHeaders []header `json:"responseHeaders"`
		}
		if jsonv2.Unmarshal(out, &fwd) != nil {
			return // not lists: Chrome refuses them, as the relay forwarded them
		}
		for _, h := range append(fwd.Headers, fwd.ResponseHeaders...) {
			if strings.HasPrefix(h.Value, wire.RedactedPrefix) {
				t.Fatalf("a marker forwarded: %s", out)
			}
		}
		for _, h := range fwd.Headers {
			if strings.EqualFold(h.Name, "cookie") && method != "Fetch.fulfillRequest" && h.Value != "sid=person-session" {
				t.Fatalf("a cookie of the client's forwarded: %s", out)
			}
		}
		if method == "Fetch.fulfillRequest" {
			for _, h := range append(fwd.Headers, fwd.ResponseHeaders...) {
				if strings.EqualFold(h.Name, "set-cookie") {
					t.Fatalf("a response the client makes sets a cookie: %s", out)
				}
			}
		}
	})
}
