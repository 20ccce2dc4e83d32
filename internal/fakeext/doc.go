// Package fakeext is an in-process extension speaking protocol v2 to the
// relay, for contract tests and benchmarks. It models the parts of Chrome
// the relay relies on: tabs with target ids, chrome.debugger attachment
// (one debugger per tab, chrome:// refused), sendCommand answered by a
// handler, tab creation and removal with their events, and a page's
// navigator.userAgent.
//
// It plays one of two extensions. By default it is ours: it says who the
// browser is (extension.info, with Options.Features), puts each tab's
// targetId in its offers and can activate tabs (chrome.tabs.update); with
// the "windows" feature it answers chrome.tabs.get and chrome.windows.get
// and update for its one window, with "detach-cause" it says why a tab it
// closes detached. With Options.Stock it is the stock Playwright extension
// as its documented protocol describes it (docs/EXTENSION-PROTOCOL.md) and with
// its habits: the v2 commands chrome.debugger.attach, detach and
// sendCommand, chrome.tabs.create and remove, and no others; the events
// chrome.debugger.onEvent and onDetach, chrome.tabs.onCreated and
// extension.initialized, and no others (no extension.info, no tab updates,
// no keepalive; a closed tab's chrome.tabs.onRemoved is filtered out, so a
// closed tab is only a detach); plain chrome.tabs.Tab objects without
// targetId; and its Web Store origin.
//
// Chrome's own behaviour it can play: a tab detached by the browser with a
// reason (and our extension's cause), an attach refused (another
// extension's frame in the tab), a discarded tab replaced by a new one.
// The relay's keepalives are counted, not recorded among the commands.
// With Options.Batches it is ours with batch frames: it lists the
// feature, reads the relay's batches element by element, and once the
// relay accepts them batches its own replies and events as our extension
// does.
//
// Quick is the other fake, for load and benchmarks: our extension's
// handshake with one shared tab, then every command answered at once with
// canned bytes, nothing recorded.
package fakeext
