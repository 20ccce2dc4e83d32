package access

import (
	"maps"
	"slices"
	"strings"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
)

// A document request's headers, and what the client's settings made of
// them: what a request the navigation backstop holds goes on with, once
// the settings were lifted for where it goes or put back (package
// navhold).

// Header is one of a request's headers, as Fetch.continueRequest takes
// them.
type Header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// clientHeaders are what a tab's (or child's) kept settings put in its
// requests: extra headers, a user agent and its languages.
type clientHeaders struct {
	extra    map[string]string
	ua, lang string
	hints    bool // a user agent that client hints are made from
}

func headersOf[S any](kept []S, setting func(S) (method string, params []byte)) clientHeaders {
	var ch clientHeaders
	for _, k := range kept {
		method, params := setting(k)
		switch method {
		case "Network.setExtraHTTPHeaders":
			var p struct {
				Headers map[string]string `json:"headers"`
			}
			if cdp.DecodeStruct(params, &p) == nil {
				ch.extra = p.Headers
			}
		case "Network.setUserAgentOverride", "Emulation.setUserAgentOverride":
			ch.ua, _, _ = cdp.ExactString(params, "userAgent")
			ch.lang, _, _ = cdp.ExactString(params, "acceptLanguage")
			ch.hints = ch.ua != ""
		}
	}
	return ch
}

// HeaderFix returns the headers a paused document request should go on
// with to a page of access lv, when the ones it has are not those: a
// request Chrome made before a lift or a put back landed (every request of
// a navigation the page starts, and every redirect's), or one to a frame
// of a stricter site than its tab. kept are the client's settings of the
// request's owner (setting reads one's method and params), realUA the
// browser's own user agent ("" when not known). ok is false when its own
// headers are right.
func HeaderFix[S any](kept []S, setting func(S) (method string, params []byte), lv api.Level, hdrs map[string]string, realUA string) (fixed []Header, ok bool) {
	ch := headersOf(kept, setting)
	if len(ch.extra) == 0 && ch.ua == "" {
		return nil, false
	}
	out := make(map[string]string, len(hdrs))
	for k, v := range hdrs {
		out[k] = v
	}
	// A header's name is matched whatever its case, every one that has
	// it: a request that came with two spellings of a planted header
	// loses both.
	del := func(name string) {
		for k := range out {
			if strings.EqualFold(k, name) {
				delete(out, k)
			}
		}
	}
	set := func(name, v string) {
		del(name)
		out[name] = v
	}
	if extra, _ := Lift("Network.setExtraHTTPHeaders"); lv >= extra.At {
		for name := range ch.extra {
			del(name)
		}
		if ch.ua != "" {
			// The browser's own, as the network stack would put it.
			if realUA != "" {
				set("User-Agent", realUA)
			} else {
				del("User-Agent")
			}
			if ch.lang != "" {
				del("Accept-Language")
			}
			for k := range out {
				if strings.HasPrefix(strings.ToLower(k), "sec-ch-ua") {
					delete(out, k)
				}
			}
		}
	} else {
		// In the order of their names, so that two spellings of one
		// header give one answer.
		for _, name := range slices.Sorted(maps.Keys(ch.extra)) {
			set(name, ch.extra[name])
		}
		if ch.ua != "" {
			set("User-Agent", ch.ua)
		}
	}
	if sameHeaders(out, hdrs) {
		return nil, false
	}
	fixed = make([]Header, 0, len(out))
	for k, v := range out {
		fixed = append(fixed, Header{Name: k, Value: v})
	}
	sortHeaders(fixed)
	return fixed, true
}

func sameHeaders(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func sortHeaders(h []Header) {
	for i := 1; i < len(h); i++ {
		for j := i; j > 0 && h[j].Name < h[j-1].Name; j-- {
			h[j], h[j-1] = h[j-1], h[j]
		}
	}
}
