// Package relay turns the extension's shared tabs into an ordinary Chrome
// DevTools Protocol endpoint.
//
// An Instance is one extension connection (one browser profile): a public
// id, a secret 128-bit guid carried by its capability URLs, at most one CDP
// client and the tabs the person shares. The Server routes HTTP requests and
// WebSocket upgrades to instances and answers discovery (/json/version,
// /json/list) the way Chrome's own debugging port does.
//
// A client frame is decoded only as far as its envelope (internal/wire).
// Browser-level methods that a tab-level chrome.debugger session cannot
// serve (Browser.getVersion, Target.setAutoAttach at the root,
// Target.createTarget, ...) are answered here; everything else is sent to
// the extension as chrome.debugger.sendCommand with the client's params as
// their original bytes, and the reply goes back with the client's own id and
// sessionId. Top-level tab sessions are minted by the relay; child sessions
// (cross-origin frames, workers) keep Chrome's ids and are routed to their
// tab.
//
// The package is the facade: the Server (routes, upgrades, discovery,
// tenants, the admin endpoint), the public names the rest of the product
// uses, and the order (order.go): the three tables, commands, events and
// replies, that say what the relay does with each message, top to bottom
// in security order. Everything else is under relay/internal: the core
// (instances, tabs, sessions, the read loops, the emulation; its package
// doc says where each thing is decided and lists the relay's own
// commands), the concerns' packages (rules, tiers, person, creds, browser),
// the vocabulary they share (api), the protocol's names (cdp) and the
// sockets (link).
package relay
