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
// doc lists the relay's own commands and what runs under its lock), the
// concerns' packages (rules, tiers, person, creds, browser),
// the vocabulary they share (api), the protocol's names (cdp) and the
// sockets (link).
//
// # Where things are decided
//
//   - The order of the stages: order.go here, three tables (commands,
//     events, replies), top to bottom in security order, handed to the
//     core once (core.SetOrder; the core's order.go runs them). Each row
//     is named "concern.Step"; the commands table's doc says what each
//     stage of a command does, the core's events.go and replies.go each of
//     its own event and reply rows, and a stage's package its own rows
//     (browser, creds, person, rules, tiers).
//   - What each concern keeps per tab, session, client and instance: for a
//     stage package, its slots (the core's slots.go), declared in the
//     package (browser: downloadcalls.go; creds: stageslots.go; person:
//     slots.go; rules: backstop.go); for the tiers and the core's own
//     parts, a struct in a slots file of the core (tierslots.go,
//     resumeslots.go), embedded in its Tab, Session, State, ClientConn or
//     Instance. What stays in those structs directly is the core's own.
//   - What the core asks of the stages besides their rows: the services
//     (core.Services, handed over in order.go) and the lifecycle hooks
//     (core.AddLifecycle).
//   - What of each concern needs no instance, tab or client — its tables,
//     texts, parsers and byte work — is in its package under
//     relay/internal (rules, tiers, person, creds), beside the vocabulary
//     every part shares (api), the protocol's names, codes and params
//     (cdp), the relay's own origins (origins), the sockets (link), the
//     configuration (config) and the metrics (metrics). Imports run one
//     way: layers_test.go keeps them so.
//   - What runs under the instance lock: the core's package doc says.
//   - How a stage is added: in its package under relay/internal, write a
//     func(c *core.ClientConn, k *core.Cmd) bool (false: the stage
//     answered, refused or held the command) and, when it cares about a
//     few methods only, a Wants func(*core.MethodInfo) bool; put a row at
//     its place in the commands table (Judges: true when it only decides
//     and changes nothing of the tab); add its name to TestCommandOrder
//     and a behavioural pin of each adjacency that matters to
//     order_command_test.go. An event row is a func(*core.Instance,
//     *core.EventMsg) bool run under the lock, a reply row a
//     func(*core.Instance, *core.Reply) bool. What it keeps goes in slots
//     made in its package's variables. The method's plan is computed once,
//     when the method is interned, so a message the stage does not want
//     pays nothing. Package browser is the worked example.
package relay
