package core

import (
	"context"
	"encoding/json"
	"time"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/access"
	"github.com/cdprelay/cdprelay/relay/internal/api"
)

// The client's scripts for new documents, under tiers and a person's
// take-over.
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
// A script that runs nothing (an isolated world's bootstrap: Playwright's
// utility world has an empty source, Puppeteer's a comment) stays.
//
// A navigation the page starts by itself is a race: the script is taken
// out within the few milliseconds a command takes to reach Chrome, and a
// document that commits sooner gets it. A script that is put back misses
// the documents that committed meanwhile.

// MaxInitScripts bounds the scripts kept for a tab, MaxWorldNames the
// world names.
const (
	MaxInitScripts = 1024
	MaxWorldNames  = 8
)

type InitScript struct {
	Sid    string // Chrome's session: "" for the tab's own, a child's id
	Child  *Session
	Client string // the identifier the client was given
	Real   string // Chrome's identifier now; "" while taken out
	Adding bool   // being put back
	Params []byte
}

// scriptFull reports whether sc may run where its frame is going.
func (st *State) scriptFull(t *Tab, sc *InitScript) bool {
	if sc.Child != nil {
		return sc.Child.Acc.Level == api.Full
	}
	// The tab's scripts run in the frames of its process too: not while
	// one is on its way to a site that is not full.
	return t.Acc.Level == api.Full && len(t.BlindFrames) == 0
}

// SyncScripts takes out of Chrome the scripts of t whose frame is on its
// way to a site that is not full, and puts back the others.
func (st *State) SyncScripts(t *Tab) {
	if len(t.Scripts) == 0 {
		return
	}
	kept := t.Scripts[:0]
	for _, sc := range t.Scripts {
		if sc.Child != nil && !st.Live(sc.Child) {
			continue // the frame's session is gone, and its scripts with it
		}
		kept = append(kept, sc)
		switch full := st.scriptFull(t, sc); {
		case !full && sc.Real != "":
			st.fireLift(t, scriptLift(t, sc), true, sc.Sid, "Page.removeScriptToEvaluateOnNewDocument", map[string]string{"identifier": sc.Real})
			sc.Real = ""
		case full && sc.Real == "" && !sc.Adding && st.Ext != nil && st.StoppedBy == "":
			// (While stopped, none of the client's scripts goes back:
			// person's stopundo.go; Resume puts them back.)
			sc.Adding = true
			ls := scriptLift(t, sc)
			ls.pending++ // answered when it is back (putScriptBack)
			st.Inst.putScriptBack(st.Ext, t, sc, ls)
		}
	}
	clear(t.Scripts[len(kept):])
	t.Scripts = kept
}

// scriptLift is the lift state a script's removal and return count in:
// its frame session's, or its tab's.
func scriptLift(t *Tab, sc *InitScript) *liftState {
	if sc.Child != nil {
		return &sc.Child.lift
	}
	return &t.lift
}

// putScriptBack adds sc to Chrome again, off the lock, and counts it
// answered in ls once Chrome has.
func (in *Instance) putScriptBack(x Upstream, t *Tab, sc *InitScript, ls *liftState) {
	in.Tasks.Spawn("init script", func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res, err := x.SendCommand(ctx, t.Id, sc.Sid, "Page.addScriptToEvaluateOnNewDocument", json.RawMessage(sc.Params))
		st := in.Lock()
		defer in.Unlock()
		defer st.liftOver(ls, false)
		sc.Adding = false
		if err != nil {
			return
		}
		id := string(wire.StringField(res, "identifier"))
		if id == "" {
			return
		}
		sc.Real = id
		tracked := false
		for _, o := range t.Scripts {
			tracked = tracked || o == sc
		}
		if !tracked || !st.scriptFull(t, sc) {
			// Removed by the client, or gone somewhere not full again
			// while it was being added.
			st.fireLift(t, ls, true, sc.Sid, "Page.removeScriptToEvaluateOnNewDocument", map[string]string{"identifier": id})
			sc.Real = ""
		}
	})
}

// InitRunsNothing reports whether a Page.addScriptToEvaluateOnNewDocument's
// source runs nothing.
func InitRunsNothing(params []byte) bool {
	src, _, err := ExactString(params, "source")
	return err == nil && access.RunsNothing(src)
}

// A blind tab acknowledges the client's settings without applying them
// (blindStandIn): the last of each (and each binding) is kept and applied
// once the tab is on a full site again, so that a client that set a page
// up while it was blind (Playwright's focus emulation, without which a
// background tab paints nothing and its clicks wait for good) finds it
// set up when it leaves.

// MaxDeferredSets bounds the settings kept for a tab.
const MaxDeferredSets = 64

// DeferredSet is a setting a blind tab acknowledged without applying it
// (the tiers' deferSet), applied once the tab is on a full site.
type DeferredSet struct {
	Key, Method string
	Params      []byte
}

// replaySets applies the settings t acknowledged while it was blind, in
// the order they were made.
func (st *State) replaySets(t *Tab) {
	if st.Inst.IsStopped.Load() {
		return // nothing of the automation's is set while a person stopped it
	}
	for _, d := range t.Deferred {
		var p any
		if len(d.Params) > 0 {
			p = json.RawMessage(d.Params)
		}
		// Kept as if the client had made it now: a resume sets it again,
		// and the tiers lift it again (lifts.go).
		st.Record(t, LookupMethod([]byte(d.Method)), d.Params)
		st.fireLift(t, &t.lift, false, "", d.Method, p)
	}
	t.Deferred = nil
}

// forgetClientSetup forgets what a client set up on t that the relay would
// put in or apply later: its client is gone, or its debugger is.
func (t *Tab) forgetClientSetup() {
	t.Scripts, t.Deferred, t.WorldNames = nil, nil, nil
}
