package core

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
)

// Attaching and detaching the debugger: the I/O side of the tab table's
// attach state machine.
//
//	detached ──attachTab──▶ attaching ──Chrome attached──▶ attached
//	    ▲                        │                             │
//	    └──────── failed ────────┘        DetachTab ◀──────────┘
//	    └───────────────────── detaching ◀─────────────────────┘
//
// Concurrent callers share one attempt: who finds a transition under way
// waits for it (tab.stateWait) and decides again.

// attachTab attaches the debugger to t through x and learns its target
// info.
func (in *Instance) AttachTab(ctx context.Context, x Upstream, t *Tab) error {
	for {
		st := in.Lock()
		if !st.Shared(t) {
			in.Unlock()
			return fmt.Errorf("tab %d is no longer shared", t.Id)
		}
		switch t.State {
		case TabAttached:
			in.Unlock()
			return nil
		case tabAttaching, TabDetaching:
			w := t.stateWait
			in.Unlock()
			select {
			case <-w:
			case <-ctx.Done():
				return ctx.Err()
			}
			in.Lock()
			s, err := t.State, t.attachErr
			in.Unlock()
			if s == TabAttached {
				return nil
			}
			if s == TabDetached && err != nil {
				return err
			}
			continue // a detach finished: attach anew
		}
		// Checked under the lock: a client that has not left by now leaves
		// after its clientGone can see the attaching state.
		if err := ctx.Err(); err != nil {
			in.Unlock()
			return err
		}
		if why := in.Srv.neverSharedAt(t.Url); why != "" {
			in.Unlock()
			return fmt.Errorf("tab %d shows %s", t.Id, why)
		}
		t.SetState(tabAttaching, nil)
		in.Unlock()
		break
	}

	// Once asked, Chrome attaches whether or not the caller still waits:
	// the calls run to their end so that the tab's state stays Chrome's.
	ti, docURL, err := in.attachCalls(context.WithoutCancel(ctx), x, t)
	st := in.Lock()
	release := t.releaseAfterAttach
	t.releaseAfterAttach = false
	if err != nil {
		t.SetState(TabDetached, err)
		var hs []*TabHandle
		if TabGone(err) && st.Shared(t) {
			// Chrome has no such tab: it closed without a word (tabgone.go).
			hs = st.RemoveTab(t, "")
		}
		in.Unlock()
		NotifyHandles(hs, api.TabEvent{Method: api.EventDetached, Params: JSONObj("reason", "the tab is gone")})
		return err
	}
	if t.State != tabAttaching { // detached or reset meanwhile
		in.Unlock()
		return fmt.Errorf("tab %d detached while attaching", t.Id)
	}
	st.attached(t, ti, docURL)
	if err := in.Srv.neverShared(t); err != nil {
		// The offer said otherwise: Chrome's word counts. Let go at once.
		t.SetState(TabDetaching, nil)
		in.Unlock()
		in.finishDetach(x, t)
		in.Lock()
		if t.State == TabDetached {
			t.attachErr = err
		}
		in.Unlock()
		return err
	}
	if release {
		// Undo what the leaving client may have switched on. A caller that
		// still wants the tab (the live view; the client's own context is
		// cancelled) attaches anew.
		t.SetState(TabDetaching, nil)
		in.Unlock()
		in.finishDetach(x, t)
		return in.AttachTab(ctx, x, t)
	}
	t.SetState(TabAttached, nil)
	t.DetachReason = ""
	in.Unlock()
	return nil
}

// attached records what Chrome said of t as it attached: its target info
// and the URL of the document its main frame shows.
func (st *State) attached(t *Tab, ti TargetInfo, docURL string) {
	if ti.TargetID != "" {
		t.TargetID = ti.TargetID
	}
	if ti.URL != "" {
		t.Url = ti.URL
	}
	t.DocURL = docURL
	if t.DocURL == "" {
		t.DocURL = t.Url
	}
	t.title = ti.Title
	st.UpdateAccess(t)
	t.BrowserCtx = ti.BrowserContextID
	if ti.BrowserContextID != "" {
		// Every tab of a profile is in the same default context: report
		// Chrome's id for tabs not attached yet too.
		st.BrowserCtx = ti.BrowserContextID
	}
}

func (in *Instance) attachCalls(ctx context.Context, x Upstream, t *Tab) (_ TargetInfo, docURL string, err error) {
	ctx, cancel := context.WithTimeout(ctx, in.Srv.Cfg.CallTimeout)
	defer cancel()
	tabID := t.Id
	if _, err := x.Call(ctx, "chrome.debugger.attach", cdp.Debuggee(tabID, ""), "1.3"); err != nil {
		return TargetInfo{}, "", fmt.Errorf("attach tab %d: %w", tabID, in.noteAttachRefusal(t, err))
	}
	defer func() {
		if err != nil {
			// Attached, but not for use: nothing is left attached.
			x.FireCall("chrome.debugger.detach", cdp.Debuggee(tabID, ""))
		}
	}()
	res, err := x.SendCommand(ctx, tabID, "", "Target.getTargetInfo", nil)
	if err != nil {
		return TargetInfo{}, "", fmt.Errorf("target info of tab %d: %w", tabID, err)
	}
	var r struct {
		TargetInfo TargetInfo `json:"targetInfo"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return TargetInfo{}, "", fmt.Errorf("target info of tab %d: %w", tabID, err)
	}
	// What must be in place before anything else (the navigation
	// backstop: before the wait for a popup's first commit too).
	if err := in.attaching(ctx, x, t); err != nil {
		return TargetInfo{}, "", err
	}
	// The relay follows where the tab goes from its Page events, whether or
	// not a client enables Page (events.go).
	if _, err := x.SendCommand(ctx, tabID, "", "Page.enable", nil); err != nil {
		return TargetInfo{}, "", fmt.Errorf("page events of tab %d: %w", tabID, err)
	}
	// The brake needs the Debugger on before any script starts (person's brake.go).
	BrakeOn(x, tabID, "")
	// And its execution contexts from their Runtime events, whatever the
	// client switches (runtimehold.go).
	in.Lock()
	t.Ctxs.Of("").Held = true
	in.Unlock()
	if _, err := x.SendCommand(ctx, tabID, "", "Runtime.enable", nil); err != nil {
		return TargetInfo{}, "", fmt.Errorf("execution contexts of tab %d: %w", tabID, err)
	}
	var loader string
	docURL, loader = in.awaitFirstCommit(ctx, x, tabID)
	in.Lock()
	if t.Away == nil && loader != t.LoaderID { // a waiting tab's is what its client knows (relay/internal/away)
		t.LoaderID, t.Loaded = loader, DocLoad{}
	}
	in.Unlock()
	if err := in.sanitizeHistory(ctx, x, t); err != nil {
		return TargetInfo{}, "", err
	}
	return r.TargetInfo, docURL, nil
}

// sanitizeHistory clears the back and forward history of a tab that holds
// a page that is never shared. A history navigation to such a page (this
// extension's own, above all) makes no request the backstop could stop,
// and Chrome keeps the debugger attached there; a tab whose history cannot
// take it there has no way to get there but the person.
func (in *Instance) sanitizeHistory(ctx context.Context, x Upstream, t *Tab) error {
	res, err := x.SendCommand(ctx, t.Id, "", "Page.getNavigationHistory", nil)
	if err != nil {
		return nil // not every debuggee has a history
	}
	var h struct {
		Entries []struct {
			URL string `json:"url"`
		} `json:"entries"`
	}
	if json.Unmarshal(res, &h) != nil {
		return nil
	}
	for _, e := range h.Entries {
		if in.Srv.neverSharedAt(e.URL) != "" {
			if _, err := x.SendCommand(ctx, t.Id, "", "Page.resetNavigationHistory", nil); err != nil {
				return fmt.Errorf("tab %d: its history holds a page that is never shared, and it could not be cleared: %w", t.Id, err)
			}
			in.Observe(Event{Actor: api.ActorRelay, Kind: api.KindAttach, Target: t.TargetID, Rule: RuleNeverShared, Outcome: api.OutcomeOK, Detail: "cleared the tab's history: it held a page that is never shared"})
			return nil
		}
	}
	return nil
}

// firstCommitWait bounds how long a new tab's first navigation is awaited.
const firstCommitWait = 2 * time.Second

// awaitFirstCommit waits, briefly, until the tab's main frame has left its
// initial empty document. A popup is attached only after Chrome has started
// it (the extension cannot hold it paused the way waitForDebuggerOnStart
// does), and a client that finds the initial empty document ignores the
// lifecycle events Chrome replays when they are enabled — so the popup's
// "load" could be lost if it were announced in that state.
// It returns the URL of the document the main frame shows then, and
// Chrome's id of that document.
func (in *Instance) awaitFirstCommit(ctx context.Context, x Upstream, tabID int64) (docURL, loaderID string) {
	deadline := time.Now().Add(firstCommitWait)
	for delay := 5 * time.Millisecond; ; delay = min(delay*2, 100*time.Millisecond) {
		res, err := x.SendCommand(ctx, tabID, "", "Page.getFrameTree", nil)
		if err != nil {
			return "", ""
		}
		var ft struct {
			FrameTree struct {
				Frame struct {
					URL      *string `json:"url"`
					LoaderID string  `json:"loaderId"`
				} `json:"frame"`
			} `json:"frameTree"`
		}
		if json.Unmarshal(res, &ft) != nil || ft.FrameTree.Frame.URL == nil {
			return "", ""
		}
		if u := *ft.FrameTree.Frame.URL; u != "" && u != ":" {
			return u, ft.FrameTree.Frame.LoaderID
		}
		if time.Now().After(deadline) {
			return "", ft.FrameTree.Frame.LoaderID
		}
		timer := time.NewTimer(delay)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return "", ""
		}
	}
}

// DetachTab releases the debugger from t, if attached and unused.
func (in *Instance) DetachTab(x Upstream, t *Tab) {
	in.Lock()
	if t.State == tabAttaching {
		w := t.stateWait
		in.Unlock()
		<-w
		in.Lock()
	}
	// Re-checked under the lock: a client may have announced the tab since
	// the caller decided it was unused.
	if t.State != TabAttached || t.Session != nil {
		in.Unlock()
		return
	}
	t.SetState(TabDetaching, nil)
	in.Unlock()
	in.finishDetach(x, t)
}

// finishDetach detaches t, which its caller has moved to tabDetaching.
func (in *Instance) finishDetach(x Upstream, t *Tab) {
	in.LettingGo(x, t)
	ctx, cancel := context.WithTimeout(context.Background(), in.Srv.Cfg.CallTimeout)
	_, err := x.Call(ctx, "chrome.debugger.detach", cdp.Debuggee(t.Id, ""))
	cancel()
	if err != nil {
		in.Log.Debug("detach", "tab", t.Id, "err", err)
	}
	st := in.Lock()
	if t.State == TabDetaching {
		t.SetState(TabDetached, nil)
	}
	hs := t.Handles
	shared := st.Shared(t)
	in.Unlock()
	if len(hs) > 0 && shared {
		// The detach cleared what the client had switched on; the live view
		// still watches, so attach again and let it restart its screencast.
		if err := in.AttachTab(context.Background(), x, t); err != nil {
			in.Log.Info("re-attach for the live view failed", "tab", t.Id, "err", err)
			NotifyHandles(hs, api.TabEvent{Method: api.EventDetached, Params: JSONObj("reason", err.Error())})
			return
		}
		NotifyHandles(hs, api.TabEvent{Method: api.EventAttached})
	}
}

// ReleaseIfUnused detaches t unless a client session or a handle uses it.
// With a client connected (and its commands running, unless quiet) the
// debugger stays: it is released when the client leaves, and detaching now
// could race the client's own attach.
func (in *Instance) ReleaseIfUnused(x Upstream, t *Tab, quiet bool) {
	st := in.Lock()
	if (st.Client != nil && !quiet) || t.Session != nil || len(t.Handles) > 0 || t.State != TabAttached || !st.Shared(t) {
		in.Unlock()
		return
	}
	t.SetState(TabDetaching, nil)
	in.Unlock()
	in.finishDetach(x, t)
}

// neverShared refuses to attach a tab on a page that is never shared with
// automation: a file, a browser, extension or DevTools page, or the
// relay's own. Such a tab stays a target (of which the client sees the
// origin), without a debugger, until it comes back to a web page.
func (s *Relay) neverShared(t *Tab) error {
	u := t.DocURL
	if u == "" {
		u = t.Url
	}
	if why := s.neverSharedAt(u); why != "" {
		return fmt.Errorf("tab %d shows %s", t.Id, why)
	}
	return nil
}

// neverSharedURL says why a top-level URL is never shared, or "".
func neverSharedURL(u string) string {
	if web, special := api.PageScheme(u); web || special {
		return ""
	}
	return api.SchemeOf(u) + " page, which is never shared with automation"
}

// brakeOn puts the relay's own Debugger in place on session sid of tab id:
// on, breakpoints deactivated. What Chrome refuses (a target without
// script) is no error: there is nothing to brake there.
func BrakeOn(x Upstream, tabID int64, sid string) {
	x.Fire(tabID, sid, "Debugger.enable", nil)
	x.Fire(tabID, sid, "Debugger.setBreakpointsActive", map[string]bool{"active": false})
}

// TabGone reports whether an attach failed because Chrome has no such tab.
func TabGone(err error) bool {
	return err != nil && strings.Contains(err.Error(), "No tab with given id")
}
