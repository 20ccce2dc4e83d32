package tiers

import (
	"strconv"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/core"
)

// WantsNavigateTo wants the commands that name a page to go to.
func WantsNavigateTo(m *core.MethodInfo) bool {
	return m.Name == "Page.navigate" || m.Name == "Target.createTarget"
}

// NavigateTo (tiers.Navigate): not to a page the automation could not
// see, whatever the fence.
func NavigateTo(c *core.ClientConn, k *core.Cmd) bool {
	if k.M.Name == "Target.createTarget" && k.Args.Url == "" {
		return true // about:blank
	}
	st := c.Inst.Lock()
	to := st.UrlAccess(k.Args.Url)
	c.Inst.Unlock()
	if to.Level == api.Blind {
		return c.Refuse(k, core.Decision{Verdict: core.Deny, Rule: to.Rule, Message: "cdprelay: blind: " + to.Why})
	}
	return true
}

// TierStage (tiers.Checks): the access rules that hold only while the
// policy has tiers (checks.go).
func TierStage(c *core.ClientConn, k *core.Cmd) bool {
	if !k.Policy.Tiers || k.BrowserLevel() {
		return true
	}
	return tierChecks(c, k)
}

// StandIn (tiers.StandIn): a blind tab's stand-ins (standin.go).
func StandIn(c *core.ClientConn, k *core.Cmd) bool {
	return !k.OnTab() || k.Route.Acc.Level != api.Blind || !blindStandIn(c, k)
}

// WantsFrameTree wants Page.getFrameTree: a blind tab's frame tree is the
// relay's.
func WantsFrameTree(m *core.MethodInfo) bool { return m.Name == "Page.getFrameTree" }

// FrameTree (tiers.FrameTree): what a blind tab may show of itself,
// its origin.
func FrameTree(c *core.ClientConn, k *core.Cmd) bool {
	if !k.OnTab() || k.Route.Acc.Level != api.Blind || k.Route.Via.Child {
		return true
	}
	c.Inst.Lock()
	tree := BlindFrameTree(k.Route.Tab.ShownOrigin(), k.Route.Tab.TargetID)
	c.Inst.Unlock()
	k.Out.Kind = core.OutEmulated
	c.Answer(k, tree)
	return false
}

// WantsContexts wants the methods whose params name execution contexts.
func WantsContexts(m *core.MethodInfo) bool { return m.Ctx != nil }

// ContextsStage (tiers.Contexts): the contexts k names, judged
// (contexts.go); a blind tab's are the stand-ins'.
func ContextsStage(c *core.ClientConn, k *core.Cmd) bool {
	return !k.OnTab() || k.Route.Acc.Level == api.Blind || Contexts(c, k)
}

// WantsRetried wants the function calls a client makes after a retried
// input.
func WantsRetried(m *core.MethodInfo) bool { return m.Name == "Runtime.callFunctionOn" }

// Retried (tiers.Retried): refusals.go.
func Retried(c *core.ClientConn, k *core.Cmd) bool {
	if !k.OnTab() {
		return true
	}
	if d, ok := clientSlot.Of(c).acts.Retried(k); ok {
		return c.RefuseAsThrow(k, d)
	}
	return true
}

// GateStage (tiers.Gate): the blind and read-only tables (readonly.go).
func GateStage(c *core.ClientConn, k *core.Cmd) bool {
	if !k.OnTab() {
		return true
	}
	if d, ok := gate(c, k, k.Route.Acc); !ok {
		if k.Route.Acc.Level == api.Blind && core.IsScript(k.M.Name) {
			return c.RefuseAsThrow(k, d)
		}
		clientSlot.Of(c).acts.Refused(k, d)
		return c.Refuse(k, d)
	}
	return true
}

// WantsPixels wants the methods that show the page's pixels.
func WantsPixels(m *core.MethodInfo) bool { return m.Pixels }

// Pixels (tiers.Pixels): not while a frame of the tab is blind.
func Pixels(c *core.ClientConn, k *core.Cmd) bool {
	if !k.OnTab() {
		return true
	}
	st := c.Inst.Lock()
	blindFrame := hasBlindChild(st, k.Route.Tab)
	c.Inst.Unlock()
	if blindFrame {
		return c.Refuse(k, core.Decision{Verdict: core.Deny, Rule: api.RuleBlindFrame, Message: "cdprelay: blind: a frame of this page is on a site hidden from automation, and " + k.M.Name + " would show its pixels"})
	}
	return true
}

// WantsNavTo wants a navigation of a tab's main frame.
func WantsNavTo(m *core.MethodInfo) bool { return m.Name == "Page.navigate" }

// Prepare (tiers.NavTo) acts on what the judging stages decided, for a command that
// goes on. A navigation of a tab's main frame to a read-only site: the tab
// is on its way there from now, and what may not run there (the client's
// scripts for new documents) is taken out of Chrome before the navigation
// reaches it. A navigation refused, denied or never answered leaves the
// tab as it was.
func Prepare(c *core.ClientConn, k *core.Cmd) bool {
	if k.Route.Via == nil || k.Route.Via.Child || k.Route.Tab == nil || !k.Policy.Tiers {
		return true
	}
	st := c.Inst.Lock()
	if st.UrlAccess(k.Args.Url).Level == api.ReadOnly {
		st.SetNavTo(k.Route.Tab, k.Args.Url)
	}
	c.Inst.Unlock()
	return true
}

// WantsWorlds wants what makes a world of the client's.
func WantsWorlds(m *core.MethodInfo) bool {
	return m.Name == "Page.addScriptToEvaluateOnNewDocument" || m.Name == "Page.createIsolatedWorld"
}

// Worlds (tiers.Worlds): the tab's worlds and scripts for new documents
// (worldscripts.go).
func Worlds(c *core.ClientConn, k *core.Cmd) bool {
	t := k.Route.Via.Tab
	if t == nil {
		return true
	}
	c.Inst.Lock()
	noteWorld(t, k.Params)
	full := k.M.Name == "Page.addScriptToEvaluateOnNewDocument" && len(t.Scripts) >= core.MaxInitScripts && !core.InitRunsNothing(k.Params)
	c.Inst.Unlock()
	if full {
		// The relay could not take one more out of Chrome when the tab
		// leaves for a site where it may not run.
		return c.Failed(k, core.CodeServerError, "cdprelay: too many scripts for new documents on this tab ("+strconv.Itoa(core.MaxInitScripts)+")")
	}
	return true
}

// WantsRemoveScript wants a script for new documents taken out.
func WantsRemoveScript(m *core.MethodInfo) bool {
	return m.Name == "Page.removeScriptToEvaluateOnNewDocument"
}

// RemoveScriptStage (tiers.RemoveScript): a script the relay took out of
// Chrome is answered; another's identifier is Chrome's.
func RemoveScriptStage(c *core.ClientConn, k *core.Cmd) bool {
	t := k.Route.Via.Tab
	if t == nil {
		return true
	}
	st := c.Inst.Lock()
	params, known := removeScript(st, t, k.Route.Via, k.Params)
	c.Inst.Unlock()
	if known && params == nil {
		// Out of Chrome already (its frame is not on a full site).
		k.Out.Kind = core.OutEmulated
		c.ReplyEmptyRaw(k.Env.ID, k.Env.SessionID)
		return false
	}
	k.Params = params
	return true
}
