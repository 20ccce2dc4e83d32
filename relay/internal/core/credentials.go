package core

import (
	"errors"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
	"github.com/cdprelay/cdprelay/relay/internal/creds"
	"github.com/cdprelay/cdprelay/relay/internal/link"
)

// The person's credentials stay in the browser (internal/creds): the
// instance's part, which keeps a paused request's real values in its tab
// and finds them again for the client's continue.

// SetRedactHeaders sets the header names redacted besides the defaults
// (Config.RedactHeaders): a config reload's, in force for every message
// from then on.
func (s *Relay) SetRedactHeaders(extra []string) {
	h := creds.NewHeaders(extra)
	s.credHeaders.Store(&h)
}

// creds is the set of header names redacted now.
func (s *Relay) creds() creds.Headers { return *s.credHeaders.Load() }

// redactEvent returns the params of a credential event, rewritten into a
// pooled buffer the caller returns with link.PutBuf. For a Fetch.requestPaused
// the real values are kept for t's session sid, to be put back when the
// client continues the request or, at the response stage, the response.
func (in *Instance) redactEvent(st *State, t *Tab, sid string, method, params []byte) *[]byte {
	r := wire.Redactor{Sensitive: in.Srv.creds().Has}
	if in.hasTiers() {
		// A redirect to a blind page names it: only its origin is shown.
		r.Rewrite = func(name, value []byte) (string, bool) {
			if !strings.EqualFold(string(name), "location") {
				return "", false
			}
			if web, _ := api.PageScheme(string(value)); !web {
				return "", false // relative: on the site that answered
			}
			if st.UrlAccess(string(value)).Level != AccessBlind {
				return "", false
			}
			return api.Origin(string(value)) + "/", true
		}
	}
	buf := link.GetBuf()
	var id string
	var kept *creds.KeptRequest
	*buf, id, kept = creds.Redact(*buf, r, method, params)
	if kept != nil {
		t.keepPaused(sid+"\x00"+id, kept)
	}
	return buf
}

// maxPausedKept bounds the paused requests whose credentials a tab keeps:
// a client that never continues its requests must not grow it forever.
const maxPausedKept = 4096

// keepPaused records the real credential headers of a paused request.
func (t *Tab) keepPaused(key string, h *creds.KeptRequest) {
	if t.paused == nil {
		t.paused = map[string]*creds.KeptRequest{}
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
// own (creds.Restore). It returns the params to forward.
func (c *ClientConn) restoreCredentials(k *Cmd) ([]byte, Decision, bool) {
	var p map[string]jsontext.Value
	if err := DecodeStruct(k.Params, &p); err != nil {
		return nil, deny(ruleCredentials, "cdprelay: "+cdp.InvalidParams(err).Error()), false
	}
	id, _, _ := exactString(k.Params, "requestId")
	sid := ""
	if k.Route.via != nil && k.Route.via.Child {
		sid = k.Route.via.Id
	}
	var req *creds.KeptRequest
	if t := k.Route.Tab; t != nil {
		c.Inst.Lock()
		req = t.paused[sid+"\x00"+id]
		delete(t.paused, sid+"\x00"+id) // the request is settled either way
		c.Inst.Unlock()
	}
	out, refusal, err := creds.Restore(k.M.Name, k.Params, p, req, c.Inst.Srv.creds())
	switch {
	case errors.Is(err, creds.ErrUnwritten):
		return nil, Decision{}, false
	case err != nil:
		return nil, deny(ruleCredentials, "cdprelay: "+cdp.InvalidParams(err).Error()), false
	case refusal != "":
		return nil, deny(ruleCredentials, refusal), false
	}
	return out, Decision{}, true
}

const ruleCredentials = "relay:credentials"
