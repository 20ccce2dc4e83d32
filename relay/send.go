package relay

// Sending a command on: the forward stage's last step (pipeline.go), for a
// command as the client sent it, as a stage rewrote it, or one whose effect
// a resume sets again (resume.go).

// sendKept forwards k, a command whose effect a resume sets again
// (resume.go), and keeps it for that; an init script's identifier is read
// from its reply.
func (c *clientConn) sendKept(k *cmd) {
	st := c.inst.lock()
	t := k.r.tab
	if k.m.replay == replayUnscript {
		if p := st.scriptRewrite(t, k.params); p != nil {
			k.params = p
		}
	}
	var tap func([]byte)
	if key := st.record(t, k.m, k.env.Params); key != "" {
		tap = c.inst.tapScript(t, key)
	}
	c.inst.unlock()
	k.out.kind = outForwarded
	if err := c.ext().forwardTap(c, k.env.ID, k.m, k.env.Method, k.params, k.r.via, k.r.replyTo, tap); err != nil {
		c.notSent(k, err)
	}
}

// send forwards k on its route with k.params.
func (c *clientConn) send(k *cmd) {
	k.out.kind = outForwarded
	if err := c.ext().forward(c, k.env.ID, k.m, k.env.Method, k.params, k.r.via, k.r.replyTo); err != nil {
		c.notSent(k, err)
	}
}

// sendAs forwards k as another method (a stage's rewrite).
func (c *clientConn) sendAs(k *cmd, m *methodInfo) {
	k.out.kind = outForwarded
	if err := c.ext().forward(c, k.env.ID, m, []byte(m.name), k.params, k.r.via, k.r.replyTo); err != nil {
		c.notSent(k, err)
	}
}

// notSent answers k, which the extension connection did not take: a Stop
// came between the pipeline's first stage and the send, or the
// extension has gone.
func (c *clientConn) notSent(k *cmd, err error) {
	if err == errSendStopped {
		// Refused as the running stage refuses, even if a Resume has come
		// since: the command was not sent.
		c.refuseStopped(k)
		return
	}
	c.failed(k, codeServerError, "Extension disconnected")
}
