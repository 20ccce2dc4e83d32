package relay

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/cdprelay/cdprelay/relay/internal/cdp"
	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/methods"

	"github.com/cdprelay/cdprelay/denylist"
	"github.com/cdprelay/cdprelay/internal/wire"
)

// The relay reads the URL of exactly the commands whose URL the policy
// judges, from the field the policy names.
func TestURLMethodsAgreeWithPolicy(t *testing.T) {
	if got, want := slices.Sorted(maps.Keys(cdp.UrlMethods)), denylist.URLMethods(); !slices.Equal(got, want) {
		t.Fatalf("relay reads the URL of %v, the policy judges %v", got, want)
	}
	for m, key := range cdp.UrlMethods {
		if name, _, _, _ := denylist.URLParam(m); name != key {
			t.Errorf("%s: relay reads %q, the policy names %q", m, key, name)
		}
	}
}

// exactMembers is a reference reading of params' top-level members, the
// way Chrome reads them: keys decoded, compared exactly.
func exactMembers(params []byte) (map[string][]json.RawMessage, bool) {
	out := map[string][]json.RawMessage{}
	dec := json.NewDecoder(bytes.NewReader(params))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, false
		}
		out[tok.(string)] = append(out[tok.(string)], raw)
	}
	return out, true
}

var argsCases = []struct {
	method, params string
	wantErr        bool
	url            string
	hasURL         bool
}{
	{"Page.navigate", `{"url":"https://a.test/"}`, false, "https://a.test/", true},
	{"Page.navigate", `{"URL":"file:///etc/passwd"}`, false, "", false},
	{"Page.navigate", `{"Url":"file:///etc/passwd","url":"https://a.test/"}`, false, "https://a.test/", true},
	{"Page.navigate", `{"u\u0072l":"file:///etc/passwd"}`, false, "file:///etc/passwd", true},
	{"Page.navigate", `{"url":"https://a.test/","url":"file:///etc/passwd"}`, true, "", false},
	{"Page.navigate", `{"url":"https://a.test/","u\u0072l":"file:///etc/passwd"}`, true, "", false},
	{"Page.navigate", `{"url":7}`, true, "", false},
	{"Target.createTarget", `{"url":"about:blank","URL":"file:///etc/passwd"}`, false, "about:blank", true},
	{"Target.createTarget", `{"URL":"file:///etc/passwd"}`, false, "", false},
	{"Target.createTarget", `{"url":"about:blank","background":true,"background":false}`, true, "", false},
	{"Fetch.continueRequest", `{"requestId":"1","url":"https://in.test/","url":"https://out.test/"}`, true, "", false},
	{"Fetch.continueRequest", `{"requestId":"1"}`, false, "", false},
	{"Target.attachToTarget", `{"targetId":"T","Flatten":true}`, false, "", false},
	{"Target.setAutoAttach", `{"autoAttach":true,"flatten":true,"flatten":false}`, true, "", false},
	{"Runtime.evaluate", `{"expression":"1","expression":"2"}`, false, "", false},
	// Input events and storage commands are read field by field (the
	// approval stage's kind of event, the tiers' storage key): a key given
	// twice, at any depth, escaped or not, is refused.
	{"Input.dispatchMouseEvent", `{"type":"mouseMoved","x":1,"y":1,"type":"mousePressed"}`, true, "", false},
	{"Input.dispatchKeyEvent", `{"type":"keyDown","k\u0065y":"a","key":"Enter"}`, true, "", false},
	{"Input.dispatchMouseEvent", `{"type":"mousePressed","x":1,"y":1,"button":"left","clickCount":1}`, false, "", false},
	{"Storage.clearDataForOrigin", `{"origin":"https://a.test","origin":"https://blind.test","storageTypes":"all"}`, true, "", false},
	{"Storage.getStorageKey", `{"storageBucket":{"storageKey":"https://a.test/"},"storageBucket":{"storageKey":"https://blind.test/"}}`, true, "", false},
	{"IndexedDB.requestDatabaseNames", `{"storageBucket":{"storageKey":"https://a.test/","storageKey":"https://blind.test/"}}`, true, "", false},
}

func TestArgsReadAsChrome(t *testing.T) {
	for _, tc := range argsCases {
		var a cdp.Args
		err := methods.ArgsOf(core.LookupMethod([]byte(tc.method)), []byte(tc.params), &a)
		if (err != nil) != tc.wantErr {
			t.Errorf("%s %s: err %v, want error %v", tc.method, tc.params, err, tc.wantErr)
			continue
		}
		if err == nil && (a.Url != tc.url || a.HasURL != tc.hasURL) {
			t.Errorf("%s %s: url %q (%v), want %q (%v)", tc.method, tc.params, a.Url, a.HasURL, tc.url, tc.hasURL)
		}
	}
	var a cdp.Args
	if err := methods.ArgsOf(core.LookupMethod([]byte("Target.attachToTarget")), []byte(`{"targetId":"T","Flatten":true}`), &a); err != nil || a.Flatten != nil {
		t.Errorf("Flatten (not flatten) read as %v, %v", a.Flatten, err)
	}
}

// FuzzArgs: for every method whose params the relay reads, what argsOf
// decodes is what an exact reading gives, and params that give a judged
// key twice are refused.
func FuzzArgs(f *testing.F) {
	for _, tc := range argsCases {
		f.Add(tc.method, []byte(tc.params))
	}
	for m := range cdp.DecodedMethods {
		f.Add(m, []byte(`{"url":"https://a.test/","targetId":"T","sessionId":"S","flatten":true,"files":["/x"]}`))
	}
	f.Fuzz(func(t *testing.T, method string, params []byte) {
		m := core.LookupMethod([]byte(method))
		var a cdp.Args
		if wire.Valid(params) != nil || len(params) == 0 || params[0] != '{' {
			return
		}
		err := methods.ArgsOf(m, params, &a)
		members, ok := exactMembers(params)
		if !ok {
			return
		}
		if m.UrlKey == "" {
			if a.HasURL {
				t.Fatalf("%s has no URL, yet one was read: %q", method, a.Url)
			}
		} else if vs := members[m.UrlKey]; len(vs) > 1 && err == nil {
			t.Fatalf("%s %s: %s given twice, accepted", method, params, m.UrlKey)
		} else if err == nil && len(vs) == 1 {
			var want string
			if json.Unmarshal(vs[0], &want) != nil {
				t.Fatalf("%s %s: a non-string %s accepted", method, params, m.UrlKey)
			}
			if !a.HasURL || a.Url != want {
				t.Fatalf("%s %s: read %q, Chrome reads %q", method, params, a.Url, want)
			}
		} else if err == nil && len(vs) == 0 && a.HasURL {
			t.Fatalf("%s %s: no %s, yet %q read", method, params, m.UrlKey, a.Url)
		}
		if m.Unique && err == nil {
			var v any
			if jsonv2.Unmarshal(params, &v, jsontext.AllowInvalidUTF8(true)) != nil {
				t.Fatalf("%s %s: a key given twice somewhere, accepted", method, params)
			}
		}
		if m.Decode != nil && err == nil {
			for k, vs := range members {
				if len(vs) > 1 {
					t.Fatalf("%s %s: %s given twice, accepted", method, params, k)
				}
			}
			for _, k := range []string{"targetId", "sessionId"} {
				if vs := members[k]; len(vs) == 1 {
					var want string
					if json.Unmarshal(vs[0], &want) == nil {
						got := a.TargetID
						if k == "sessionId" {
							got = a.SessionID
						}
						if (k == "targetId" && usesTargetID(method)) || (k == "sessionId" && method == "Target.detachFromTarget") {
							if got != want {
								t.Fatalf("%s %s: %s read %q, Chrome reads %q", method, params, k, got, want)
							}
						}
					}
				}
			}
		}
	})
}

func usesTargetID(method string) bool {
	switch method {
	case "Target.closeTarget", "Target.activateTarget", "Target.getTargetInfo", "Target.attachToTarget", "Target.detachFromTarget":
		return true
	}
	return false
}
