package relay

import (
	"time"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/api"
	tier "github.com/cdprelay/cdprelay/relay/internal/tiers"
)

// The command pipeline: in what order a client command is judged.
//
// Every command a client sends runs through these stages, in this order,
// and stops at the first that answers it. Each stage is one or more rows
// of the commands table (order.go), named there; a row is called only for
// the methods it wants. The order is a security
// contract: nothing that a stage refuses reaches a later one, and nothing
// reaches the tab that an earlier stage refused. The stages up to ask
// judge (decide): they change nothing of the tab, so a command they
// refuse, or a person denies, leaves it as it was; the stages from
// prepare on act (act), on a command that goes on.
//
//  1. limits   the client's command rate and its commands in flight;
//  2. running  a person's Stop: while it is in force every command is
//     refused (stop.go);
//  3. route    the session the command names, the tab that executes it
//     and the session its reply names, resolved once under one lock; the
//     params that later stages judge or act on, decoded once (params.go);
//  4. in line  a command for a tab whose earlier command is held (for a
//     person's approval, or while a secret is typed) waits behind it, and
//     goes through the stages after this one when its turn comes
//     (lines.go);
//  5. policy   the operator's method rules and URL fence, on the decoded
//     URL (Policy), then the relay's own rules (rules.go);
//  6. access   what the tab lets automation do, by where it is and who
//     holds it: blind, read-only or full (access.go); and the execution
//     contexts the command names, judged by what they are now
//     (ctxguard.go);
//  7. ask      a command the policy asks a person about is held for their
//     approval (approvals.go);
//  8. prepare  what a verdict does to the tab: a navigation to a stricter
//     site takes out of Chrome what may not run there (initscripts.go);
//  9. secret   a secret typed by reference, on its own origins only
//     (secrets.go); while one is hidden, what the relay could not hide it
//     in, and a page whose password field holds one (lockgates.go);
//  10. fence   the navigation backstop's share of the tab's Fetch domain
//     (fetchfence.go);
//  11. emulate browser-level methods the relay answers itself
//     (emulate.go);
//  12. forward everything else, to the tab, params as the client's
//     original bytes (or as a stage rewrote them). A Stop that comes
//     after the running stage still catches the command here: the
//     extension connection does not take it (extpending.go).
//
// Then observe: one step, for every verdict, that counts the command and
// its outcome and records what the audit log keeps.
//
// The relay's own commands go through the same stages. A command taken off
// a line (lines.go) runs from running on, as if it had just arrived. A
// setting sent again after a resume (resume.go) is judged by policy and
// access as they are now (decide), an ask refusing it, and its params
// rewritten by the fence as a client's are; what they refuse is not sent,
// and the client is told.

// cmd is one client command on its way through the pipeline. The read
// loop owns it and reuses it for every command; a stage that hands the
// command to another goroutine copies it into a call.
type cmd struct {
	env    wire.Envelope // aliases the read buffer
	m      *methodInfo
	r      route
	a      args
	params []byte // what is forwarded: the client's params or a stage's rewrite
	out    outcome
	// ask is the policy's Ask decision, for the ask stage; held is the
	// line entry of a command taken off a line (lines.go).
	ask  Decision
	held *heldCmd
	// own: the relay's own command (a setting sent again after a resume),
	// judged as a client's but answered to nobody.
	own bool
	// isolated: the contexts k names put its script in a client's
	// isolated world (ctxguard.go).
	isolated bool
	// pol is the policy k is judged by, loaded once.
	pol polSnap
}

// outcome is a command's verdict, for the observe step.
type outcome struct {
	kind outcomeKind
	// d is the refusing decision: a policy rule's, or one of the relay's
	// own (rule "relay:...").
	d Decision
}

type outcomeKind uint8

const (
	outForwarded outcomeKind = iota
	outEmulated
	outDenied  // refused by a rule, with a CDP error
	outDropped // acknowledged and dropped by a rule
	outFailed  // answered with an error no rule decided (no such session, bad params)
	outLimited // refused by a limit before it was counted
	outStopped // refused because a person stopped the automation
	outHeld    // held in line or for a person's approval: answered later
)

// handle runs one well-formed command through the commands table
// (order.go).
func (c *clientConn) handle(k *cmd) {
	k.m, k.r, k.a, k.params, k.out, k.ask, k.held, k.isolated = lookupMethod(k.env.Method), route{}, args{}, k.env.Params, outcome{}, Decision{}, nil, false
	k.pol = c.inst.policyNow()
	c.runCommand(k, k.m.plan)
	c.observe(k)
}

// judge runs a command taken off a line (lines.go) through the stages
// after it, judged again as if it had just arrived.
func (c *clientConn) judge(k *cmd) {
	k.m, k.r, k.a, k.params, k.out, k.ask, k.isolated = lookupMethod(k.env.Method), route{}, args{}, k.env.Params, outcome{}, Decision{}, false
	k.pol = c.inst.policyNow()
	c.runCommand(k, k.m.plan&^arrivalStages)
	c.observe(k)
}

// decide runs the stages that judge a routed command: policy, access and
// ask. They change nothing of the tab; what a verdict does to it is
// act's.
func (c *clientConn) decide(k *cmd) bool {
	return c.runCommand(k, k.m.plan&judgingStages)
}

// refuse answers k with decision d of the stage that refused it: a CDP
// error for a denial, an empty result for ack-and-drop.
func (c *clientConn) refuse(k *cmd, d Decision) bool {
	if d.Verdict == AckAndDrop {
		k.out = outcome{kind: outDropped, d: d}
		if !k.own {
			c.replyEmptyRaw(k.env.ID, k.env.SessionID)
		}
		return false
	}
	k.out = outcome{kind: outDenied, d: d}
	if !k.own {
		c.replyErrorRaw(k.env.ID, k.env.SessionID, codeServerError, d.Message)
	}
	return false
}

// refuseAsThrow refuses script as the script's own exception: clients
// report a protocol error of an evaluation as the context's end (and
// retry, or say the page navigated), and an exception as what it says.
func (c *clientConn) refuseAsThrow(k *cmd, d Decision) bool {
	k.out = outcome{kind: outDenied, d: d}
	if !k.own {
		c.replyThrownRaw(k.env.ID, k.env.SessionID, d.Message)
	}
	return false
}

// failed answers k with an error that is no rule's verdict.
func (c *clientConn) failed(k *cmd, code int64, msg string) bool {
	k.out.kind = outFailed
	if !k.own {
		c.replyErrorRaw(k.env.ID, k.env.SessionID, code, msg)
	}
	return false
}

// answer answers k with result v, and answerEmpty with {}: a stage's own
// answer, which the relay's own commands do not get.
func (c *clientConn) answer(k *cmd, v any) {
	if !k.own {
		c.reply(call{id: k.env.ID, sess: k.r.replyTo}, v)
	}
}

func (c *clientConn) answerEmpty(k *cmd) {
	if !k.own {
		c.replyEmptyRaw(k.env.ID, k.env.SessionID)
	}
}

// limits is stage 1.
func (c *clientConn) limits(k *cmd) bool {
	cfg := &c.inst.srv.cfg
	switch {
	case !c.bucket.take(time.Now()):
		cfg.Metrics.limited[limitRate].Inc()
		k.out.kind = outLimited
		c.replyErrorRaw(k.env.ID, k.env.SessionID, codeServerError, msgRateLimit(cfg.CommandsPerSecond))
		return false
	case c.inflight.Load() >= int64(cfg.MaxInFlight):
		cfg.Metrics.limited[limitInFlight].Inc()
		k.out.kind = outLimited
		c.replyErrorRaw(k.env.ID, k.env.SessionID, codeServerError, msgInFlight(cfg.MaxInFlight))
		return false
	}
	cfg.Metrics.messages[dirCommand][k.m.domain].Inc()
	cfg.Metrics.bytes[dirCommand].Add(float64(len(k.env.Params)))
	return true
}

// route is where a command goes, resolved once.
type route struct {
	// sess is the session the command names (or a page endpoint's own);
	// nil for the root.
	sess *session
	// replyTo is the session the reply names: sess when the command named
	// one; nil for the root and a page endpoint's own session.
	replyTo *session
	// via is the session that carries the command to a tab: sess when it is
	// a tab's (its own or a child); for the root and browser sessions, the
	// first session of the lowest attached tab (state.rootTab). Nil when
	// no tab is attached.
	via *session
	tab *tab // via's tab
	// acc is what automation may do with tab (access.go).
	acc tabAccess
	// fenced: the navigation backstop is on for via.
	fenced bool
	// top: sess is one of a tab's top-level sessions, whose state a resume
	// sets again (resume.go).
	top bool
}

// 3. route.
func (c *clientConn) route(k *cmd) bool {
	in := c.inst
	var r route
	st := in.lock()
	if k.env.SessionID != nil || c.page != nil {
		s := st.lookupSession(c, k.env.SessionID)
		if s != nil && s.tab != nil && s.tab.resuming != nil {
			// The tab's sessions are suspended (resume.go, away.go): the
			// command waits in the tab's line, and is routed once they are
			// back (or gone), while the client's other commands go on.
			if c.holdForTab(st, k, s.tab) {
				in.unlock()
				return false
			}
			// A command taken off a line waits here, in the line's task.
			// A person's Stop ends the wait too.
			done, run := s.tab.resuming, st.runCtx
			in.unlock()
			in.resumeWaits.Add(1)
			awaitResume(c.ctx, run, done)
			in.resumeWaits.Add(-1)
			if !c.running(k) {
				return false
			}
			st = in.lock()
			s = st.lookupSession(c, k.env.SessionID)
		}
		if s == nil {
			in.unlock()
			return c.failed(k, codeNoSession, "Session with given id not found.")
		}
		r.sess = s
		if k.env.SessionID != nil {
			r.replyTo = s
		}
	}
	if r.sess != nil && r.sess.tab != nil {
		r.via = r.sess
		r.top = !r.sess.child
	} else if t := st.rootTab(); t != nil {
		r.via = t.session
		if t.resuming != nil && emulated(k.m, nil) == nil && c.holdForTab(st, k, t) {
			// Every tab is away: a command the relay does not answer itself
			// waits for the one it would go to.
			in.unlock()
			return false
		}
	}
	if r.via != nil {
		r.tab = r.via.tab
		r.acc = r.tab.acc
		sid := ""
		if r.via.child {
			sid = r.via.id
			r.acc = api.Stricter(r.acc, r.via.acc)
		}
		r.fenced = r.tab.fenced(sid)
	}
	in.unlock()
	k.r = r
	if err := argsOf(k.m, k.env.Params, &k.a); err != nil {
		return c.failed(k, codeInvalidParams, err.Error())
	}
	return true
}

// 5. policy: the operator's method rules and URL fence (rules.Operator),
// then the relay's own rules (rules.go).
func (c *clientConn) operator(k *cmd) bool {
	pol, profile := k.pol.p, c.inst.profile
	d := pol.Command(profile, k.m.name, k.env.Params)
	switch d.Verdict {
	case Ask:
		k.ask = d
	case Allow:
	default:
		return c.refuse(k, d)
	}
	if k.m.urlKey != "" {
		switch d := pol.MethodURL(profile, k.m.name, k.a.url, k.a.hasURL); d.Verdict {
		case Ask:
			if k.ask.Verdict != Ask {
				k.ask = d
			}
		case Allow:
		default:
			return c.refuse(k, d)
		}
	}
	return true
}

// 6. access: what the tab lets automation do, row by row.

// wantsNavigateTo: the commands that name a page to go to.
func wantsNavigateTo(m *methodInfo) bool {
	return m.name == "Page.navigate" || m.name == "Target.createTarget"
}

// navigateTo (tiers.Navigate): not to a page the automation could not
// see, whatever the fence.
func (c *clientConn) navigateTo(k *cmd) bool {
	if k.m.name == "Target.createTarget" && k.a.url == "" {
		return true // about:blank
	}
	st := c.inst.lock()
	to := st.urlAccess(k.a.url)
	c.inst.unlock()
	if to.Level == accessBlind {
		return c.refuse(k, Decision{Verdict: Deny, Rule: to.Rule, Message: "cdprelay: blind: " + to.Why})
	}
	return true
}

// browserLevel reports whether k is the browser's, answered by the relay:
// not the command of the tab that would carry it, whose access is not its
// own. The access rows after tiers.Navigate pass it.
func (k *cmd) browserLevel() bool {
	return (k.r.sess == nil || k.r.sess.tab == nil) && emulated(k.m, k.r.sess) != nil
}

// onTab reports whether k reaches a tab whose access rows judge it.
func (k *cmd) onTab() bool { return k.r.tab != nil && !k.browserLevel() }

// tierStage (tiers.Checks): the access rules that hold only while the
// policy has tiers (tierrules.go).
func (c *clientConn) tierStage(k *cmd) bool {
	if !k.pol.tiers || k.browserLevel() {
		return true
	}
	return c.tierChecks(k)
}

// standIn (tiers.StandIn): a blind tab's stand-ins (blindtab.go).
func (c *clientConn) standIn(k *cmd) bool {
	return !k.onTab() || k.r.acc.Level != accessBlind || !c.blindStandIn(k)
}

// wantsFrameTree: a blind tab's frame tree is the relay's.
func wantsFrameTree(m *methodInfo) bool { return m.name == "Page.getFrameTree" }

// frameTree (tiers.FrameTree): what a blind tab may show of itself,
// its origin.
func (c *clientConn) frameTree(k *cmd) bool {
	if !k.onTab() || k.r.acc.Level != accessBlind || k.r.via.child {
		return true
	}
	c.inst.lock()
	tree := tier.BlindFrameTree(k.r.tab.shownOrigin(), k.r.tab.targetID)
	c.inst.unlock()
	k.out.kind = outEmulated
	c.answer(k, tree)
	return false
}

// wantsContexts: the methods whose params name execution contexts.
func wantsContexts(m *methodInfo) bool { return m.ctx != nil }

// contextsStage (tiers.Contexts): the contexts k names, judged
// (ctxguard.go); a blind tab's are the stand-ins'.
func (c *clientConn) contextsStage(k *cmd) bool {
	return !k.onTab() || k.r.acc.Level == accessBlind || c.contexts(k)
}

// wantsRetried: the function calls a client makes after a retried input.
func wantsRetried(m *methodInfo) bool { return m.name == "Runtime.callFunctionOn" }

// retried (tiers.Retried): refusals.go.
func (c *clientConn) retried(k *cmd) bool {
	if !k.onTab() {
		return true
	}
	if d, ok := c.acts.retried(k); ok {
		return c.refuseAsThrow(k, d)
	}
	return true
}

// gateStage (tiers.Gate): the blind and read-only tables (readonly.go).
func (c *clientConn) gateStage(k *cmd) bool {
	if !k.onTab() {
		return true
	}
	if d, ok := c.gate(k, k.r.acc); !ok {
		if k.r.acc.Level == accessBlind && isScript(k.m.name) {
			return c.refuseAsThrow(k, d)
		}
		c.acts.refused(k, d)
		return c.refuse(k, d)
	}
	return true
}

// wantsPixels: the methods that show the page's pixels.
func wantsPixels(m *methodInfo) bool { return tier.Pixels(m.name) }

// pixels (tiers.Pixels): not while a frame of the tab is blind.
func (c *clientConn) pixels(k *cmd) bool {
	if !k.onTab() {
		return true
	}
	st := c.inst.lock()
	blindFrame := st.hasBlindChild(k.r.tab)
	c.inst.unlock()
	if blindFrame {
		return c.refuse(k, Decision{Verdict: Deny, Rule: ruleBlindFrame, Message: "cdprelay: blind: a frame of this page is on a site hidden from automation, and " + k.m.name + " would show its pixels"})
	}
	return true
}

// 8. prepare acts on what the judging stages decided, for a command that
// goes on. A navigation of a tab's main frame to a read-only site: the tab
// is on its way there from now, and what may not run there (the client's
// scripts for new documents) is taken out of Chrome before the navigation
// reaches it. A navigation refused, denied or never answered leaves the
// tab as it was.
func (c *clientConn) prepare(k *cmd) bool {
	if k.r.via == nil || k.r.via.child || k.r.tab == nil || !k.pol.tiers {
		return true
	}
	st := c.inst.lock()
	if st.urlAccess(k.a.url).Level == accessReadOnly {
		st.setNavTo(k.r.tab, k.a.url)
	}
	c.inst.unlock()
	return true
}

// wantsNavTo: a navigation of a tab's main frame.
func wantsNavTo(m *methodInfo) bool { return m.name == "Page.navigate" }

// observe counts k's outcome and records what the audit log keeps: every
// refusal, and the navigations the client asked for.
func (c *clientConn) observe(k *cmd) {
	in := c.inst
	switch k.out.kind {
	case outStopped:
		in.srv.cfg.Metrics.countRefusal(k.out.d)
	case outDenied:
		in.srv.cfg.Metrics.countRefusal(k.out.d)
		in.observe(Event{Actor: ActorClient, Kind: KindDenied, Method: k.m.name, Rule: k.out.d.Rule, Outcome: OutcomeDenied, Detail: k.out.d.Message})
	case outDropped:
		in.srv.cfg.Metrics.countRefusal(k.out.d)
		in.observe(Event{Actor: ActorClient, Kind: KindDropped, Method: k.m.name, Rule: k.out.d.Rule, Outcome: OutcomeDropped})
		if k.m.name == "Browser.setDownloadBehavior" {
			// Acknowledged, not applied; but whether the client wants
			// download events is kept.
			c.noteDownloadBehavior(k.a.eventsEnabled)
		}
	case outForwarded:
		if k.m.name == "Page.navigate" {
			target := ""
			if k.r.tab != nil {
				st := in.lock()
				target = k.r.tab.targetID
				st.noteNavigation(k.r.tab) // a download it starts is the client's
				in.unlock()
			}
			in.observe(Event{Actor: ActorClient, Kind: KindNavigate, Method: k.m.name, Target: target, Outcome: OutcomeOK, Detail: k.a.url})
		}
	}
}
