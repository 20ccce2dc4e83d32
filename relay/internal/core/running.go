package core

import "github.com/cdprelay/cdprelay/relay/internal/api"

// The Stop, honoured: the person sets and lifts it (person's stop.go); the core
// refuses every command while it holds, before anything else looks at one.

// Running is the stage before all others: a stopped instance refuses
// every command. Refusals while stopped are counted, and audited once, at
// Resume.
func (c *ClientConn) Running(k *Cmd) bool {
	if !c.Inst.IsStopped.Load() {
		return true
	}
	return c.refuseStopped(k)
}

// refuseStopped refuses k because a person stopped the automation. It
// reports false, as a stage that answered.
func (c *ClientConn) refuseStopped(k *Cmd) bool {
	c.Inst.Lock()
	c.Inst.St.RefusedStopped++
	c.Inst.Unlock()
	k.Out = outcome{Kind: outStopped, d: Decision{Verdict: Deny, Rule: api.RuleStopped, Message: api.MsgStopped}}
	c.ReplyStopped(k.Env.ID, k.Env.SessionID, string(k.Env.Method))
	return false
}

// ReplyStopped answers command id, of method, with the person's stop: a
// script as its own exception, so that the client reports the stop and
// not a context that ended (Playwright words any error of an evaluation
// so); any other command as an error.
func (c *ClientConn) ReplyStopped(id int64, sessionID []byte, method string) {
	if IsScript(method) {
		c.replyThrownRaw(id, sessionID, api.MsgStopped)
		return
	}
	c.ReplyErrorRaw(id, sessionID, CodeServerError, api.MsgStopped)
}
