package core

import (
	"strings"

	tier "github.com/cdprelay/cdprelay/relay/internal/tiers"

	"github.com/cdprelay/cdprelay/relay/internal/access"
	"github.com/cdprelay/cdprelay/relay/internal/api"
)

// blindHistory reduces the entries of a Page.getNavigationHistory result
// that are on pages automation may not see to their origin, with no title
// (tier.BlindHistory).
func (in *Instance) blindHistory(result []byte) []byte {
	st := &in.St // computeAccess of a page reads only the policy
	return tier.BlindHistory(result, func(u string) bool { return st.UrlAccess(u).Level == AccessBlind })
}

// blindStandIn answers, on a blind tab, the commands a client sends to set
// a page up (Playwright on every page it finds): as if they had worked,
// without any of them reaching the page. Its worlds are stand-ins that
// refuse whatever is run in them; what it sets is not applied. Without
// this, a client that finds a tab already blind would wait for good for a
// page it can never use, and not use it again once it leaves. It reports
// whether it answered k.
func (c *ClientConn) blindStandIn(k *Cmd) bool {
	if k.Ask.Verdict == Ask {
		return false // what needs a person's approval is not acknowledged unasked
	}
	in := c.Inst
	frame := k.Route.Tab.TargetID
	if k.Route.Via.Child {
		frame = k.Route.Via.targetID
	}
	switch name := k.M.Name; {
	case name == "Runtime.enable":
		// Forwarded (its events are withheld); the client is shown the
		// page's main world as a stand-in (not again for the relay's own
		// Runtime.enable after a resume: the client keeps what it was shown).
		if k.Own {
			return false
		}
		c.Event("Runtime.executionContextCreated", k.Route.ReplyTo, map[string]any{"context": map[string]any{
			"id": in.fakeContext.Add(1), "origin": k.Route.Tab.shownOrigin(), "name": "", "uniqueId": "cdprelay-blind-" + randHex(8),
			"auxData": map[string]any{"isDefault": true, "type": "default", "frameId": frame},
		}})
		return false
	case name == "Page.createIsolatedWorld":
		world, _, _ := ExactString(k.Params, "worldName")
		in.Lock()
		k.Route.Tab.noteWorld(k.Params)
		in.Unlock()
		id := in.fakeContext.Add(1)
		c.Event("Runtime.executionContextCreated", k.Route.ReplyTo, map[string]any{"context": map[string]any{
			"id": id, "origin": k.Route.Tab.shownOrigin(), "name": world, "uniqueId": "cdprelay-blind-" + randHex(8),
			"auxData": map[string]any{"isDefault": false, "type": "isolated", "frameId": frame},
		}})
		c.answer(k, map[string]int64{"executionContextId": id})
	case name == "Page.addScriptToEvaluateOnNewDocument":
		if initRunsNothing(k.Params) {
			// An isolated world's bootstrap runs nothing: it goes to
			// Chrome, so that the world is there once the tab leaves.
			return false
		}
		// Kept, out of Chrome, and put in once the tab is on a full site.
		id := "cdprelay-blind-" + randHex(6)
		in.Lock()
		if t := k.Route.Tab; len(t.Scripts) < MaxInitScripts {
			sc := &initScript{Client: id, params: append([]byte(nil), k.Params...)}
			if k.Route.Via.Child {
				sc.sid, sc.child = k.Route.Via.Id, k.Route.Via
			}
			t.Scripts = append(t.Scripts, sc)
		}
		in.Unlock()
		c.answer(k, map[string]string{"identifier": id})
	case name == "Target.getTargetInfo":
		// Chrome's answer names the page (its URL, its title): the relay's
		// own view of the tab says its origin only, as discovery does.
		id, _, _ := ExactString(k.Params, "targetId")
		st := in.Lock()
		var ti TargetInfo
		switch {
		case k.Route.Via.Child && (id == "" || id == k.Route.Via.targetID):
			ti = TargetInfo{TargetID: k.Route.Via.targetID, Type: "iframe", URL: api.Origin(k.Route.Via.url), Attached: true, BrowserContextID: st.browserCtx}
		case !k.Route.Via.Child && (id == "" || id == k.Route.Tab.TargetID):
			ti = st.targetInfo(k.Route.Tab)
		default:
			in.Unlock()
			return false // another target's: as Chrome answers it on this session
		}
		in.Unlock()
		c.answer(k, map[string]any{"targetInfo": ti})
	case name == "Page.removeScriptToEvaluateOnNewDocument":
		// Out of Chrome while the tab is blind: forgotten, so that it is
		// not put back.
		st := in.Lock()
		st.removeScript(k.Route.Tab, k.Route.Via, k.Params)
		in.Unlock()
		c.answerEmpty(k)
	case Emulated(k.M, k.Route.Sess) != nil && name != "Target.setAutoAttach":
		// What the relay answers itself (Page.setDownloadBehavior and its
		// folder check, among others) is no setting of the page to keep
		// for later and send Chrome unchecked: it is not a stand-in's, and
		// the gate refuses it on a blind tab.
		return false
	case name == "Runtime.addBinding", name == "Runtime.removeBinding",
		strings.HasPrefix(name[strings.IndexByte(name, '.')+1:], "set") && !access.BlindAllowed(name):
		if !k.Route.Via.Child {
			// Applied once the tab is on a full site again.
			in.Lock()
			k.Route.Tab.deferSet(name, k.Params)
			in.Unlock()
		}
		c.answerEmpty(k)
	default:
		return false
	}
	k.Out.Kind = OutEmulated
	return true
}
