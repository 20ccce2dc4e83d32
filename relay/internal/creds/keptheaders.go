package creds

import (
	"errors"
	"strings"

	"github.com/cdprelay/cdprelay/relay/internal/core"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
	"github.com/cdprelay/cdprelay/relay/internal/link"
)

// The person's credentials stay in the browser (internal/creds): the
// instance's part, which keeps a paused request's real values in its tab
// and finds them again for the client's continue.

// SetRedactHeaders sets the header names redacted besides the defaults
// (Config.RedactHeaders): a config reload's, in force for every message
// from then on.
func SetRedactHeaders(s *core.Relay, extra []string) {
	h := NewHeaders(extra)
	relaySlot.Of(s).Store(&h)
}

// credsOf is the set of header names redacted now.
func credsOf(s *core.Relay) Headers { return *relaySlot.Of(s).Load() }

// redactEvent returns the params of a credential event, rewritten into a
// pooled buffer the caller returns with link.PutBuf. For a Fetch.requestPaused
// the real values are kept for t's session sid, to be put back when the
// client continues the request or, at the response stage, the response.
func redactEvent(in *core.Instance, st *core.State, t *core.Tab, sid string, method, params []byte) *[]byte {
	r := wire.Redactor{Sensitive: credsOf(in.Srv).Has}
	if in.HasTiers() {
		// A redirect to a blind page names it: only its origin is shown.
		r.Rewrite = func(name, value []byte) (string, bool) {
			if !strings.EqualFold(string(name), "location") {
				return "", false
			}
			if web, _ := api.PageScheme(string(value)); !web {
				return "", false // relative: on the site that answered
			}
			if st.UrlAccess(string(value)).Level != api.Blind {
				return "", false
			}
			return api.Origin(string(value)) + "/", true
		}
	}
	buf := link.GetBuf()
	var id string
	var kept *KeptRequest
	*buf, id, kept = Redact(*buf, r, method, params)
	if kept != nil {
		keepPaused(t, sid+"\x00"+id, kept)
	}
	return buf
}

// maxPausedKept bounds the paused requests whose credentials a tab keeps:
// a client that never continues its requests must not grow it forever.
const maxPausedKept = 4096

// keepPaused records the real credential headers of a paused request.
func keepPaused(t *core.Tab, key string, h *KeptRequest) {
	if tabSlot.Of(t).paused == nil {
		tabSlot.Of(t).paused = map[string]*KeptRequest{}
	}
	if len(tabSlot.Of(t).paused) >= maxPausedKept {
		for k := range tabSlot.Of(t).paused {
			delete(tabSlot.Of(t).paused, k)
			break
		}
	}
	tabSlot.Of(t).paused[key] = h
}

// restoreCredentials puts back the real values of the markers in the
// headers of a client's Fetch.continueRequest, continueResponse or
// fulfillRequest, and refuses a marker that is not this request's (in
// response headers, this response's), a Cookie the client made up, and
// Set-Cookie in a response it makes or that is not the paused response's
// own (creds.Restore). It returns the params to forward.
func restoreCredentials(c *core.ClientConn, k *core.Cmd) ([]byte, core.Decision, bool) {
	var p map[string]jsontext.Value
	if err := core.DecodeStruct(k.Params, &p); err != nil {
		return nil, core.Denial(api.RuleCredentials, "cdprelay: "+cdp.InvalidParams(err).Error()), false
	}
	id, _, _ := core.ExactString(k.Params, "requestId")
	sid := ""
	if k.Route.Via != nil && k.Route.Via.Child {
		sid = k.Route.Via.Id
	}
	var req *KeptRequest
	if t := k.Route.Tab; t != nil {
		c.Inst.Lock()
		req = tabSlot.Of(t).paused[sid+"\x00"+id]
		delete(tabSlot.Of(t).paused, sid+"\x00"+id) // the request is settled either way
		c.Inst.Unlock()
	}
	out, refusal, err := Restore(k.M.Name, k.Params, p, req, credsOf(c.Inst.Srv))
	switch {
	case errors.Is(err, ErrUnwritten):
		return nil, core.Decision{}, false
	case err != nil:
		return nil, core.Denial(api.RuleCredentials, "cdprelay: "+cdp.InvalidParams(err).Error()), false
	case refusal != "":
		return nil, core.Denial(api.RuleCredentials, refusal), false
	}
	return out, core.Decision{}, true
}
