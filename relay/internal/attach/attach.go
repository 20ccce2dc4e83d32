package attach

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
	"github.com/cdprelay/cdprelay/relay/internal/core"
)

// Attaching and detaching the debugger: the I/O side of the tab table's
// attach state machine.
//
//	detached ─────Tab─────▶ attaching ──Chrome attached──▶ attached
//	    ▲                        │                             │
//	    └──────── failed ────────┘           Detach ◀──────────┘
//	    └───────────────────── detaching ◀─────────────────────┘
//
// Concurrent callers share one attempt: who finds a transition under way
// waits for it (core.Tab.StateWait) and decides again.

// Tab attaches the debugger to t through x and learns its target info.
func Tab(ctx context.Context, in *core.Instance, x core.Upstream, t *core.Tab) error {
	for {
		st := in.Lock()
		if !st.Shared(t) {
			in.Unlock()
			return fmt.Errorf("tab %d is no longer shared", t.Id)
		}
		switch t.State {
		case core.TabAttached:
			in.Unlock()
			return nil
		case core.TabAttaching, core.TabDetaching:
			w := t.StateWait()
			in.Unlock()
			select {
			case <-w:
			case <-ctx.Done():
				return ctx.Err()
			}
			in.Lock()
			s, err := t.State, t.AttachErr
			in.Unlock()
			if s == core.TabAttached {
				return nil
			}
			if s == core.TabDetached && err != nil {
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
		if why := in.Srv.Own.NeverShared(t.Url); why != "" {
			in.Unlock()
			return fmt.Errorf("tab %d shows %s", t.Id, why)
		}
		t.SetState(core.TabAttaching, nil)
		in.Unlock()
		break
	}

	// Once asked, Chrome attaches whether or not the caller still waits:
	// the calls run to their end so that the tab's state stays Chrome's.
	ti, docURL, err := calls(context.WithoutCancel(ctx), in, x, t)
	st := in.Lock()
	release := t.ReleaseAfterAttach
	t.ReleaseAfterAttach = false
	if err != nil {
		t.SetState(core.TabDetached, err)
		var hs []*core.TabHandle
		if TabGone(err) && st.Shared(t) {
			// Chrome has no such tab: it closed without a word (ext/tabgone.go).
			hs = st.RemoveTab(t, "")
		}
		in.Unlock()
		core.NotifyHandles(hs, api.TabEvent{Method: api.EventDetached, Params: core.JSONObj("reason", "the tab is gone")})
		return err
	}
	if t.State != core.TabAttaching { // detached or reset meanwhile
		in.Unlock()
		return fmt.Errorf("tab %d detached while attaching", t.Id)
	}
	st.Attached(t, ti, docURL)
	if err := neverShared(in, t); err != nil {
		// The offer said otherwise: Chrome's word counts. Let go at once.
		t.SetState(core.TabDetaching, nil)
		in.Unlock()
		finishDetach(in, x, t)
		in.Lock()
		if t.State == core.TabDetached {
			t.AttachErr = err
		}
		in.Unlock()
		return err
	}
	if release {
		// Undo what the leaving client may have switched on. A caller that
		// still wants the tab (the live view; the client's own context is
		// cancelled) attaches anew.
		t.SetState(core.TabDetaching, nil)
		in.Unlock()
		finishDetach(in, x, t)
		return Tab(ctx, in, x, t)
	}
	t.SetState(core.TabAttached, nil)
	t.DetachReason = ""
	in.Unlock()
	return nil
}

// calls are the relay's own commands of an attach (the core's doc.go
// lists them), which leave nothing attached when one fails.
func calls(ctx context.Context, in *core.Instance, x core.Upstream, t *core.Tab) (_ core.TargetInfo, docURL string, err error) {
	ctx, cancel := context.WithTimeout(ctx, in.Srv.Cfg.CallTimeout)
	defer cancel()
	tabID := t.Id
	if _, err := x.Call(ctx, "chrome.debugger.attach", cdp.Debuggee(tabID, ""), "1.3"); err != nil {
		return core.TargetInfo{}, "", fmt.Errorf("attach tab %d: %w", tabID, noteRefusal(in, t, err))
	}
	defer func() {
		if err != nil {
			// Attached, but not for use: nothing is left attached.
			x.FireCall("chrome.debugger.detach", cdp.Debuggee(tabID, ""))
		}
	}()
	res, err := x.SendCommand(ctx, tabID, "", "Target.getTargetInfo", nil)
	if err != nil {
		return core.TargetInfo{}, "", fmt.Errorf("target info of tab %d: %w", tabID, err)
	}
	var r struct {
		TargetInfo core.TargetInfo `json:"targetInfo"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return core.TargetInfo{}, "", fmt.Errorf("target info of tab %d: %w", tabID, err)
	}
	// What must be in place before anything else (the navigation
	// backstop: before the wait for a popup's first commit too).
	if err := in.Attaching(ctx, x, t); err != nil {
		return core.TargetInfo{}, "", err
	}
	// The relay follows where the tab goes from its Page events, whether or
	// not a client enables Page (the core's events.go).
	if _, err := x.SendCommand(ctx, tabID, "", "Page.enable", nil); err != nil {
		return core.TargetInfo{}, "", fmt.Errorf("page events of tab %d: %w", tabID, err)
	}
	// The brake needs the Debugger on before any script starts (person's brake.go).
	BrakeOn(x, tabID, "")
	// And its execution contexts from their Runtime events, whatever the
	// client switches (the core's runtimehold.go).
	in.Lock()
	t.Ctxs.Of("").Held = true
	in.Unlock()
	if _, err := x.SendCommand(ctx, tabID, "", "Runtime.enable", nil); err != nil {
		return core.TargetInfo{}, "", fmt.Errorf("execution contexts of tab %d: %w", tabID, err)
	}
	var loader string
	docURL, loader = awaitFirstCommit(ctx, x, tabID)
	in.Lock()
	if t.Away == nil && loader != t.LoaderID { // a waiting tab's is what its client knows (relay/internal/away)
		t.LoaderID, t.Loaded = loader, core.DocLoad{}
	}
	in.Unlock()
	if err := sanitizeHistory(ctx, in, x, t); err != nil {
		return core.TargetInfo{}, "", err
	}
	return r.TargetInfo, docURL, nil
}

// noteRefusal records an attach Chrome refused because of a policy
// (for either extension), and returns err with the explanation added.
func noteRefusal(in *core.Instance, t *core.Tab, err error) error {
	var e *cdp.ExtError
	if !errors.As(err, &e) {
		return err
	}
	cause := cdp.PolicyCauseOf("", e.Message)
	if cause == "" {
		return err
	}
	st := in.Lock()
	st.NoteRefusal(t.Id, cause, st.TargetInfo(t).URL)
	in.Unlock()
	return &cdp.ExtError{Code: e.Code, Message: cdp.ExplainPolicy("", e.Message)}
}

// sanitizeHistory clears the back and forward history of a tab that holds
// a page that is never shared. A history navigation to such a page (this
// extension's own, above all) makes no request the backstop could stop,
// and Chrome keeps the debugger attached there; a tab whose history cannot
// take it there has no way to get there but the person.
func sanitizeHistory(ctx context.Context, in *core.Instance, x core.Upstream, t *core.Tab) error {
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
		if in.Srv.Own.NeverShared(e.URL) != "" {
			if _, err := x.SendCommand(ctx, t.Id, "", "Page.resetNavigationHistory", nil); err != nil {
				return fmt.Errorf("tab %d: its history holds a page that is never shared, and it could not be cleared: %w", t.Id, err)
			}
			in.Observe(core.Event{Actor: api.ActorRelay, Kind: api.KindAttach, Target: t.TargetID, Rule: api.RuleNeverShared, Outcome: api.OutcomeOK, Detail: "cleared the tab's history: it held a page that is never shared"})
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
func awaitFirstCommit(ctx context.Context, x core.Upstream, tabID int64) (docURL, loaderID string) {
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

// Detach releases the debugger from t, if attached and unused.
func Detach(in *core.Instance, x core.Upstream, t *core.Tab) {
	in.Lock()
	if t.State == core.TabAttaching {
		w := t.StateWait()
		in.Unlock()
		<-w
		in.Lock()
	}
	// Re-checked under the lock: a client may have announced the tab since
	// the caller decided it was unused.
	if t.State != core.TabAttached || t.Session != nil {
		in.Unlock()
		return
	}
	t.SetState(core.TabDetaching, nil)
	in.Unlock()
	finishDetach(in, x, t)
}

// finishDetach detaches t, which its caller has moved to TabDetaching.
func finishDetach(in *core.Instance, x core.Upstream, t *core.Tab) {
	in.LettingGo(x, t)
	ctx, cancel := context.WithTimeout(context.Background(), in.Srv.Cfg.CallTimeout)
	_, err := x.Call(ctx, "chrome.debugger.detach", cdp.Debuggee(t.Id, ""))
	cancel()
	if err != nil {
		in.Log.Debug("detach", "tab", t.Id, "err", err)
	}
	st := in.Lock()
	if t.State == core.TabDetaching {
		t.SetState(core.TabDetached, nil)
	}
	hs := t.Handles
	shared := st.Shared(t)
	in.Unlock()
	if len(hs) > 0 && shared {
		// The detach cleared what the client had switched on; the live view
		// still watches, so attach again and let it restart its screencast.
		if err := Tab(context.Background(), in, x, t); err != nil {
			in.Log.Info("re-attach for the live view failed", "tab", t.Id, "err", err)
			core.NotifyHandles(hs, api.TabEvent{Method: api.EventDetached, Params: core.JSONObj("reason", err.Error())})
			return
		}
		core.NotifyHandles(hs, api.TabEvent{Method: api.EventAttached})
	}
}

// ReleaseIfUnused detaches t unless a client session or a handle uses it.
// With a client connected (and its commands running, unless quiet) the
// debugger stays: it is released when the client leaves, and detaching now
// could race the client's own attach.
func ReleaseIfUnused(in *core.Instance, x core.Upstream, t *core.Tab, quiet bool) {
	st := in.Lock()
	if (st.Client != nil && !quiet) || t.Session != nil || len(t.Handles) > 0 || t.State != core.TabAttached || !st.Shared(t) {
		in.Unlock()
		return
	}
	t.SetState(core.TabDetaching, nil)
	in.Unlock()
	finishDetach(in, x, t)
}

// neverShared refuses to attach a tab on a page that is never shared with
// automation: a file, a browser, extension or DevTools page, or the
// relay's own. Such a tab stays a target (of which the client sees the
// origin), without a debugger, until it comes back to a web page.
func neverShared(in *core.Instance, t *core.Tab) error {
	u := t.DocURL
	if u == "" {
		u = t.Url
	}
	if why := in.Srv.Own.NeverShared(u); why != "" {
		return fmt.Errorf("tab %d shows %s", t.Id, why)
	}
	return nil
}

// BrakeOn puts the relay's own Debugger in place on session sid of tab id:
// on, breakpoints deactivated. What Chrome refuses (a target without
// script) is no error: there is nothing to brake there.
func BrakeOn(x core.Upstream, tabID int64, sid string) {
	x.Fire(tabID, sid, "Debugger.enable", nil)
	x.Fire(tabID, sid, "Debugger.setBreakpointsActive", map[string]bool{"active": false})
}

// TabGone reports whether an attach failed because Chrome has no such tab.
func TabGone(err error) bool {
	return err != nil && strings.Contains(err.Error(), "No tab with given id")
}
