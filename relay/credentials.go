package relay

import (
	"bytes"
	"encoding/base64"
	"maps"
	"slices"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/cdprelay/cdprelay/internal/wire"
)

// The person's credentials stay in the browser.
//
// The rule: nothing reaches a client that a script in the page could not
// read itself. Chrome reports the person's session cookies (HttpOnly ones
// included) and cached credentials in a few events and results — the
// ExtraInfo events behind Playwright's allHeaders(), HAR and traces,
// Fetch.requestPaused, WebSocket handshakes, Network.loadNetworkResource —
// and those alone are decoded, on the way out, and rewritten with
// wire.Redactor: credential headers (Cookie, Set-Cookie, Authorization,
// Proxy-Authorization and the configured names) and cookie values become
// "cdprelay-redacted:<length>". Every other message keeps the zero-copy
// path.
//
// Interception keeps working: the relay remembers the real values of a
// paused request's headers, and when the client continues it with the
// markers it was shown (route.continue({headers: request.headers()})), the
// relay puts them back. A marker that does not belong to that request is
// refused, and so is a Cookie header the client makes up: the client
// cannot send its own cookie as the person. Playwright's route.fetch()
// runs in the client's process, outside the browser: it sends the marker,
// never the cookie.

// credentialEvents are the events whose params can carry credentials.
var credentialEvents = map[string]bool{
	"Network.requestWillBeSent":                  true,
	"Network.requestWillBeSentExtraInfo":         true,
	"Network.responseReceived":                   true,
	"Network.responseReceivedExtraInfo":          true,
	"Network.responseReceivedEarlyHints":         true,
	"Network.webSocketWillSendHandshakeRequest":  true,
	"Network.webSocketHandshakeResponseReceived": true,
	"Network.signedExchangeReceived":             true,
	"Network.requestIntercepted":                 true,
	"Fetch.requestPaused":                        true,
	"Fetch.authRequired":                         true,
}

// credentialResults are the commands whose results can carry them.
var credentialResults = map[string]bool{
	"Network.loadNetworkResource": true,
	"Network.getCookies":          true,
	"Network.getAllCookies":       true,
	"Storage.getCookies":          true,
	"Page.getCookies":             true,
}

// defaultCredentialHeaders are always redacted.
var defaultCredentialHeaders = []string{"cookie", "set-cookie", "authorization", "proxy-authorization"}

// credentialHeaders is the set of header names (lower case) redacted.
type credentialHeaders map[string]bool

func newCredentialHeaders(extra []string) credentialHeaders {
	h := credentialHeaders{}
	for _, n := range append(append([]string(nil), defaultCredentialHeaders...), extra...) {
		h[strings.ToLower(strings.TrimSpace(n))] = true
	}
	return h
}

func (h credentialHeaders) has(name []byte) bool {
	if len(name) > 64 {
		return false
	}
	var low [64]byte
	for i, c := range name {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		low[i] = c
	}
	return h[string(low[:len(name)])]
}

// isCredentialEvent reports, from the event's name alone, whether its
// params are to be rewritten.
func isCredentialEvent(method []byte) bool {
	return (bytesHasPrefix(method, "Network.") || bytesHasPrefix(method, "Fetch.")) && credentialEvents[string(method)]
}

// redactEvent returns the params of a credential event, rewritten into a
// pooled buffer the caller returns with putBuf. For a Fetch.requestPaused
// the real values are kept for t's session sid, to be put back when the
// client continues the request.
func (in *Instance) redactEvent(st *state, t *tab, sid string, method, params []byte) *[]byte {
	r := wire.Redactor{Sensitive: in.srv.credHeaders.has}
	if in.hasTiers() {
		// A redirect to a blind page names it: only its origin is shown.
		r.Rewrite = func(name, value []byte) (string, bool) {
			if !strings.EqualFold(string(name), "location") {
				return "", false
			}
			if web, _ := pageScheme(string(value)); !web {
				return "", false // relative: on the site that answered
			}
			if st.urlAccess(string(value)).level != accessBlind {
				return "", false
			}
			return origin(string(value)) + "/", true
		}
	}
	var kept map[string]string
	if string(method) == "Fetch.requestPaused" {
		r.Redacted = func(name, value []byte) {
			if kept == nil {
				kept = map[string]string{}
			}
			kept[strings.ToLower(string(name))] = string(value)
		}
	}
	buf := getBuf()
	*buf = r.Redact(*buf, params)
	if kept != nil {
		if id := wire.StringField(params, "requestId"); len(id) > 0 {
			req := wire.Field(params, "request")
			t.keepPaused(sid+"\x00"+string(id), &keptRequest{
				url:     string(wire.StringField(req, "url")),
				creds:   kept,
				headers: append([]byte(nil), wire.Field(req, "headers")...),
			})
		}
	}
	return buf
}

// keptRequest is what the relay keeps of a paused request that carries
// the person's credentials: where it was going, the real values of the
// credential headers it showed as markers, and all its headers as Chrome
// gave them.
type keptRequest struct {
	url     string
	creds   map[string]string // by lower-case name
	headers []byte            // the request's headers object
}

// maxPausedKept bounds the paused requests whose credentials a tab keeps:
// a client that never continues its requests must not grow it forever.
const maxPausedKept = 4096

// keepPaused records the real credential headers of a paused request.
func (t *tab) keepPaused(key string, h *keptRequest) {
	if t.paused == nil {
		t.paused = map[string]*keptRequest{}
	}
	if len(t.paused) >= maxPausedKept {
		for k := range t.paused {
			delete(t.paused, k)
			break
		}
	}
	t.paused[key] = h
}

// restoreCredentials puts back the real values of the markers in the
// headers of a client's Fetch.continueRequest, continueResponse or
// fulfillRequest, and refuses a marker that is not this request's, a
// Cookie the client made up, and Set-Cookie in a response it makes. It
// returns the params to forward.
func (c *clientConn) restoreCredentials(k *cmd) ([]byte, Decision, bool) {
	var p map[string]jsontext.Value
	if err := decodeStruct(k.params, &p); err != nil {
		return nil, deny(ruleCredentials, "cdprelay: "+invalidParams(err).Error()), false
	}
	id, _, _ := exactString(k.params, "requestId")
	sid := ""
	if k.r.via != nil && k.r.via.child {
		sid = k.r.via.id
	}
	var req *keptRequest
	if t := k.r.tab; t != nil {
		c.inst.lock()
		req = t.paused[sid+"\x00"+id]
		delete(t.paused, sid+"\x00"+id) // the request is settled either way
		c.inst.unlock()
	}
	var kept map[string]string
	elsewhere := false
	if req != nil {
		kept = req.creds
		if raw, ok := p["url"]; ok && k.m.name == "Fetch.continueRequest" {
			var u string
			if jsonv2.Unmarshal(raw, &u) == nil && u != "" && origin(u) != origin(req.url) {
				// Sent elsewhere, the request may not take the person's
				// credentials along: not the ones it showed as markers,
				// nor the ones Chrome would send with its own headers.
				elsewhere, kept = true, nil
				if _, ok := p["headers"]; !ok {
					p["headers"] = c.inst.srv.credHeaders.without(req.headers)
				}
			}
		}
	}
	changed := elsewhere
	for _, field := range []string{"headers", "responseHeaders"} {
		raw, ok := p[field]
		if !ok {
			continue
		}
		var hs []struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		}
		if err := jsonv2.Unmarshal(raw, &hs); err != nil {
			return nil, deny(ruleCredentials, "cdprelay: "+invalidParams(err).Error()), false
		}
		for i, h := range hs {
			low := strings.ToLower(h.Name)
			isResponse := field == "responseHeaders" || k.m.name == "Fetch.fulfillRequest"
			if isResponse && low == "set-cookie" {
				return nil, deny(ruleCredentials, "Denied by cdprelay policy: a response the client makes may not set the person's cookies (Set-Cookie)"), false
			}
			if strings.HasPrefix(h.Value, wire.RedactedPrefix) {
				real, ok := kept[low]
				if elsewhere {
					return nil, deny(ruleCredentials, "Denied by cdprelay policy: a request continued to another origin may not carry the person's credentials (header "+h.Name+")"), false
				}
				if !ok || wire.Marker(len(real)) != h.Value {
					return nil, deny(ruleCredentials, "Denied by cdprelay policy: header "+h.Name+" carries a redacted value that is not this request's"), false
				}
				hs[i].Value = real
				changed = true
				continue
			}
			if !isResponse && low == "cookie" {
				return nil, deny(ruleCredentials, "Denied by cdprelay policy: a client may not send a cookie of its own as the person (Cookie header)"), false
			}
		}
		if changed {
			b, err := jsonv2.Marshal(hs)
			if err != nil {
				return nil, Decision{}, false
			}
			p[field] = b
		}
	}
	if raw, ok := p["binaryResponseHeaders"]; ok {
		var enc string
		if jsonv2.Unmarshal(raw, &enc) == nil {
			if dec, err := base64.StdEncoding.DecodeString(enc); err == nil {
				for _, line := range bytes.Split(dec, []byte{0}) {
					if n, _, ok := bytes.Cut(line, []byte(":")); ok && strings.EqualFold(strings.TrimSpace(string(n)), "set-cookie") {
						return nil, deny(ruleCredentials, "Denied by cdprelay policy: a response the client makes may not set the person's cookies (Set-Cookie)"), false
					}
				}
			}
		}
	}
	if !changed {
		return k.params, Decision{}, true
	}
	b, err := jsonv2.Marshal(p, jsonv2.Deterministic(true))
	if err != nil {
		return nil, Decision{}, false
	}
	return b, Decision{}, true
}

const ruleCredentials = "relay:credentials"

// without returns a headers object's entries, but the credential headers,
// as the list Fetch.continueRequest takes.
func (h credentialHeaders) without(headers []byte) jsontext.Value {
	type entry struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	list := []entry{}
	var m map[string]string
	if jsonv2.Unmarshal(headers, &m) == nil {
		for _, name := range slices.Sorted(maps.Keys(m)) {
			if !h.has([]byte(name)) {
				list = append(list, entry{name, m[name]})
			}
		}
	}
	b, _ := jsonv2.Marshal(list)
	return b
}
