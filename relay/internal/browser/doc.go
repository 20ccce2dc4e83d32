// Package browser is the relay's stage "the browser as a whole": the
// Browser.* methods of the version, windows and downloads, which the relay answers
// itself, since a tab's chrome.debugger session has no Browser domain.
// It is the first stage that left the core: what it does with instances,
// clients and tabs is here, on the core's types, and the core reaches it
// only through what the facade hands over at assembly (relay/order.go).
//
// How it is plugged in:
//   - Emulations (VersionEmulations, WindowEmulations,
//     DownloadEmulations, given to core.AddEmulations): the methods it
//     answers at the relay — Browser.getVersion, from what the extension
//     or a tab said of the browser (version.go); Browser.getWindowForTarget, getWindowBounds, setWindowBounds,
//     Target.getDevToolsTarget through chrome.windows (windowcalls.go);
//     Browser.setDownloadBehavior and, on a tab's session,
//     Page.setDownloadBehavior (downloadcalls.go).
//   - An outcome hook (DownloadOutcomes, core.AddOutcomeHooks): a
//     Browser.setDownloadBehavior the policy acknowledged without applying
//     still says whether the client wants download events; a navigation
//     the client asked for makes a download it starts the client's.
//   - A row of the events table (Downloads, "browser.Downloads"): a tab's
//     download events, held until the file is in place, withheld when the
//     download is not the client's.
//   - The browser's policy refusals (Refusals, core.Services.Refusals): the
//     tabs a policy of the browser keeps the debugger out of, audited once
//     and listed in the instance's status for the live view
//     (refusals.go).
//   - Its state, in the core's slots (core.NewClientSlot,
//     core.NewStateSlot): where each client wants its files and whether it
//     wants the events; the downloads under way and the tabs' last
//     navigations, per instance. Both are guarded by the instance's mutex.
//
// What needs no instance, tab or client is here too: CDP's Browser.Bounds,
// the chrome.windows window it is read from, and setWindowBounds' params
// (WindowUpdate); the folders a client may have files written to
// (CheckFolder), the names they get there (SafeFileName, ValidGUID), the
// check of the file the person's Chrome saved (OpenSaved) and its copy
// (WriteDownload). The browser's identity (its version, the browser
// remembered across restarts) is the core's: discovery and the emulation
// of Target.* need it.
//
// Imports run one way, from the facade to the stages to the core: it never
// imports package relay nor another stage package.
package browser
