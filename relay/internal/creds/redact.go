package creds

import (
	"iter"
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

// IsResult reports whether the result of command method can carry
// credentials: it is to go out redacted.
func IsResult(method string) bool { return credentialResults[method] }

// ResultMethods yields the commands IsResult reports, in no order.
func ResultMethods() iter.Seq[string] { return maps.Keys(credentialResults) }

// defaultCredentialHeaders are always redacted.
var defaultCredentialHeaders = []string{"cookie", "set-cookie", "authorization", "proxy-authorization"}

// Headers is the set of header names (lower case) redacted. It is not
// changed once made: a new set replaces it.
type Headers map[string]bool

// NewHeaders returns the set of the default credential headers and the
// names in extra (any case).
func NewHeaders(extra []string) Headers {
	h := Headers{}
	for _, n := range append(append([]string(nil), defaultCredentialHeaders...), extra...) {
		h[strings.ToLower(strings.TrimSpace(n))] = true
	}
	return h
}

// Has reports whether header name (as written, any case) is in h.
func (h Headers) Has(name []byte) bool {
	var buf [64]byte
	low, ok := wire.LowerASCII(buf[:], name)
	return ok && h[string(low)]
}

// IsEvent reports, from the event's name alone, whether its params are to
// be rewritten.
func IsEvent(method []byte) bool {
	return (hasPrefix(method, "Network.") || hasPrefix(method, "Fetch.") || hasPrefix(method, "Audits.")) &&
		credentialEvents[string(method)]
}

func hasPrefix(b []byte, p string) bool {
	return len(b) >= len(p) && string(b[:len(p)]) == p
}

// Redact appends the params of credential event method to dst, rewritten
// by r. For a Fetch.requestPaused that showed markers, it returns the
// request's id and what is kept of it (its real values), to be put back
// when the client continues the request or, at the response stage, the
// response (Restore); otherwise kept is nil. Redact sets r.Redacted
// itself.
func Redact(dst []byte, r wire.Redactor, method, params []byte) (out []byte, id string, kept *KeptRequest) {
	if string(method) == "Fetch.requestPaused" {
		r.Redacted = func(field, name, value []byte) {
			if kept == nil {
				kept = &KeptRequest{}
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
	dst = r.Redact(dst, params)
	if kept != nil {
		rid := wire.StringField(params, "requestId")
		if len(rid) == 0 {
			return dst, "", nil
		}
		req := wire.Field(params, "request")
		kept.url = string(wire.StringField(req, "url"))
		kept.headers = append([]byte(nil), wire.Field(req, "headers")...)
		return dst, string(rid), kept
	}
	return dst, "", nil
}

// KeptRequest is what the relay keeps of a paused request that carries
// the person's credentials: where it was going, the real values of the
// credential headers it showed as markers (its own and, at the response
// stage, its response's), and all its headers as Chrome gave them. Redact
// makes it; Restore uses it up.
type KeptRequest struct {
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
func (k *KeptRequest) fromResponse(name, marker string) (string, bool) {
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

// without returns a headers object's entries, but the credential headers,
// as the list Fetch.continueRequest takes.
func (h Headers) without(headers []byte) jsontext.Value {
	type entry struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	list := []entry{}
	var m map[string]string
	if jsonv2.Unmarshal(headers, &m) == nil {
		for _, name := range slices.Sorted(maps.Keys(m)) {
			if !h.Has([]byte(name)) {
				list = append(list, entry{name, m[name]})
			}
		}
	}
	b, _ := jsonv2.Marshal(list)
	return b
}
