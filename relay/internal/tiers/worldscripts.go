package tiers

import (
	"encoding/json"
	"strings"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/core"
)

// The client's scripts for new documents, its isolated worlds and the
// settings a blind tab acknowledged, kept in the tab's tier slots
// (lifts.go takes them out and puts them back where they may run).
//
// Page.addScriptToEvaluateOnNewDocument runs the client's script in the
// page's own world of every document the frame shows from then on:
// added on a full site, it would run, with the person's session, on a
// read-only or blind site the tab goes to later, and in every page a
// person opens in a tab they took over. So the relay keeps each script
// the client added, takes it out of Chrome as soon as the tab is held by
// a person or its frame is on its way to a site that is not full
// (before the Page.navigate that goes there, for the client's own
// navigations; at the first event that says so, for the page's), and puts
// it back once the frame is on its way to a full site again. The client
// keeps the identifier it was given; a script it removes while it is out
// is simply forgotten.
//
// The core keeps the scripts (core.Tab.Scripts) and says when where they
// may run changed (core.State.SyncScripts, which calls ScriptsLocked here:
// lifts.go).
//
// A script that runs nothing (an isolated world's bootstrap: Playwright's
// utility world has an empty source, Puppeteer's a comment) stays.
//
// A navigation the page starts by itself is a race: the script is taken
// out within the few milliseconds a command takes to reach Chrome, and a
// document that commits sooner gets it. A script that is put back misses
// the documents that committed meanwhile.

// keepScript records a script Chrome has added for the client (result is
// Chrome's reply), and takes it out at once if its frame is no longer on
// a full site.
func keepScript(in *core.Instance, pc *core.PendingCall, result []byte) {
	id := string(wire.StringField(result, "identifier"))
	if id == "" {
		return
	}
	st := in.Lock()
	defer in.Unlock()
	t := pc.Tab
	if st.Tabs[t.Id] != t || len(t.Scripts) >= core.MaxInitScripts {
		return
	}
	sc := &core.InitScript{Client: id, Real: id, Params: *pc.Keep}
	if pc.Via.Child {
		if !st.Live(pc.Via) {
			return
		}
		sc.Sid, sc.Child = pc.Via.Id, pc.Via
	}
	t.Scripts = append(t.Scripts, sc)
	st.SyncScripts(t)
}

// removeScript handles the client's Page.removeScriptToEvaluateOnNewDocument
// of a script the relay keeps: it returns the params to forward, or nil
// when the script is out of Chrome and there is nothing to forward.
func removeScript(st *core.State, t *core.Tab, via *core.Session, params []byte) (forward []byte, known bool) {
	id := string(wire.StringField(params, "identifier"))
	for i, sc := range t.Scripts {
		if sc.Client != id || (sc.Child != nil) != via.Child || (sc.Child != nil && sc.Child != via) {
			continue
		}
		t.Scripts = append(t.Scripts[:i:i], t.Scripts[i+1:]...)
		if sc.Real == "" {
			return nil, true
		}
		b, _ := json.Marshal(map[string]string{"identifier": sc.Real})
		return b, true
	}
	return params, false
}

// deferSet keeps a setting of the client's that a blind tab acknowledged.
func deferSet(t *core.Tab, method string, params []byte) {
	if strings.HasPrefix(method, "Browser.") || strings.HasPrefix(method, "Target.") {
		return // the relay's to emulate, not the tab's
	}
	key := method
	switch method {
	case "Runtime.addBinding", "Runtime.removeBinding":
		name, _, _ := core.ExactString(params, "name")
		key = "Runtime.binding:" + name
	}
	tt := tabSlot.Of(t)
	for i, d := range tt.deferred {
		if d.key == key {
			tt.deferred = append(tt.deferred[:i:i], tt.deferred[i+1:]...)
			break
		}
	}
	if len(tt.deferred) >= maxDeferredSets {
		return
	}
	tt.deferred = append(tt.deferred, deferredSet{key: key, method: method, params: append([]byte(nil), params...)})
}

// noteWorld records the isolated world a command of the client's names.
func noteWorld(t *core.Tab, params []byte) {
	name, _, _ := core.ExactString(params, "worldName")
	tt := tabSlot.Of(t)
	if name == "" || len(tt.worldNames) >= maxWorldNames {
		return
	}
	for _, n := range tt.worldNames {
		if n == name {
			return
		}
	}
	tt.worldNames = append(tt.worldNames, name)
}
