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
	"github.com/cdprelay/cdprelay/relay/internal/link"
)

// The person's credentials stay in the browser.
//
// The rule: nothing reaches a client that a script in the page could not
// read itself. Chrome reports the person's session cookies (HttpOnly ones
// included) and cached credentials in a few events and results — the
// ExtraInfo events behind Playwright's allHeaders(), HAR and traces,
// Fetch.requestPaused, WebSocket handshakes, Network.loadNetworkResource,
// and Audits.issueAdded, whose cookie issues quote the raw Set-Cookie line
// and whose signature issues the signature base built from the headers —
// and those alone are decoded, on the way out, and rewritten with
// wire.Redactor: credential headers (Cookie, Set-Cookie, Authorization,
// Proxy-Authorization and the configured names) and cookie values become
// "cdprelay-redacted:<length>". Every other message keeps the zero-copy
// path.
//
// Interception keeps working: the relay remembers the real values of a
// paused request's headers, and when the client continues it with the
// markers it was shown (route.continue({headers: request.headers()})), the
// relay puts them back. So it does for a paused response's own headers,
// Set-Cookie included, when the client continues the response with them
// (Fetch.continueResponse): Chrome gets back the lines its server sent,
// whole, attributes and all. A marker that does not belong to that
// request (or, in a response, to that response) is refused, and so is a
// Cookie header the client makes up, and any Set-Cookie in a response the
// client makes or that is not the response's own: the client cannot send
// its own cookie as the person, set one in the person's browser, or have a
// request's credentials come back to the page as a response header it can
// read. Playwright's route.fetch() runs in the client's process, outside
// the browser: it sends the marker, never the cookie.

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
	"Audits.issueAdded":                          true,
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

// SetRedactHeaders sets the header names redacted besides the defaults
// (Config.RedactHeaders): a config reload's, in force for every message
// from then on.
func (s *Server) SetRedactHeaders(extra []string) {
	h := newCredentialHeaders(extra)
	s.credHeaders.Store(&h)
}

// creds is the set of header names redacted now.
func (s *Server) creds() credentialHeaders { return *s.credHeaders.Load() }

func (h credentialHeaders) has(name []byte) bool {
	var buf [64]byte
	low, ok := wire.LowerASCII(buf[:], name)
	return ok && h[string(low)]
}

// isCredentialEvent reports, from the event's name alone, whether its
// params are to be rewritten.
func isCredentialEvent(method []byte) bool {
	return (bytesHasPrefix(method, "Network.") || bytesHasPrefix(method, "Fetch.") || bytesHasPrefix(method, "Audits.")) &&
		credentialEvents[string(method)]
}

// redactEvent returns the params of a credential event, rewritten into a
// pooled buffer the caller returns with link.PutBuf. For a Fetch.requestPaused
// the real values are kept for t's session sid, to be put back when the
// client continues the request or, at the response stage, the response.
func (in *Instance) redactEvent(st *state, t *tab, sid string, method, params []byte) *[]byte {
	r := wire.Redactor{Sensitive: in.srv.creds().has}
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
	var kept *keptRequest
	if string(method) == "Fetch.requestPaused" {
		r.Redacted = func(field, name, value []byte) {
			if kept == nil {
				kept = &keptRequest{}
			}
			low := strings.ToLower(string(name))
			if string(field) == "responseHeaders" {
				// The response's, apart from the request's: one may not
				// pass for the other. Set-Cookie comes once a line.
				if kept.response == nil {
					kept.response = map[string][]string{}
				}
				kept.response[low] = append(kept.response[low], string(value))
				return
			}
			if kept.creds == nil {
				kept.creds = map[string]string{}
			}
			kept.creds[low] = string(value)
		}
	}
	buf := link.GetBuf()
	*buf = r.Redact(*buf, params)
	if kept != nil {
		if id := wire.StringField(params, "requestId"); len(id) > 0 {
			req := wire.Field(params, "request")
			kept.url = string(wire.StringField(req, "url"))
			kept.headers = append([]byte(nil), wire.Field(req, "headers")...)
			t.keepPaused(sid+"\x00"+string(id), kept)
		}
	}
	return buf
}

// keptRequest is what the relay keeps of a paused request that carries
// the person's credentials: where it was going, the real values of the
// credential headers it showed as markers (its own and, at the response
// stage, its response's), and all its headers as Chrome gave them.
type keptRequest struct {
	url      string
	creds    map[string]string   // the request's, by lower-case name
	response map[string][]string // the response's, by lower-case name, in the order shown
	headers  []byte              // the request's headers object
}

// fromResponse takes the real value of a marker shown for a header of the
// paused response: the first value of that header not yet taken whose
// marker it is. Two values of one length have the same marker, so they go
// back in the order they were shown, and each once. k is owned by the
// caller (it is no longer in the tab's paused map).
func (k *keptRequest) fromResponse(name, marker string) (string, bool) {
	if k == nil {
		return "", false
	}
	vs := k.response[name]
	for i, v := range vs {
		if wire.Marker(len(v)) == marker {
			k.response[name] = slices.Delete(vs, i, i+1)
			return v, true
		}
	}
	return "", false
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
// fulfillRequest, and refuses a marker that is not this request's (in
// response headers, this response's), a Cookie the client made up, and
// Set-Cookie in a response it makes or that is not the paused response's
// own. It returns the params to forward.
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
					p["headers"] = c.inst.srv.creds().without(req.headers)
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
			marker := strings.HasPrefix(h.Value, wire.RedactedPrefix)
			// Continuing a response, the client may hand Chrome back the
			// Set-Cookie lines its server sent (restored below, or refused
			// when they are not this response's); any other Set-Cookie in
			// a response is the client's own.
			if isResponse && low == "set-cookie" && (!marker || k.m.name != "Fetch.continueResponse") {
				return nil, deny(ruleCredentials, "Denied by cdprelay policy: a response the client makes may not set the person's cookies (Set-Cookie)"), false
			}
			if marker {
				if elsewhere {
					return nil, deny(ruleCredentials, "Denied by cdprelay policy: a request continued to another origin may not carry the person's credentials (header "+h.Name+")"), false
				}
				real, ok, whose := "", false, "request's"
				if isResponse {
					// Only the response's own values: a request's
					// credentials put in a response would reach the page as
					// a header its scripts can read.
					real, ok = req.fromResponse(low, h.Value)
					whose = "response's"
				} else {
					real, ok = kept[low]
					ok = ok && wire.Marker(len(real)) == h.Value
				}
				if !ok {
					return nil, deny(ruleCredentials, "Denied by cdprelay policy: header "+h.Name+" carries a redacted value that is not this "+whose), false
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
