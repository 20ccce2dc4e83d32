package core

import (
	"time"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
	"github.com/cdprelay/cdprelay/relay/internal/methods"
	"github.com/cdprelay/cdprelay/relay/internal/metrics"
)

// The command pipeline: the runner of the commands table and the core's
// own rows of it. The facade writes the table (package relay, order.go),
// and its doc says, stage by stage, in what order a client command is
// judged and acted on, and how the relay's own commands go through it.

// Cmd is one client command on its way through the pipeline. The read
// loop owns it and reuses it for every command; a stage that hands the
// command to another goroutine copies it into a call.
type Cmd struct {
	Env    wire.Envelope // aliases the read buffer
	M      *MethodInfo
	Route  route
	Args   cdp.Args
	Params []byte // what is forwarded: the client's params or a stage's rewrite
	Out    outcome
	// ask is the policy's Ask decision, for the ask stage; held is the
	// line entry of a command taken off a line (package lines).
	Ask  Decision
	Held *HeldCmd
	// own: the relay's own command (a setting sent again after a resume),
	// judged as a client's but answered to nobody.
	Own bool
	// isolated: the contexts k names put its script in a client's
	// isolated world (the tiers' contexts.go).
	Isolated bool
	// pol is the policy k is judged by, loaded once.
	Policy polSnap
}

// outcome is a command's verdict, for the observe step.
type outcome struct {
	Kind outcomeKind
	// d is the refusing decision: a policy rule's, or one of the relay's
	// own (rule "relay:...").
	d Decision
}

type outcomeKind uint8

const (
	OutForwarded outcomeKind = iota
	OutEmulated
	outDenied  // refused by a rule, with a CDP error
	OutDropped // acknowledged and dropped by a rule
	outFailed  // answered with an error no rule decided (no such session, bad params)
	outLimited // refused by a limit before it was counted
	outStopped // refused because a person stopped the automation
	OutHeld    // held in line or for a person's approval: answered later
)

// Handle runs one well-formed command through the commands table
// (order.go).
func (c *ClientConn) Handle(k *Cmd) {
	k.M, k.Route, k.Args, k.Params, k.Out, k.Ask, k.Held, k.Isolated = LookupMethod(k.Env.Method), route{}, cdp.Args{}, k.Env.Params, outcome{}, Decision{}, nil, false
	k.Policy = c.Inst.policyNow()
	c.runCommand(k, k.M.Plan)
	c.observe(k)
}

// Judge runs a command taken off a line (package lines) through the
// stages after it, judged again as if it had just arrived.
func (c *ClientConn) Judge(k *Cmd) {
	k.M, k.Route, k.Args, k.Params, k.Out, k.Ask, k.Isolated = LookupMethod(k.Env.Method), route{}, cdp.Args{}, k.Env.Params, outcome{}, Decision{}, false
	k.Policy = c.Inst.policyNow()
	c.runCommand(k, k.M.Plan&^arrivalStages)
	c.observe(k)
}

// decide runs the stages that judge a routed command: policy, access and
// ask. They change nothing of the tab; what a verdict does to it is
// act's.
func (c *ClientConn) decide(k *Cmd) bool {
	return c.runCommand(k, k.M.Plan&judgingStages)
}

// Refuse answers k with decision d of the stage that refused it: a CDP
// error for a denial, an empty result for ack-and-drop.
func (c *ClientConn) Refuse(k *Cmd, d Decision) bool {
	if d.Verdict == AckAndDrop {
		k.Out = outcome{Kind: OutDropped, d: d}
		if !k.Own {
			c.ReplyEmptyRaw(k.Env.ID, k.Env.SessionID)
		}
		return false
	}
	k.Out = outcome{Kind: outDenied, d: d}
	if !k.Own {
		c.ReplyErrorRaw(k.Env.ID, k.Env.SessionID, CodeServerError, d.Message)
	}
	return false
}

// RefuseAsThrow refuses script as the script's own exception: clients
// report a protocol error of an evaluation as the context's end (and
// retry, or say the page navigated), and an exception as what it says.
func (c *ClientConn) RefuseAsThrow(k *Cmd, d Decision) bool {
	k.Out = outcome{Kind: outDenied, d: d}
	if !k.Own {
		c.replyThrownRaw(k.Env.ID, k.Env.SessionID, d.Message)
	}
	return false
}

// Failed answers k with an error that is no rule's verdict.
func (c *ClientConn) Failed(k *Cmd, code int64, msg string) bool {
	k.Out.Kind = outFailed
	if !k.Own {
		c.ReplyErrorRaw(k.Env.ID, k.Env.SessionID, code, msg)
	}
	return false
}

// Answer answers k with result v, and answerEmpty with {}: a stage's own
// answer, which the relay's own commands do not get.
func (c *ClientConn) Answer(k *Cmd, v any) {
	if !k.Own {
		c.Reply(Call{Id: k.Env.ID, Sess: k.Route.ReplyTo}, v)
	}
}

func (c *ClientConn) AnswerEmpty(k *Cmd) {
	if !k.Own {
		c.ReplyEmptyRaw(k.Env.ID, k.Env.SessionID)
	}
}

// Limits is stage 1.
func (c *ClientConn) Limits(k *Cmd) bool {
	cfg := &c.Inst.Srv.Cfg
	switch {
	case !c.rate.Take(time.Now()):
		cfg.Metrics.Limited[metrics.LimitRate].Inc()
		k.Out.Kind = outLimited
		c.ReplyErrorRaw(k.Env.ID, k.Env.SessionID, CodeServerError, msgRateLimit(cfg.CommandsPerSecond))
		return false
	case c.Inflight.Load() >= int64(cfg.MaxInFlight):
		cfg.Metrics.Limited[metrics.LimitInFlight].Inc()
		k.Out.Kind = outLimited
		c.ReplyErrorRaw(k.Env.ID, k.Env.SessionID, CodeServerError, msgInFlight(cfg.MaxInFlight))
		return false
	}
	cfg.Metrics.Count(metrics.DirCommand, k.M.Domain, len(k.Env.Params))
	return true
}

// route is where a command goes, resolved once.
type route struct {
	// sess is the session the command names (or a page endpoint's own);
	// nil for the root.
	Sess *Session
	// replyTo is the session the reply names: sess when the command named
	// one; nil for the root and a page endpoint's own session.
	ReplyTo *Session
	// via is the session that carries the command to a tab: sess when it is
	// a tab's (its own or a child); for the root and browser sessions, the
	// first session of the lowest attached tab (state.rootTab). Nil when
	// no tab is attached.
	Via *Session
	Tab *Tab // via's tab
	// acc is what automation may do with tab (access.go).
	Acc TabAccess
	// Top: sess is one of a tab's top-level sessions, whose state a resume
	// sets again (resume.go).
	Top bool
}

// 3. route.
func (c *ClientConn) Route(k *Cmd) bool {
	in := c.Inst
	var r route
	st := in.Lock()
	if k.Env.SessionID != nil || c.Page != nil {
		s := st.lookupSession(c, k.Env.SessionID)
		if s != nil && s.Tab != nil && s.Tab.Resuming != nil {
			// The tab's sessions are suspended (away.go, relay/internal/away): the
			// command waits in the tab's line, and is routed once they are
			// back (or gone), while the client's other commands go on.
			if heldLines.ForTabLocked(c, st, k, s.Tab) {
				in.Unlock()
				return false
			}
			// A command taken off a line waits here, in the line's task.
			// A person's Stop ends the wait too.
			done, run := s.Tab.Resuming, st.runCtx
			in.Unlock()
			in.ResumeWaits.Add(1)
			awaitResume(c.Ctx, run, done)
			in.ResumeWaits.Add(-1)
			if !c.Running(k) {
				return false
			}
			st = in.Lock()
			s = st.lookupSession(c, k.Env.SessionID)
		}
		if s == nil {
			in.Unlock()
			return c.Failed(k, CodeNoSession, "Session with given id not found.")
		}
		r.Sess = s
		if k.Env.SessionID != nil {
			r.ReplyTo = s
		}
	}
	if r.Sess != nil && r.Sess.Tab != nil {
		r.Via = r.Sess
		r.Top = !r.Sess.Child
	} else if t := st.rootTab(); t != nil {
		r.Via = t.Session
		if t.Resuming != nil && Emulated(k.M, nil) == nil && heldLines.ForTabLocked(c, st, k, t) {
			// Every tab is away: a command the relay does not answer itself
			// waits for the one it would go to.
			in.Unlock()
			return false
		}
	}
	if r.Via != nil {
		r.Tab = r.Via.Tab
		r.Acc = r.Tab.Acc
		if r.Via.Child {
			r.Acc = api.Stricter(r.Acc, r.Via.Acc)
		}
	}
	in.Unlock()
	k.Route = r
	if err := methods.ArgsOf(k.M, k.Env.Params, &k.Args); err != nil {
		return c.Failed(k, CodeInvalidParams, err.Error())
	}
	return true
}

// 6. access: what the tab lets automation do, row by row.

// BrowserLevel reports whether k is the browser's, answered by the relay:
// not the command of the tab that would carry it, whose access is not its
// own. The access rows after tiers.Navigate pass it.
func (k *Cmd) BrowserLevel() bool {
	return (k.Route.Sess == nil || k.Route.Sess.Tab == nil) && Emulated(k.M, k.Route.Sess) != nil
}

// OnTab reports whether k reaches a tab whose access rows judge it.
func (k *Cmd) OnTab() bool { return k.Route.Tab != nil && !k.BrowserLevel() }

// observe counts k's outcome and records what the audit log keeps: every
// refusal, and the navigations the client asked for. The stages that watch
// the outcome of the method (AddOutcomeHooks) see it first.
func (c *ClientConn) observe(k *Cmd) {
	in := c.Inst
	if k.M.Outcome {
		for _, h := range outcomeHooks[k.M.Name] {
			h(c, k)
		}
	}
	switch k.Out.Kind {
	case outStopped:
		in.Srv.Cfg.Metrics.CountRefusal(k.Out.d)
	case outDenied:
		in.Srv.Cfg.Metrics.CountRefusal(k.Out.d)
		in.Observe(Event{Actor: api.ActorClient, Kind: api.KindDenied, Method: k.M.Name, Rule: k.Out.d.Rule, Outcome: api.OutcomeDenied, Detail: k.Out.d.Message})
	case OutDropped:
		in.Srv.Cfg.Metrics.CountRefusal(k.Out.d)
		in.Observe(Event{Actor: api.ActorClient, Kind: api.KindDropped, Method: k.M.Name, Rule: k.Out.d.Rule, Outcome: api.OutcomeDropped})
	case OutForwarded:
		if k.M.Name == "Page.navigate" {
			target := ""
			if k.Route.Tab != nil {
				in.Lock()
				target = k.Route.Tab.TargetID
				in.Unlock()
			}
			in.Observe(Event{Actor: api.ActorClient, Kind: api.KindNavigate, Method: k.M.Name, Target: target, Outcome: api.OutcomeOK, Detail: k.Args.Url})
		}
	}
}
