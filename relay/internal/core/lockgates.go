package core

import (
	"github.com/cdprelay/cdprelay/relay/internal/creds"
)

// What the lock cannot read (internal/creds): while it holds anything,
// the commands that would give it are refused.

const ruleUnscannable = "relay:secret-unscannable"

// unscannable reports the refusal of k when the lock holds anything and k
// would give what it cannot read.
func (c *ClientConn) unscannable(k *Cmd) (Decision, bool) {
	if c.Inst.Locked.Load() == nil {
		return Decision{}, true
	}
	why := creds.Unscannable(k.M.Name, k.Env.Params)
	if why == "" {
		return Decision{}, true
	}
	return deny(ruleUnscannable, "cdprelay: "+k.M.Name+" is refused while a typed secret or a URL's password is hidden: "+why+", and the relay could not hide the value in it"), false
}

// SecretGates are the secret stage's checks of a command that types no
// secret: what the lock cannot read, and a tab whose password field holds
// one (secretfield.go). They report false when they answered or held k.
func (c *ClientConn) SecretGates(k *Cmd) bool {
	if d, ok := c.unscannable(k); !ok {
		return c.refuse(k, d)
	}
	return c.secretFieldGate(k)
}
