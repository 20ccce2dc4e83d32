package access

import (
	"encoding/json"
	"testing"

	"github.com/cdprelay/cdprelay/relay/internal/api"
)

type setting struct {
	method string
	params []byte
}

func settingOf(s setting) (string, []byte) { return s.method, s.params }

// TestHeaderFixCases: what a held document request goes on with, by the
// access of where it goes. (The relay's TestHeaderFix runs the same
// through the core.)
func TestHeaderFixCases(t *testing.T) {
	kept := []setting{
		{"Network.setExtraHTTPHeaders", []byte(`{"headers":{"x-planted":"1"}}`)},
		{"Emulation.setUserAgentOverride", []byte(`{"userAgent":"planted","acceptLanguage":"fr"}`)},
	}
	for _, tc := range []struct {
		name    string
		kept    []setting
		lv      api.Level
		headers map[string]string
		want    string // the headers' JSON; "" for none to change
	}{
		{"blind: planted ones out, the browser's agent back", kept, api.Blind,
			map[string]string{"X-Planted": "1", "x-PLANTED": "2", "User-Agent": "planted", "Accept-Language": "fr", "Sec-CH-UA": `"x"`, "Accept": "a"},
			`[{"name":"Accept","value":"a"},{"name":"User-Agent","value":"Real/1.0"}]`},
		{"read-only: the same", kept, api.ReadOnly, map[string]string{"X-PLANTED": "1", "Accept": "a"},
			`[{"name":"Accept","value":"a"},{"name":"User-Agent","value":"Real/1.0"}]`},
		{"full, made without them: put in", kept, api.Full, map[string]string{"Accept": "a", "user-agent": "Real/1.0"},
			`[{"name":"Accept","value":"a"},{"name":"User-Agent","value":"planted"},{"name":"x-planted","value":"1"}]`},
		{"full, made with them: as it is", kept, api.Full, map[string]string{"Accept": "a", "User-Agent": "planted", "x-planted": "1"}, ""},
		{"blind, the extra headers only, made without: as it is", kept[:1], api.Blind, map[string]string{"Accept": "a"}, ""},
		{"nothing kept: as it is", nil, api.Blind, map[string]string{"X-Planted": "1"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fix, ok := HeaderFix(tc.kept, settingOf, tc.lv, tc.headers, "Real/1.0")
			got := ""
			if ok {
				b, _ := json.Marshal(fix)
				got = string(b)
			}
			if got != tc.want {
				t.Fatalf("got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// FuzzHeaderFix: whatever the client's settings and the request's
// headers, nothing panics, one input gives one answer, and the headers it
// gives are right as they are (a second look changes nothing).
func FuzzHeaderFix(f *testing.F) {
	f.Add([]byte(`{"headers":{"x-planted":"1","X-Planted":"2"}}`), []byte(`{"userAgent":"planted","acceptLanguage":"fr"}`), "X-PLANTED", "3", uint8(2), "Real/1.0")
	f.Add([]byte(`{"headers":{}}`), []byte(`{"userAgent":""}`), "sec-ch-ua", "x", uint8(0), "")
	f.Add([]byte(`not json`), []byte(`{"userAgent":"a","userAgent":"b"}`), "User-Agent", "a", uint8(1), "Real")
	f.Fuzz(func(t *testing.T, extra, ua []byte, name, value string, level uint8, real string) {
		kept := []setting{{"Network.setExtraHTTPHeaders", extra}, {"Emulation.setUserAgentOverride", ua}}
		lv := api.Level(level % 3)
		hdrs := map[string]string{name: value, "Accept": "a"}
		fix, ok := HeaderFix(kept, settingOf, lv, hdrs, real)
		again, ok2 := HeaderFix(kept, settingOf, lv, hdrs, real)
		if ok != ok2 || len(fix) != len(again) {
			t.Fatalf("two answers: %v %v / %v %v", ok, fix, ok2, again)
		}
		for i := range fix {
			if fix[i] != again[i] {
				t.Fatalf("two answers: %v / %v", fix, again)
			}
		}
		if !ok {
			return
		}
		next := map[string]string{}
		for _, h := range fix {
			next[h.Name] = h.Value
		}
		if more, changed := HeaderFix(kept, settingOf, lv, next, real); changed {
			t.Fatalf("the fixed headers %v were fixed again: %v", fix, more)
		}
	})
}
