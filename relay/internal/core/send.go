package core

import "github.com/cdprelay/cdprelay/relay/internal/replay"

// Sending a command on: the forward stage's last step (pipeline.go), for a
// command as the client sent it, as a stage rewrote it, or one whose effect
// a resume sets again (resume.go).

// sendKept forwards k, a command whose effect a resume sets again
// (resume.go), and keeps it for that; an init script's identifier is read
// from its reply.
func (c *ClientConn) sendKept(k *Cmd) {
	c.Inst.Lock()
	t := k.Route.Tab
	if k.M.Replay == replay.Unscript {
		if p := t.Replay.ScriptRewrite(k.Params); p != nil {
			k.Params = p
		}
	}
	var tap func([]byte)
	if key := t.Replay.Add(k.M.Replay, k.M.Name, k.Env.Params); key != "" {
		tap = c.Inst.tapScript(t, key)
	}
	c.Inst.Unlock()
	k.Out.Kind = OutForwarded
	if err := c.Ext().Forward(c, k.Env.ID, k.M, k.Env.Method, k.Params, k.Route.Via, k.Route.ReplyTo, tap); err != nil {
		c.notSent(k, err)
	}
}

// send forwards k on its route with k.params.
func (c *ClientConn) Send(k *Cmd) {
	k.Out.Kind = OutForwarded
	if err := c.Ext().Forward(c, k.Env.ID, k.M, k.Env.Method, k.Params, k.Route.Via, k.Route.ReplyTo, nil); err != nil {
		c.notSent(k, err)
	}
}

// sendAs forwards k as another method (a stage's rewrite).
func (c *ClientConn) SendAs(k *Cmd, m *MethodInfo) {
	k.Out.Kind = OutForwarded
	if err := c.Ext().Forward(c, k.Env.ID, m, m.NameBytes, k.Params, k.Route.Via, k.Route.ReplyTo, nil); err != nil {
		c.notSent(k, err)
	}
}

// notSent answers k, which the extension connection did not take: a Stop
// came between the pipeline's first stage and the send, or the
// extension has gone.
func (c *ClientConn) notSent(k *Cmd, err error) {
	if err == ErrSendStopped {
		// Refused as the running stage refuses, even if a Resume has come
		// since: the command was not sent.
		c.refuseStopped(k)
		return
	}
	c.Failed(k, CodeServerError, "Extension disconnected")
}
