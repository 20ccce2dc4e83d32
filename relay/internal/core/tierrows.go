package core

import (
	"strconv"

	tier "github.com/cdprelay/cdprelay/relay/internal/tiers"
)

// wantsNavigateTo: the commands that name a page to go to.
func WantsNavigateTo(m *MethodInfo) bool {
	return m.Name == "Page.navigate" || m.Name == "Target.createTarget"
}

// NavigateTo (tiers.Navigate): not to a page the automation could not
// see, whatever the fence.
func (c *ClientConn) NavigateTo(k *Cmd) bool {
	if k.M.Name == "Target.createTarget" && k.Args.Url == "" {
		return true // about:blank
	}
	st := c.Inst.Lock()
	to := st.UrlAccess(k.Args.Url)
	c.Inst.Unlock()
	if to.Level == AccessBlind {
		return c.Refuse(k, Decision{Verdict: Deny, Rule: to.Rule, Message: "cdprelay: blind: " + to.Why})
	}
	return true
}

// TierStage (tiers.Checks): the access rules that hold only while the
// policy has tiers (tierrules.go).
func (c *ClientConn) TierStage(k *Cmd) bool {
	if !k.Policy.tiers || k.browserLevel() {
		return true
	}
	return c.tierChecks(k)
}

// StandIn (tiers.StandIn): a blind tab's stand-ins (blindtab.go).
func (c *ClientConn) StandIn(k *Cmd) bool {
	return !k.onTab() || k.Route.Acc.Level != AccessBlind || !c.blindStandIn(k)
}

// wantsFrameTree: a blind tab's frame tree is the relay's.
func WantsFrameTree(m *MethodInfo) bool { return m.Name == "Page.getFrameTree" }

// FrameTree (tiers.FrameTree): what a blind tab may show of itself,
// its origin.
func (c *ClientConn) FrameTree(k *Cmd) bool {
	if !k.onTab() || k.Route.Acc.Level != AccessBlind || k.Route.Via.Child {
		return true
	}
	c.Inst.Lock()
	tree := tier.BlindFrameTree(k.Route.Tab.shownOrigin(), k.Route.Tab.TargetID)
	c.Inst.Unlock()
	k.Out.Kind = OutEmulated
	c.answer(k, tree)
	return false
}

// wantsContexts: the methods whose params name execution contexts.
func WantsContexts(m *MethodInfo) bool { return m.Ctx != nil }

// ContextsStage (tiers.Contexts): the contexts k names, judged
// (ctxguard.go); a blind tab's are the stand-ins'.
func (c *ClientConn) ContextsStage(k *Cmd) bool {
	return !k.onTab() || k.Route.Acc.Level == AccessBlind || c.contexts(k)
}

// wantsRetried: the function calls a client makes after a retried input.
func WantsRetried(m *MethodInfo) bool { return m.Name == "Runtime.callFunctionOn" }

// Retried (tiers.Retried): refusals.go.
func (c *ClientConn) Retried(k *Cmd) bool {
	if !k.onTab() {
		return true
	}
	if d, ok := c.acts.retried(k); ok {
		return c.refuseAsThrow(k, d)
	}
	return true
}

// GateStage (tiers.Gate): the blind and read-only tables (readonly.go).
func (c *ClientConn) GateStage(k *Cmd) bool {
	if !k.onTab() {
		return true
	}
	if d, ok := c.gate(k, k.Route.Acc); !ok {
		if k.Route.Acc.Level == AccessBlind && isScript(k.M.Name) {
			return c.refuseAsThrow(k, d)
		}
		c.acts.refused(k, d)
		return c.Refuse(k, d)
	}
	return true
}

// wantsPixels: the methods that show the page's pixels.
func WantsPixels(m *MethodInfo) bool { return m.Pixels }

// Pixels (tiers.Pixels): not while a frame of the tab is blind.
func (c *ClientConn) Pixels(k *Cmd) bool {
	if !k.onTab() {
		return true
	}
	st := c.Inst.Lock()
	blindFrame := st.hasBlindChild(k.Route.Tab)
	c.Inst.Unlock()
	if blindFrame {
		return c.Refuse(k, Decision{Verdict: Deny, Rule: ruleBlindFrame, Message: "cdprelay: blind: a frame of this page is on a site hidden from automation, and " + k.M.Name + " would show its pixels"})
	}
	return true
}

// wantsNavTo: a navigation of a tab's main frame.
func WantsNavTo(m *MethodInfo) bool { return m.Name == "Page.navigate" }

// 8. prepare acts on what the judging stages decided, for a command that
// goes on. A navigation of a tab's main frame to a read-only site: the tab
// is on its way there from now, and what may not run there (the client's
// scripts for new documents) is taken out of Chrome before the navigation
// reaches it. A navigation refused, denied or never answered leaves the
// tab as it was.
func (c *ClientConn) Prepare(k *Cmd) bool {
	if k.Route.Via == nil || k.Route.Via.Child || k.Route.Tab == nil || !k.Policy.tiers {
		return true
	}
	st := c.Inst.Lock()
	if st.UrlAccess(k.Args.Url).Level == AccessReadOnly {
		st.setNavTo(k.Route.Tab, k.Args.Url)
	}
	c.Inst.Unlock()
	return true
}

// wantsWorlds: what makes a world of the client's.
func WantsWorlds(m *MethodInfo) bool {
	return m.Name == "Page.addScriptToEvaluateOnNewDocument" || m.Name == "Page.createIsolatedWorld"
}

// Worlds (tiers.Worlds): the tab's worlds and scripts for new documents
// (initscripts.go).
func (c *ClientConn) Worlds(k *Cmd) bool {
	t := k.Route.Via.Tab
	if t == nil {
		return true
	}
	c.Inst.Lock()
	t.noteWorld(k.Params)
	full := k.M.Name == "Page.addScriptToEvaluateOnNewDocument" && len(t.Scripts) >= MaxInitScripts && !initRunsNothing(k.Params)
	c.Inst.Unlock()
	if full {
		// The relay could not take one more out of Chrome when the tab
		// leaves for a site where it may not run.
		return c.Failed(k, CodeServerError, "cdprelay: too many scripts for new documents on this tab ("+strconv.Itoa(MaxInitScripts)+")")
	}
	return true
}

// wantsRemoveScript: a script for new documents taken out.
func WantsRemoveScript(m *MethodInfo) bool {
	return m.Name == "Page.removeScriptToEvaluateOnNewDocument"
}

// RemoveScriptStage (tiers.RemoveScript): a script the relay took out of
// Chrome is answered; another's identifier is Chrome's.
func (c *ClientConn) RemoveScriptStage(k *Cmd) bool {
	t := k.Route.Via.Tab
	if t == nil {
		return true
	}
	st := c.Inst.Lock()
	params, known := st.removeScript(t, k.Route.Via, k.Params)
	c.Inst.Unlock()
	if known && params == nil {
		// Out of Chrome already (its frame is not on a full site).
		k.Out.Kind = OutEmulated
		c.replyEmptyRaw(k.Env.ID, k.Env.SessionID)
		return false
	}
	k.Params = params
	return true
}
