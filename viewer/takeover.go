package viewer

// Take-over: an interactive viewer takes control of the tab it watches
// from the automation, and hands it back.

func (c *conn) takeControl(req *request) {
	switch {
	case !c.interactive:
		c.sendError(req, "this viewer may only watch")
		return
	case c.cur == nil:
		c.sendError(req, "subscribe to a tab before taking control")
		return
	}
	k := c.cur.key
	if err := c.cur.w.inst.TakeControl(k.tab, c.holder); err != nil {
		c.sendError(req, "take control: "+err.Error())
		return
	}
	c.holding = true
	c.log.Info("control taken", "instance", k.instance, "tab", k.tab)
	c.srv.broadcast(c.cur.w.inst, mustJSON(controlMsg{Type: msgControl, Instance: k.instance, Tab: k.tab, Holder: c.holder}))
}

// release hands cur's tab back to automation.
func (c *conn) release() {
	k := c.cur.key
	c.holding = false
	if err := c.cur.w.inst.ReleaseControl(k.tab, c.holder); err != nil {
		// The tab went, and its control with it.
		c.log.Debug("hand back", "tab", k.tab, "err", err)
	}
	c.log.Info("control handed back", "instance", k.instance, "tab", k.tab)
	c.srv.broadcast(c.cur.w.inst, mustJSON(controlMsg{Type: msgControl, Instance: k.instance, Tab: k.tab, Holder: ""}))
}
