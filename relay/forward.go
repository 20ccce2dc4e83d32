package relay

import (
	"strconv"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/creds"
)

// The acting rows of the commands table (order.go): what the relay does
// itself with a command the judges let through (types a secret, answers
// it, sends it as the fence has it), and what a command that goes to the
// tab does on its way.

// wantsSecret: the commands that may type a secret by reference.
func wantsSecret(m *methodInfo) bool {
	switch m.name {
	case "Input.insertText", "Input.imeSetComposition", "Input.dispatchKeyEvent", "CDPRelay.fillSecret":
		return true
	}
	return false
}

// wantsLockGates: creds.LockGates is the secret stage's for every other
// method (lockgates.go).
func wantsLockGates(m *methodInfo) bool { return !wantsSecret(m) }

// 9. secret (creds.Secret): a command that types a secret by reference
// is the relay's to carry out: it checks where the focus is, then types
// the value.
func (c *clientConn) secret(k *cmd) bool {
	name, d, is := secretRef(k)
	if !is {
		return c.secretGates(k) // creds.LockGates's, for these methods too
	}
	if d.Verdict != Allow {
		return c.refuse(k, d)
	}
	k.out.kind = outEmulated
	cl := call{id: k.env.ID, method: k.m.name, sess: k.r.sess, a: k.a, acc: k.r.acc, via: k.r.via, replyTo: k.r.replyTo}
	cl.stop = c.inst.stopMark()
	// The client's later commands for the tab wait until it is typed.
	h := c.occupyLine(k)
	c.wg.Add(1)
	c.inst.tasks.spawn("type a secret", func() {
		defer c.wg.Done()
		defer c.releaseLine(h)
		c.typeSecret(cl, name)
	})
	return false
}

// wantsFence: the client's share of the Fetch domain.
func wantsFence(m *methodInfo) bool { return m.name == "Fetch.enable" || m.name == "Fetch.disable" }

// 10. fence (rules.Fence): on a fenced session the client's Fetch.enable
// and Fetch.disable become one Fetch.enable that keeps the backstop's
// pattern, whichever session sent them (before the emulation, which would
// watch them as a domain switch).
func (c *clientConn) fence(k *cmd) bool {
	if !k.r.fenced {
		return true
	}
	enable := k.m.name == "Fetch.enable"
	if !enable && k.m.name != "Fetch.disable" {
		return true // a resume's replay calls it for every setting
	}
	in := c.inst
	sid := ""
	if k.r.via.child {
		sid = k.r.via.id
	}
	st := in.lock()
	k.params = st.fetchRewrite(k.r.tab, sid, &k.a, enable, k.r.replyTo)
	if k.r.top && !k.own {
		st.recordSwitch(k.r.tab, "Fetch", enable, k.env.Params)
	}
	in.unlock()
	if k.own {
		k.m = methodFetchEnable // sent by the replay, as rewritten
		return false
	}
	c.sendAs(k, methodFetchEnable)
	return false
}

// wantsEmulate: the methods emulated answers for some session: the
// browser's and the targets' (at any level), a history entry, and the
// domain switches of a tab's sessions.
func wantsEmulate(m *methodInfo) bool {
	return m.domain == domainBrowser || m.domain == domainTarget || m.enable || m.disable ||
		m.name == "Page.navigateToHistoryEntry" || m.name == "Page.setDownloadBehavior"
}

// 11. emulate (core.Emulate): what the relay answers itself.
func (c *clientConn) emulate(k *cmd) bool {
	h := emulated(k.m, k.r.sess)
	if h == nil {
		return true
	}
	k.out.kind = outEmulated
	cl := call{id: k.env.ID, method: k.m.name, sess: k.r.sess, a: k.a, acc: k.r.acc, stop: c.inst.stopMark(), approved: k.held != nil && k.held.approved}
	if k.env.Params != nil {
		cl.params = append([]byte(nil), k.env.Params...)
	}
	if !h.blocking {
		h.fn(c, cl)
		return false
	}
	// Handlers that wait for the extension run beside the read loop, so a
	// slow attach does not hold up the client's other traffic.
	c.wg.Add(1)
	c.inst.tasks.spawn("emulate "+cl.method, func() {
		defer c.wg.Done()
		h.fn(c, cl)
	})
	return false
}

// 12. forward: what goes to the tab, row by row.

// needsPage (core.NeedsPage): a command for a tab needs one.
func (c *clientConn) needsPage(k *cmd) bool {
	if k.r.via == nil {
		return c.failed(k, codeServerError, "cdprelay: "+k.m.name+" needs a page, and no tab is attached")
	}
	return true
}

// wantsScreencastNote: the client's own screencast.
func wantsScreencastNote(m *methodInfo) bool {
	return m.name == "Page.startScreencast" || m.name == "Page.stopScreencast"
}

// screencastNote (core.ScreencastNote): the client runs a screencast of
// its own on a tab.
func (c *clientConn) screencastNote(k *cmd) bool {
	if s := k.r.sess; s != nil && s.tab != nil && !s.child {
		c.noteClientScreencast(s.tab, k.m.name == "Page.startScreencast")
	}
	return true
}

// noteClientScreencast records that the client runs a screencast of its own
// on t (its frames then go to the client) and tells the live view.
func (c *clientConn) noteClientScreencast(t *tab, on bool) {
	c.inst.lock()
	t.clientScreencast = on
	hs := t.handles
	c.inst.unlock()
	notifyHandles(hs, TabEvent{Method: EventClientScreencast, Params: jsonObj("active", on)})
}

// wantsDialog: the answer to a JavaScript dialog.
func wantsDialog(m *methodInfo) bool { return m.name == "Page.handleJavaScriptDialog" }

// dialogClaim (person.DialogClaim): the first answer wins: the person's
// in the live view, the automation's, or the relay's when nobody answers.
func (c *clientConn) dialogClaim(k *cmd) bool {
	if k.r.via.tab == nil || k.r.via.child {
		return true
	}
	st := c.inst.lock()
	d, ok := st.claimDialog(k.r.via.tab)
	c.inst.unlock()
	if !ok {
		return c.refuse(k, d)
	}
	return true
}

// wantsWorlds: what makes a world of the client's.
func wantsWorlds(m *methodInfo) bool {
	return m.name == "Page.addScriptToEvaluateOnNewDocument" || m.name == "Page.createIsolatedWorld"
}

// worlds (tiers.Worlds): the tab's worlds and scripts for new documents
// (initscripts.go).
func (c *clientConn) worlds(k *cmd) bool {
	t := k.r.via.tab
	if t == nil {
		return true
	}
	c.inst.lock()
	t.noteWorld(k.params)
	full := k.m.name == "Page.addScriptToEvaluateOnNewDocument" && len(t.scripts) >= maxInitScripts && !initRunsNothing(k.params)
	c.inst.unlock()
	if full {
		// The relay could not take one more out of Chrome when the tab
		// leaves for a site where it may not run.
		return c.failed(k, codeServerError, "cdprelay: too many scripts for new documents on this tab ("+strconv.Itoa(maxInitScripts)+")")
	}
	return true
}

// wantsRemoveScript: a script for new documents taken out.
func wantsRemoveScript(m *methodInfo) bool {
	return m.name == "Page.removeScriptToEvaluateOnNewDocument"
}

// removeScriptStage (tiers.RemoveScript): a script the relay took out of
// Chrome is answered; another's identifier is Chrome's.
func (c *clientConn) removeScriptStage(k *cmd) bool {
	t := k.r.via.tab
	if t == nil {
		return true
	}
	st := c.inst.lock()
	params, known := st.removeScript(t, k.r.via, k.params)
	c.inst.unlock()
	if known && params == nil {
		// Out of Chrome already (its frame is not on a full site).
		k.out.kind = outEmulated
		c.replyEmptyRaw(k.env.ID, k.env.SessionID)
		return false
	}
	k.params = params
	return true
}

// wantsStreams: reading a stream.
func wantsStreams(m *methodInfo) bool { return m.name == "IO.read" || m.name == "IO.close" }

// streamsStage (creds.Streams): while a secret is locked, a stream's
// pieces are joined where they meet (creds.Streams).
func (c *clientConn) streamsStage(k *cmd) bool {
	if c.inst.Locked.Load() == nil {
		return true
	}
	handle, _, err := exactString(k.env.Params, "handle")
	if k.m.name == "IO.close" {
		c.inst.Streams.Forget(0, handle)
	} else if _, seek := wire.Member(k.env.Params, "offset"); seek > 0 || err != nil || len(handle) > creds.MaxStreamHandle {
		// A handle the relay could not read as Chrome does (given twice)
		// would join the pieces of one stream with another's.
		return c.failed(k, codeServerError, "cdprelay: a stream is read from its start while a typed secret is hidden (no offset)")
	} else {
		c.inst.Streams.NoteRead(k.env.ID, handle)
	}
	return true
}

// wantsBrake: the commands the brake has a word in (brake.go).
func wantsBrake(m *methodInfo) bool { return m.brake }

// brakeStage (person.Brake): brake.go.
func (c *clientConn) brakeStage(k *cmd) bool { return !c.brakeCommand(k) }

// sendStage (core.Send): the command goes to its tab; one whose effect a
// resume sets again is kept for that (resume.go).
func (c *clientConn) sendStage(k *cmd) bool {
	if k.m.replay != replayNone {
		if k.r.top {
			c.sendKept(k)
			return true
		}
		c.keepFrameSetting(k)
	}
	c.send(k)
	return true
}
