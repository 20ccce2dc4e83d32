// Command soak runs the relay, as the product assembles it
// (internal/app), for minutes against a real headless Chromium with the
// cdprelay extension and an unmodified Playwright client
// (e2e/soak-client.mjs) in a loop, while it injects faults: the
// extension's service worker stopped and woken, the extension reloaded,
// the client's page (or a tab of the person's) taken to chrome://version
// and back, tabs opened and closed under the client, canceled_by_user
// detaches (on a second instance played
// by internal/fakeext: headless Chromium has no debugging bar to cancel),
// frozen live-view viewers, hostile frames from other clients and on an
// extension socket, and policy reloads. It checks its invariants the
// whole time and exits non-zero if any breaks:
//
//   - every client operation succeeds or fails with a clear error within
//     its deadline;
//   - no command runs twice (counters in the page, and every probe
//     command counted at the fake extension);
//   - the client's page lives through a detour to a browser page, an
//     extension reload and a worker restart: no page closed under it, its
//     connection never ended;
//   - the live view's healthy viewer gets frames while its tab is
//     attached;
//   - the audit sequence has no gap, in the ring and in its file;
//   - goroutines and heap stay within a bound of the warm-up's, and come
//     back down when the load stops;
//   - the relay never restarts (it runs in this process: a panic ends the
//     run).
//
// Usage: soak [-duration 3m] [-fault-every 5s] [-v]
//
// With -smoke it runs for a few seconds, with faults close together: a
// check that the soak and what it drives still work, not a soak.
package main
