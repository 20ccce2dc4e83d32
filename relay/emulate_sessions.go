package relay

import (
	"strings"

	"github.com/cdprelay/cdprelay/internal/wire"
)

// setDownloadBehavior is answered, never forwarded: where files go is the
// person's Chrome's business. Whether the client wants download events is
// kept: the relay turns the tab's Page.download* into Browser.download*.
func (c *clientConn) setDownloadBehavior(cmd command) {
	c.noteDownloadBehavior(cmd.params)
	c.reply(cmd, struct{}{})
}

// attachToBrowserTarget gives the client a session whose commands behave
// like the root's (Playwright's browser.newBrowserCDPSession(), and the
// session its context.newCDPSession(page) attaches from).
func (c *clientConn) attachToBrowserTarget(cmd command) {
	in := c.inst
	in.mu.Lock()
	if len(in.sessions) >= maxSessions {
		in.mu.Unlock()
		c.fail(cmd, codeServerError, errTooManySessions)
		return
	}
	s := in.mintBrowserSessionLocked(c)
	in.mu.Unlock()
	c.reply(cmd, map[string]string{"sessionId": s.id})
}

// detachOnSession handles Target.detachFromTarget sent on a tab's session:
// a child of that session is Chrome's to detach, one of the relay's own
// sessions is the relay's. It decides on the read loop, so that a forwarded
// detach keeps its place among the client's commands.
func (c *clientConn) detachOnSession(cmd command) {
	id := wire.StringField(cmd.params, "sessionId")
	in := c.inst
	in.mu.Lock()
	s := in.sessions[string(id)]
	ours := s != nil && !s.child
	in.mu.Unlock()
	if !ours {
		c.forwardCmd(cmd)
		return
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.detachFromTarget(cmd)
	}()
}

// domainSwitch watches X.enable and X.disable on a tab's top-level
// sessions (see sessions.go): enabling is recorded and forwarded; disabling
// is forwarded only when no other session of the tab still has the domain.
func (c *clientConn) domainSwitch(cmd command) {
	s := cmd.sess
	on := strings.HasSuffix(cmd.method, ".enable")
	domain := domainOf([]byte(cmd.method))
	in := c.inst
	in.mu.Lock()
	keep := false
	if in.sessions[s.id] == s {
		if on {
			if s.enabled == nil {
				s.enabled = make(map[string]bool)
			}
			s.enabled[domain] = true
		} else {
			delete(s.enabled, domain)
			keep = in.domainWantedLocked(s.tab, s, domain)
		}
	}
	in.mu.Unlock()
	if keep {
		c.reply(cmd, struct{}{})
		return
	}
	c.forwardCmd(cmd)
}

// forwardCmd sends an emulation handler's command on to its tab, as the
// read loop would have.
func (c *clientConn) forwardCmd(cmd command) {
	env := wire.Envelope{ID: cmd.id, HasID: true, Method: []byte(cmd.method), Params: cmd.params}
	if cmd.sess.idJSON != nil {
		env.SessionID = []byte(cmd.sess.id)
	}
	if !c.ext.forward(c, &env, cmd.sess) {
		c.replyError(cmd.id, cmd.sess, codeServerError, "Extension disconnected")
	}
}
