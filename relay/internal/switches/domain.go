package switches

import (
	"github.com/cdprelay/cdprelay/relay/internal/core"
)

// domainSwitch answers X.enable and X.disable on a tab's top-level
// sessions: enabling is recorded and forwarded; disabling is forwarded
// only when no other session of the tab still has the domain.
func domainSwitch(c *core.ClientConn, k core.Call) {
	on := k.Method[len(k.Method)-len(".enable"):] == ".enable"
	domain := core.DomainOf([]byte(k.Method))
	st := c.Inst.Lock()
	forward := st.SwitchDomain(k.Sess, domain, on)
	if st.Live(k.Sess) {
		k.Sess.Tab.Replay.Switch(domain, on, k.Params)
	}
	c.Inst.Unlock()
	c.Switched(k.Sess, domain, on)
	if !forward {
		c.Reply(k, struct{}{})
		return
	}
	c.ForwardCall(k)
}
