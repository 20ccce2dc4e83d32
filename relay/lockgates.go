package relay

import (
	"github.com/cdprelay/cdprelay/internal/wire"
)

// What the lock cannot read.
//
// While a secret is locked (secrets.go; a URL's password too, userinfo.go),
// every message to the client has its value replaced wherever it is
// written, in any escape or encoding (secrets.Lock). A few commands give
// what the lock cannot read, and are refused while it holds anything:
//
//   - Page.printToPDF: the text of a PDF is compressed, in the glyphs of
//     subset fonts, and a client takes it out again (a page that mirrors
//     what is typed, a footer with the page's URL);
//   - HeapProfiler.takeHeapSnapshot and stopTrackingHeapObjects: the heap's
//     strings come in chunks cut anywhere, a value across two;
//   - Network.streamResourceContent: a body's pieces in Network.dataReceived,
//     cut anywhere likewise;
//   - Tracing.start with streamCompression gzip: a compressed stream.
//
// (IO.read's pieces are joined by the relay: streams.go.)

const ruleUnscannable = "relay:secret-unscannable"

// unscannable reports the refusal of k when the lock holds anything and k
// would give what it cannot read.
func (c *clientConn) unscannable(k *cmd) (Decision, bool) {
	if c.inst.locked.Load() == nil {
		return Decision{}, true
	}
	why := ""
	switch k.m.name {
	case "Page.printToPDF":
		why = "a PDF's text is compressed, in fonts' glyphs"
	case "HeapProfiler.takeHeapSnapshot", "HeapProfiler.stopTrackingHeapObjects":
		why = "a heap snapshot comes in chunks cut anywhere"
	case "Network.streamResourceContent":
		why = "a streamed body comes in pieces cut anywhere"
	case "Tracing.start":
		if string(wire.StringField(k.env.Params, "streamCompression")) == "none" || wire.Field(k.env.Params, "streamCompression") == nil {
			return Decision{}, true
		}
		why = "a compressed trace cannot be read"
	default:
		return Decision{}, true
	}
	return deny(ruleUnscannable, "cdprelay: "+k.m.name+" is refused while a typed secret or a URL's password is hidden: "+why+", and the relay could not hide the value in it"), false
}

// secretGates are the secret stage's checks of a command that types no
// secret: what the lock cannot read, and a tab whose password field holds
// one (secretfield.go). They report false when they answered or held k.
func (c *clientConn) secretGates(k *cmd) bool {
	if d, ok := c.unscannable(k); !ok {
		return c.refuse(k, d)
	}
	return c.secretFieldGate(k)
}
