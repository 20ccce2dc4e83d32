// Package browser is the relay's concern "the browser as a whole": the
// Browser.* methods the relay answers itself, since a tab's
// chrome.debugger session has no Browser domain.
//
// It owns:
//   - the version: Info (what Browser.getVersion and /json/version
//     report), derived from a user agent (InfoFromUA), and the browser
//     remembered across restarts, its file and its format
//     (LoadRemembered, Remember);
//   - windows: CDP's Browser.Bounds, the chrome.windows window it is read
//     from, and setWindowBounds' params (WindowUpdate);
//   - downloads: the folders a client may have files written to
//     (DownloadsConfig, CheckFolder), the names they get there
//     (SafeFileName, ValidGUID), the check of the file the person's
//     Chrome saved (OpenSaved) and its copy (WriteDownload), and what a
//     client asked for (DownloadTo).
//
// What needs the relay's instances, tabs, clients or the extension (asking
// a tab for the user agent, asking chrome.windows, following a tab's
// download events) stays in package relay, which calls this one. This
// package works on values and the relay's own file system only. Imports
// run one way, from the facade to the stages to the core: it never
// imports package relay (github.com/cdprelay/cdprelay/relay) nor another
// stage package (rules, tiers, person, creds, targets).
package browser
