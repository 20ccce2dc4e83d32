// Package ext is the relay's connection to the browser extension: the
// instance's upstream (core.Upstream) while the extension is connected.
// It owns the socket's read loop (link.ExtReader, which opens batches),
// the ids of the calls sent and the table of those pending, the
// keepalive, and the framing of what goes up (chrome.debugger.sendCommand
// and the extension's own calls, docs/EXTENSION-PROTOCOL.md).
//
// What the extension's events and replies mean is the core's: the read
// loop hands every event to core.Instance.HandleExtEvent and every reply
// to a client's command to core.Instance.DeliverReply, with the message
// and a reused envelope it owns, so that routing one allocates nothing.
// The relay's own calls end here: their reply goes to whoever waits for
// it (Call, SendCommand) or to nobody (Fire, FireCall).
//
// A second kind of upstream (a Chrome reached by its own debugging port)
// would be a sibling package implementing core.Upstream.
package ext
