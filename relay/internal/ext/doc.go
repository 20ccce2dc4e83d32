// Package ext is the relay's connection to the browser extension: the
// instance's upstream (core.Upstream) while the extension is connected.
// It owns the socket's read loop (link.ExtReader, which opens batches),
// the ids of the calls sent and the table of those pending, the
// keepalive, and the framing of what goes up (chrome.debugger.sendCommand
// and the extension's own calls, docs/EXTENSION-PROTOCOL.md).
//
// What the extension says of its tabs is read here too (events.go): a tab
// offered, updated, removed or detached, the handshake, the popups it
// marks. What that does to the tabs and the client's sessions is carried
// out with the core's operations under the instance's lock. What the
// stock extension does not say (a tab's target id, the browser's
// version) is learnt from a shared tab (learn.go). Every tab's CDP event
// goes to core.Instance.RouteEvent and every reply to a client's command
// to core.Instance.DeliverReply, with an envelope the read loop owns and
// reuses, so that routing one allocates nothing. The relay's own calls end
// here: their reply goes to whoever waits for it (Call, SendCommand) or
// to nobody (Fire, FireCall).
//
// A second kind of upstream (a Chrome reached by its own debugging port)
// would be a sibling package implementing core.Upstream.
package ext
