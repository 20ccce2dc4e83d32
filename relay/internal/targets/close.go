package targets

import (
	"errors"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/away"
	"github.com/cdprelay/cdprelay/relay/internal/core"
)

// Target.closeTarget: closing a tab the automation may close, and a
// removal that an ending extension connection took with it.

func closeTarget(c *core.ClientConn, k core.Call) {
	t := targetOf(c, k)
	if t == nil {
		return
	}
	in := c.Inst
	in.Lock()
	acc := t.Acc
	ok := closable(t)
	if ok {
		t.ClosingByClient = true
	}
	in.Unlock()
	if !ok {
		d := core.AccessRefusal(acc)
		in.Srv.Cfg.Metrics.CountRefusal(d)
		in.Observe(core.Event{Actor: api.ActorClient, Kind: api.KindDenied, Method: k.Method, Rule: d.Rule, Outcome: api.OutcomeDenied, Detail: d.Message})
		c.Fail(k, core.CodeServerError, d.Message)
		return
	}
	ctx, cancel := c.CallCtx()
	defer cancel()
	// As with Chrome, the reply comes before the Target.detachedFromTarget
	// that the removal causes: answering from the extension's read loop
	// queues it ahead of the onDetach and onRemoved that follow the reply.
	answer := func([]byte) { c.Reply(k, map[string]bool{"success": true}) }
	x := c.Ext()
	_, err := x.CallThen(ctx, answer, "chrome.tabs.remove", t.Id)
	for tries := 0; errors.Is(err, core.ErrExtGone) && tries < maxCloseRetries; tries++ {
		// The extension's connection ended under the call (its worker
		// stopped), which may have taken the removal with it: the tab
		// would stay open, and a client that waits for its target to go
		// (Playwright's page.close and a failed newPage ignore the error
		// and wait for Target.detachedFromTarget) would wait forever. The
		// relay keeps the tab while the extension comes back: the
		// removal is asked of the one that comes back.
		if x = away.ExtBackFor(c.Ctx, in, x, t); x == nil {
			break
		}
		// Judged again: while the extension was away a person may have
		// stopped the automation or taken the tab, or the tab gone
		// where automation may not act.
		if c.StoppedSince(k) || !mayClose(in, t) {
			break
		}
		again, cancel := c.CallCtx()
		_, err = x.CallThen(again, answer, "chrome.tabs.remove", t.Id)
		cancel()
	}
	if err != nil {
		in.Lock()
		t.ClosingByClient = false
		in.Unlock()
		c.Fail(k, core.CodeServerError, "cdprelay: close tab: "+err.Error())
	}
}

// closable reports whether the automation may close t: a tab where it
// has full access, or one it opened that no person holds. A tab a person
// holds is theirs until they hand it back, even one the automation
// opened; the person's tab on a page automation may not act on is theirs
// to close. Called with the lock held.
func closable(t *core.Tab) bool {
	return t.Acc.Level == api.Full || (t.OpenedByClient && t.Control == "")
}

// mayClose is closable, taking the lock.
func mayClose(in *core.Instance, t *core.Tab) bool {
	in.Lock()
	defer in.Unlock()
	return closable(t)
}

// maxCloseRetries bounds how often Target.closeTarget asks again for a
// tab's removal that an ending extension connection took with it.
const maxCloseRetries = 3
