// Package fakeext is an in-process extension speaking protocol v2 to the
// relay, for contract tests and benchmarks. It models the parts of Chrome
// the relay relies on: tabs with target ids, chrome.debugger attachment
// (one debugger per tab, chrome:// refused), sendCommand answered by a
// handler, tab creation and removal with their events, and a page's
// navigator.userAgent.
//
// It plays one of two extensions. By default it is ours: it says who the
// browser is (extension.info), puts each tab's targetId in its offers and
// can activate tabs (chrome.tabs.update). With Options.Stock it is the
// stock Playwright extension as its protocol describes it
// (docs/EXTENSION-PROTOCOL.md): the v2 commands chrome.debugger.attach, detach
// and sendCommand, chrome.tabs.create and remove, and no others; the events
// chrome.debugger.onEvent and onDetach, chrome.tabs.onCreated and onRemoved
// and extension.initialized, and no others (no extension.info, no tab
// updates, no keepalive); plain chrome.tabs.Tab objects without targetId;
// and its Web Store origin. With Options.Batches it is ours with batch
// frames: it lists the feature, reads the relay's batches element by
// element, and once the relay accepts them batches its own replies and
// events as our extension does.
//
// Quick is the other fake, for load and benchmarks: our extension's
// handshake with one shared tab, then every command answered at once with
// canned bytes, nothing recorded.
package fakeext
