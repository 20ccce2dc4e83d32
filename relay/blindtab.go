package relay

import (
	"strings"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	tier "github.com/cdprelay/cdprelay/relay/internal/tiers"
)

// shownOrigin is the origin a blind tab shows the client: where it is on
// its way to, when that is what made it blind, or where it is.
func (t *tab) shownOrigin() string {
	if t.navTo != "" {
		return api.Origin(t.navTo)
	}
	return api.Origin(t.docURL)
}

// blindHistory reduces the entries of a Page.getNavigationHistory result
// that are on pages automation may not see to their origin, with no title
// (tier.BlindHistory).
func (in *Instance) blindHistory(result []byte) []byte {
	st := &in.st // computeAccess of a page reads only the policy
	return tier.BlindHistory(result, func(u string) bool { return st.urlAccess(u).Level == accessBlind })
}

// blindStandIn answers, on a blind tab, the commands a client sends to set
// a page up (Playwright on every page it finds): as if they had worked,
// without any of them reaching the page. Its worlds are stand-ins that
// refuse whatever is run in them; what it sets is not applied. Without
// this, a client that finds a tab already blind would wait for good for a
// page it can never use, and not use it again once it leaves. It reports
// whether it answered k.
func (c *clientConn) blindStandIn(k *cmd) bool {
	if k.ask.Verdict == Ask {
		return false // what needs a person's approval is not acknowledged unasked
	}
	in := c.inst
	frame := k.r.tab.targetID
	if k.r.via.child {
		frame = k.r.via.targetID
	}
	switch name := k.m.name; {
	case name == "Runtime.enable":
		// Forwarded (its events are withheld); the client is shown the
		// page's main world as a stand-in (not again for the relay's own
		// Runtime.enable after a resume: the client keeps what it was shown).
		if k.own {
			return false
		}
		c.event("Runtime.executionContextCreated", k.r.replyTo, map[string]any{"context": map[string]any{
			"id": in.fakeContext.Add(1), "origin": k.r.tab.shownOrigin(), "name": "", "uniqueId": "cdprelay-blind-" + randHex(8),
			"auxData": map[string]any{"isDefault": true, "type": "default", "frameId": frame},
		}})
		return false
	case name == "Page.createIsolatedWorld":
		world, _, _ := exactString(k.params, "worldName")
		in.lock()
		k.r.tab.noteWorld(k.params)
		in.unlock()
		id := in.fakeContext.Add(1)
		c.event("Runtime.executionContextCreated", k.r.replyTo, map[string]any{"context": map[string]any{
			"id": id, "origin": k.r.tab.shownOrigin(), "name": world, "uniqueId": "cdprelay-blind-" + randHex(8),
			"auxData": map[string]any{"isDefault": false, "type": "isolated", "frameId": frame},
		}})
		c.answer(k, map[string]int64{"executionContextId": id})
	case name == "Page.addScriptToEvaluateOnNewDocument":
		if initRunsNothing(k.params) {
			// An isolated world's bootstrap runs nothing: it goes to
			// Chrome, so that the world is there once the tab leaves.
			return false
		}
		// Kept, out of Chrome, and put in once the tab is on a full site.
		id := "cdprelay-blind-" + randHex(6)
		in.lock()
		if t := k.r.tab; len(t.scripts) < maxInitScripts {
			sc := &initScript{client: id, params: append([]byte(nil), k.params...)}
			if k.r.via.child {
				sc.sid, sc.child = k.r.via.id, k.r.via
			}
			t.scripts = append(t.scripts, sc)
		}
		in.unlock()
		c.answer(k, map[string]string{"identifier": id})
	case name == "Target.getTargetInfo":
		// Chrome's answer names the page (its URL, its title): the relay's
		// own view of the tab says its origin only, as discovery does.
		id, _, _ := exactString(k.params, "targetId")
		st := in.lock()
		var ti TargetInfo
		switch {
		case k.r.via.child && (id == "" || id == k.r.via.targetID):
			ti = TargetInfo{TargetID: k.r.via.targetID, Type: "iframe", URL: api.Origin(k.r.via.url), Attached: true, BrowserContextID: st.browserCtx}
		case !k.r.via.child && (id == "" || id == k.r.tab.targetID):
			ti = st.targetInfo(k.r.tab)
		default:
			in.unlock()
			return false // another target's: as Chrome answers it on this session
		}
		in.unlock()
		c.answer(k, map[string]any{"targetInfo": ti})
	case name == "Page.removeScriptToEvaluateOnNewDocument":
		// Out of Chrome while the tab is blind: forgotten, so that it is
		// not put back.
		st := in.lock()
		st.removeScript(k.r.tab, k.r.via, k.params)
		in.unlock()
		c.answerEmpty(k)
	case name == "Runtime.addBinding", name == "Runtime.removeBinding",
		strings.HasPrefix(name[strings.IndexByte(name, '.')+1:], "set") && !tier.BlindAllowed(name):
		if !k.r.via.child {
			// Applied once the tab is on a full site again.
			in.lock()
			k.r.tab.deferSet(name, k.params)
			in.unlock()
		}
		c.answerEmpty(k)
	default:
		return false
	}
	k.out.kind = outEmulated
	return true
}
