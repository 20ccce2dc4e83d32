package creds

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/api"
)

// ErrUnwritten is Restore's error for params it could not write again.
var ErrUnwritten = errors.New("the restored params could not be written")

// Restore puts back the real values of the markers in the headers of a
// client's Fetch.continueRequest, continueResponse or fulfillRequest
// (method; params as sent, p as decoded), and refuses a marker that is
// not this request's (in response headers, this response's), a Cookie
// the client made up, and Set-Cookie in a response it makes or that is
// not the paused response's own. req is what Redact kept of the paused
// request (nil: nothing), now the caller's; redacted are the credential
// headers. p may be changed.
//
// It returns the params to forward; or why the command is refused, for
// the client; or an error: ErrUnwritten, or the decoder's for a header
// list it could not read (to be answered as invalid params).
func Restore(method string, params []byte, p map[string]jsontext.Value, req *KeptRequest, redacted Headers) (out []byte, refusal string, err error) {
	var kept map[string]string
	elsewhere := false
	if req != nil {
		kept = req.creds
		if raw, ok := p["url"]; ok && method == "Fetch.continueRequest" {
			var u string
			if jsonv2.Unmarshal(raw, &u) == nil && u != "" && api.Origin(u) != api.Origin(req.url) {
				// Sent elsewhere, the request may not take the person's
				// credentials along: not the ones it showed as markers,
				// nor the ones Chrome would send with its own headers.
				elsewhere, kept = true, nil
				if _, ok := p["headers"]; !ok {
					p["headers"] = redacted.without(req.headers)
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
			return nil, "", err
		}
		for i, h := range hs {
			low := strings.ToLower(h.Name)
			isResponse := field == "responseHeaders" || method == "Fetch.fulfillRequest"
			marker := strings.HasPrefix(h.Value, wire.RedactedPrefix)
			// Continuing a response, the client may hand Chrome back the
			// Set-Cookie lines its server sent (restored below, or refused
			// when they are not this response's); any other Set-Cookie in
			// a response is the client's own.
			if isResponse && low == "set-cookie" && (!marker || method != "Fetch.continueResponse") {
				return nil, "Denied by cdprelay policy: a response the client makes may not set the person's cookies (Set-Cookie)", nil
			}
			if marker {
				if elsewhere {
					return nil, "Denied by cdprelay policy: a request continued to another origin may not carry the person's credentials (header " + h.Name + ")", nil
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
					return nil, "Denied by cdprelay policy: header " + h.Name + " carries a redacted value that is not this " + whose, nil
				}
				hs[i].Value = real
				changed = true
				continue
			}
			if !isResponse && low == "cookie" {
				return nil, "Denied by cdprelay policy: a client may not send a cookie of its own as the person (Cookie header)", nil
			}
		}
		if changed {
			b, err := jsonv2.Marshal(hs)
			if err != nil {
				return nil, "", ErrUnwritten
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
						return nil, "Denied by cdprelay policy: a response the client makes may not set the person's cookies (Set-Cookie)", nil
					}
				}
			}
		}
	}
	if !changed {
		return params, "", nil
	}
	b, err := jsonv2.Marshal(p, jsonv2.Deterministic(true))
	if err != nil {
		return nil, "", ErrUnwritten
	}
	return b, "", nil
}
