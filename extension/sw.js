// The service worker: holds the one WebSocket to the relay, answers its
// commands with chrome.debugger / chrome.tabs calls, and forwards the events
// of the tabs the person shares. The wire format is "protocol v2": commands
// {id, method, params[]}, replies {id, result|error}, events {method, params[]}.

import { attachable, refusalCause, relayUrlProblem, tabUrl } from "./common.js";

const KEEPALIVE_MS = 20_000; // the worker is stopped after 30 s without traffic
const BACKOFF_MS = [500, 1000, 2000, 4000, 5000];
// How often a tab Chrome detached is looked at again, until it can be
// attached (the other extension's frame gone, say); a navigation looks at it
// at once.
const RECHECK_MS = [150, 300, 600, 1200, 2500, 5000];
// How long a tab the frame guard cleared waits for the relay to attach it
// again before the guard lets the other extension back in.
const GUARD_WAIT_MS = 10_000;
// The relay attaches a cleared tab again by itself, to resume its sessions;
// if it has not after this long, the tab is offered again.
const RESUME_WAIT_MS = 2000;
const KEEPALIVE = '{"method":"extension.keepalive","params":[]}';
const INITIALIZED = '{"method":"extension.initialized","params":[]}';
// Batch frames (feature "batches"): once the relay accepts them, what is to
// be sent waits while a command that came in the last BATCH_HOLD_MS is being
// answered, for at most BATCH_HOLD_MS, and goes in one frame of at most
// BATCH_MAX_CHARS; a larger message goes alone.
const BATCH_HOLD_MS = 2;
const BATCH_MAX_CHARS = 1 << 20;
// Back-pressure: while more than SEND_BACKLOG_BYTES wait to go to the relay
// (the socket's bufferedAmount plus the batch being held), a
// Page.screencastFrame is dropped instead of queued, and acked here, so that
// Chrome keeps streaming (it stops after 3 unacked frames). Nothing else is
// ever dropped: replies and other events wait their turn. 4 MiB is well
// above what a healthy connection holds at once: a batch frame is at most
// 1 Mi characters, and a frame is a base64 JPEG of at most 1920×1080 at
// quality 70 (the relay's defaults), some 100–400 KB, of which Chrome has
// only 2 or 3 unacked per screencast; a loopback relay that keeps reading
// drains even a multi-MB screenshot reply in milliseconds. Above it the
// relay is not keeping up (or the network to it is slow), and each further
// frame would only add to the wait of the replies queued behind it.
const SEND_BACKLOG_BYTES = 4 << 20;
const noop = () => {};

// guardFrames: the person allows the frame guard (guard.js) in tabs the
// automation holds.
const settings = { relay: "", share: "pick", picked: [], enabled: false, guardFrames: false };

// Tabs the relay may see and attach. In "pick" mode these are the picked tabs;
// in "all" mode every tab on an attachable URL that the person did not decline.
const shared = new Set();
// "all" mode only: tabs the person took back (unticked, or cancelled the debugger bar).
const declined = new Set();
// "all" mode only: shared tabs no longer shared because they went to a page
// an extension may not debug. A client's page waits for such a tab at the
// relay, so its closing is still told.
const leftForPage = new Set();
// Tabs opened by the relay's chrome.tabs.create; the relay announces those itself.
const relayCreated = new Set();
// chrome.tabs.onCreated can fire before chrome.tabs.create resolves, so its
// listener waits for these before deciding whether a tab is the relay's.
const creating = new Set();
// Tabs a policy of the browser keeps the debugger out of (policyCause):
// tab id to {cause, url}, for the connect page, until the tab is attached
// again or closed.
const refused = new Map();

// "pick" mode: tabs opened from a shared tab, offered to the relay, which
// says whether the automation opened them (extension.sharePopup). Until it
// has, they are not shared.
const candidates = new Set();

// The current connection: {ws, open, attached, offered, away, guarded, chain,
// keepalive, batch, busy, outbox, outChars, flushTimer}. attached: tabs the
// relay attached over it; offered: tabs it was told about; away: shared tabs
// Chrome detached or refused to attach, to offer again once they can be
// attached (tab id to {cause, tries, timer}); guarded: tabs whose documents
// run the frame guard; batch: the relay accepts batch frames; busy: when
// each command being answered came (id → performance.now()); outbox:
// messages for the next batch frame.
let conn = null;
let attempt = 0;
let retryTimer = 0;
const status = { state: "disconnected", error: "" };
// Screencast frames dropped under back-pressure since the worker started;
// the connect page shows the count.
let droppedFrames = 0;

const errorText = (e) => String((e && e.message) || e);

const browserInfo = (async () => {
  const userAgent = navigator.userAgent;
  let version = (userAgent.match(/(?:Chrome|Chromium)\/([\d.]+)/) || [])[1] || "";
  try {
    const { fullVersionList = [] } = await navigator.userAgentData.getHighEntropyValues(["fullVersionList"]);
    const brand =
      fullVersionList.find((b) => b.brand === "Google Chrome") || fullVersionList.find((b) => b.brand === "Chromium");
    if (brand) version = brand.version;
  } catch {
    // Keep the version from the user agent string.
  }
  // As Chrome's own Browser.getVersion says it, headless or not (the user
  // agent says which).
  const product = "Chrome/" + version;
  return {
    userAgent,
    product,
    version,
    extensionVersion: chrome.runtime.getManifest().version,
    // What this extension can do beyond protocol v2 (docs/EXTENSION-PROTOCOL.md).
    // wake: a stopped worker comes back by itself (the alarm below) and
    // offers the shared tabs again, so the relay keeps its clients meanwhile.
    features: [
      "navigation-fence",
      "popup-consent",
      "detach-cause",
      "windows",
      "keepalive",
      "batches",
      "downloads",
      "wake",
    ],
  };
})();

// ---- connection ------------------------------------------------------------

function connect() {
  if (conn !== null || !settings.enabled) return;
  clearTimeout(retryTimer);
  retryTimer = 0;
  const problem = relayUrlProblem(settings.relay);
  if (problem) {
    publish("disconnected", problem);
    return;
  }
  let ws;
  try {
    ws = new WebSocket(settings.relay);
  } catch (e) {
    publish("disconnected", errorText(e));
    return;
  }
  const c = {
    ws,
    open: false,
    attached: new Set(),
    offered: new Set(),
    away: new Map(),
    guarded: new Map(),
    chain: Promise.resolve(),
    keepalive: 0,
    batch: false,
    busy: new Map(),
    outbox: [],
    outChars: 0,
    flushTimer: 0,
  };
  conn = c;
  publish("connecting");
  ws.onopen = () => {
    c.open = true;
    attempt = 0;
    c.keepalive = setInterval(() => out(c, KEEPALIVE), KEEPALIVE_MS);
    publish("connected", "");
    handshake(c);
  };
  ws.onmessage = (e) => onMessage(c, e.data);
  ws.onclose = (e) => {
    if (conn !== c) return; // closed on purpose; already cleaned up
    const wasOpen = c.open;
    drop(c);
    retry(
      wasOpen ? `connection closed (code ${e.code}${e.reason ? ": " + e.reason : ""})` : "relay refused or unreachable",
    );
  };
}

function retry(error) {
  publish("disconnected", error);
  if (!settings.enabled) return;
  retryTimer = setTimeout(connect, BACKOFF_MS[Math.min(attempt++, BACKOFF_MS.length - 1)]);
}

// A new connection starts from nothing: the relay re-attaches what it needs,
// and a debugger left attached would keep the infobar up for no one.
function drop(c) {
  if (conn === c) conn = null;
  c.open = false;
  clearInterval(c.keepalive);
  clearTimeout(c.flushTimer);
  c.outbox = [];
  setFence(null);
  for (const tabId of c.attached) chrome.debugger.detach({ tabId }).catch(noop);
  for (const tabId of [...c.guarded.keys()]) unguard(c, tabId);
  for (const a of c.away.values()) clearTimeout(a.timer);
  c.attached.clear();
  c.offered.clear();
  c.away.clear();
}

function closeConn() {
  clearTimeout(retryTimer);
  retryTimer = 0;
  const c = conn;
  if (c === null) return;
  drop(c);
  c.ws.close(1000);
}

function send(c, method, params) {
  if (c.open) out(c, JSON.stringify({ method, params }));
}

// out sends one message, or, once the relay accepts batches, holds it while
// a command that came recently is being answered: its reply is likely to
// follow at once, and one frame costs the browser's network service and the
// relay one wake-up instead of one per message.
function out(c, text) {
  if (!c.batch) {
    c.ws.send(text);
    return;
  }
  if (text.length >= BATCH_MAX_CHARS) {
    flush(c);
    c.ws.send(text);
    return;
  }
  if (c.outChars + text.length + 2 > BATCH_MAX_CHARS) flush(c);
  c.outbox.push(text);
  c.outChars += text.length + 1;
  if (!answering(c)) {
    flush(c);
  } else if (c.flushTimer === 0) {
    c.flushTimer = setTimeout(() => flush(c), BATCH_HOLD_MS);
  }
}

// answering reports whether a command that came in the last BATCH_HOLD_MS
// is still being answered; one that takes longer (an awaited promise, a
// screenshot) holds nothing back.
function answering(c) {
  if (c.busy.size === 0) return false;
  const since = performance.now() - BATCH_HOLD_MS;
  for (const t of c.busy.values()) if (t > since) return true;
  return false;
}

function flush(c) {
  clearTimeout(c.flushTimer);
  c.flushTimer = 0;
  if (c.outbox.length === 0) return;
  const frame = c.outbox.length === 1 ? c.outbox[0] : "[" + c.outbox.join(",") + "]";
  c.outbox = [];
  c.outChars = 0;
  if (c.open) c.ws.send(frame);
}

// Tab announcements need an async look-up of the target id; running them in
// one chain per connection keeps onCreated, onUpdated and onRemoved in order.
function enqueue(c, fn) {
  c.chain = c.chain.then(() => (conn === c ? fn() : undefined)).catch((e) => console.warn("cdprelay:", errorText(e)));
}

function handshake(c) {
  enqueue(c, async () => send(c, "extension.info", [await browserInfo]));
  enqueue(c, async () => {
    const tabs = (await chrome.tabs.query({})).filter(
      (t) => shared.has(t.id) && !c.offered.has(t.id) && attachable(tabUrl(t)),
    );
    for (const t of tabs) c.offered.add(t.id);
    await offer(c, tabs);
  });
  enqueue(c, () => c.open && out(c, INITIALIZED));
}

async function targetIds() {
  const ids = new Map();
  for (const t of await chrome.debugger.getTargets()) {
    if (t.type === "page" && t.tabId !== undefined && !ids.has(t.tabId)) ids.set(t.tabId, t.id);
  }
  return ids;
}

async function offer(c, tabs, untracked = false) {
  if (tabs.length === 0) return;
  const ids = await targetIds();
  for (const tab of tabs) {
    if (!untracked && !c.offered.has(tab.id)) continue; // withdrawn meanwhile
    const targetId = ids.get(tab.id);
    if (targetId) tab.targetId = targetId;
    send(c, "chrome.tabs.onCreated", [tab]);
  }
}

function announce(c, tab) {
  if (c === null || !c.open || c.offered.has(tab.id) || c.away.has(tab.id) || !attachable(tabUrl(tab))) return;
  c.offered.add(tab.id);
  enqueue(c, () => offer(c, [tab]));
}

// ---- relay commands --------------------------------------------------------

function reply(c, id, result) {
  c.busy.delete(id);
  out(c, '{"id":' + id + ',"result":' + (result === undefined ? "{}" : JSON.stringify(result)) + "}");
}

function replyError(c, id, e) {
  c.busy.delete(id);
  out(c, JSON.stringify({ id, error: errorText(e) }));
}

// A frame is one command, or a batch of them: each is answered on its own,
// and one that is not a command does not keep the others from running.
function onMessage(c, data) {
  let msg;
  try {
    msg = JSON.parse(data);
  } catch {
    return;
  }
  if (!Array.isArray(msg)) {
    onCommand(c, msg);
    return;
  }
  for (const m of msg) onCommand(c, m);
}

function onCommand(c, msg) {
  if (msg === null || typeof msg !== "object" || Array.isArray(msg)) return;
  const id = msg.id;
  if (c.batch) c.busy.set(id, performance.now());
  if (msg.method === "chrome.debugger.sendCommand") {
    // The hot path: nothing here but the check, the call and the reply.
    const p = msg.params;
    // Only to a tab this connection attached and still shares, on a web page.
    if (!(p && p[0] && c.attached.has(p[0].tabId))) {
      replyError(c, id, `Debugger is not attached to the tab with id: ${p && p[0] && p[0].tabId}.`);
      return;
    }
    let pending;
    try {
      pending = chrome.debugger.sendCommand(p[0], p[1], p[2]);
    } catch (e) {
      replyError(c, id, e); // bad arguments throw instead of rejecting
      return;
    }
    pending.then(
      (r) => reply(c, id, r),
      (e) => replyError(c, id, e),
    );
    return;
  }
  const command = Object.hasOwn(COMMANDS, msg.method) ? COMMANDS[msg.method] : undefined;
  if (command === undefined) {
    replyError(c, id, "Unknown method: " + msg.method);
    return;
  }
  command(c, msg.params || []).then(
    (r) => reply(c, id, r),
    (e) => replyError(c, id, e),
  );
}

function mustBeShared(tabId) {
  if (!shared.has(tabId)) throw new Error(`Tab ${tabId} is not shared`);
}

async function mustShowShared(windowId) {
  const tabs = Number.isInteger(windowId) ? await chrome.tabs.query({ windowId }).catch(() => []) : [];
  if (!tabs.some((t) => shared.has(t.id))) throw new Error("Browser window not found");
}

// chrome.debugger.attach, taking over a session of our own that a stopped
// worker left behind.
async function debuggerAttach(debuggee, version) {
  try {
    await chrome.debugger.attach(debuggee, version || "1.3");
  } catch (e) {
    // A worker that was stopped while attached leaves its own session
    // behind; detach succeeds only for that one, never for another client.
    if (!/already attached/i.test(errorText(e))) throw e;
    await chrome.debugger.detach(debuggee).catch(() => {
      throw e;
    });
    await chrome.debugger.attach(debuggee, version || "1.3");
  }
}

const COMMANDS = {
  // The relay takes batch frames from now on.
  async "extension.acceptBatches"(c) {
    c.batch = true;
  },
  async "chrome.debugger.attach"(c, [target, version]) {
    const tabId = target.tabId;
    mustBeShared(tabId);
    if (c.attached.has(tabId)) throw new Error(`Another debugger is already attached to the tab with id: ${tabId}.`);
    // The tab as it is now, not as it was offered.
    const now = await chrome.tabs.get(tabId);
    if (!attachable(tabUrl(now))) {
      withdraw(c, tabId, "restricted_url");
      throw new Error(`Tab ${tabId} shows a page that is never shared.`);
    }
    // A discarded tab has no page to debug: load it, as a click on it would.
    if (now.discarded) await chrome.tabs.reload(tabId);
    if (c.guarded.has(tabId) && foreignFrames(tabId) > 0) {
      // Another extension's frame is there: Chrome would take the tab back
      // at once. Cleared when the person allows it; else not now.
      if (settings.guardFrames) await guardFrame(tabId, undefined);
      if (foreignFrames(tabId) > 0) {
        withdraw(c, tabId, "extension_frame");
        throw new Error("Cannot access a chrome-extension:// URL of different extension");
      }
    }
    const debuggee = { tabId };
    try {
      await withTab(tabId, () => debuggerAttach(debuggee, version));
    } catch (e) {
      // Chrome's refusal: offered again once it would say yes.
      const cause = refusalCause(errorText(e));
      noteRefused(tabId, cause, tabUrl(now));
      if (cause !== "tab_closed") withdraw(c, tabId, cause);
      throw e;
    }
    if (conn !== c || !c.open) {
      chrome.debugger.detach(debuggee).catch(noop);
      throw new Error("connection closed");
    }
    c.attached.add(tabId);
    c.offered.add(tabId);
    if (refused.delete(tabId)) publish();
    const away = c.away.get(tabId);
    if (away) clearTimeout(away.timer);
    c.away.delete(tabId);
    // It may have moved on while attaching.
    const after = await chrome.tabs.get(tabId).catch(() => null);
    if (after === null || !attachable(tabUrl(after))) {
      letGo(c, tabId, "restricted_url");
      throw new Error(`Tab ${tabId} shows a page that is never shared.`);
    }
    await guard(c, tabId);
    return {};
  },

  async "chrome.debugger.detach"(c, [target]) {
    c.attached.delete(target.tabId);
    unguard(c, target.tabId);
    await chrome.debugger.detach({ tabId: target.tabId });
    return {};
  },

  async "chrome.tabs.create"(c, [props]) {
    // Without a URL Chrome opens its new-tab page, which cannot be attached.
    const create = { ...props, url: (props && props.url) || "about:blank" };
    // With no window left (the person closed the last one), a new window,
    // as Chrome's own Target.createTarget opens one.
    const pending = chrome.tabs.create(create).catch((e) => {
      if (!/No current window/i.test(errorText(e))) throw e;
      return chrome.windows.create({ url: create.url, focused: create.active !== false }).then((w) => w.tabs[0]);
    });
    // Chained before the onCreated listener's wait, so it knows the id by then.
    const known = pending.then((tab) => void relayCreated.add(tab.id)).catch(noop);
    creating.add(known);
    let tab;
    try {
      tab = await pending;
    } finally {
      creating.delete(known);
    }
    shared.add(tab.id);
    addPicked(tab.id); // so it stays shared if the worker restarts
    if (conn === c) c.offered.add(tab.id);
    publish();
    const targetId = (await targetIds()).get(tab.id);
    if (targetId) tab.targetId = targetId;
    return tab;
  },

  async "chrome.tabs.remove"(c, [tabId]) {
    mustBeShared(tabId);
    await chrome.tabs.remove(tabId);
    return {};
  },

  async "chrome.tabs.update"(c, [tabId, props]) {
    mustBeShared(tabId);
    return chrome.tabs.update(tabId, props || {});
  },

  // The tab as Chrome has it now (its window, above all).
  async "chrome.tabs.get"(c, [tabId]) {
    mustBeShared(tabId);
    return chrome.tabs.get(tabId);
  },

  // The windows of shared tabs, for the relay's Browser.getWindowForTarget,
  // getWindowBounds and setWindowBounds: no other window is known.
  async "chrome.windows.get"(c, [windowId]) {
    await mustShowShared(windowId);
    return chrome.windows.get(windowId);
  },

  async "chrome.windows.update"(c, [windowId, props]) {
    await mustShowShared(windowId);
    const update = {};
    for (const k of ["left", "top", "width", "height", "state"])
      if (props && props[k] !== undefined) update[k] = props[k];
    return chrome.windows.update(windowId, update);
  },

  // Which of the tabs the relay names are closed: after a restart, the tabs
  // whose automation waited for this worker and that it did not offer again
  // are either closed or on a page never shared. Nothing more of any tab is
  // said than whether it is still open.
  async "extension.closedTabs"(c, [ids]) {
    const open = new Set((await chrome.tabs.query({})).map((t) => t.id));
    return (Array.isArray(ids) ? ids : []).filter((id) => Number.isInteger(id) && !open.has(id));
  },

  // The relay's own keepalive: a data message keeps the worker running where
  // a WebSocket ping does not.
  async "extension.keepalive"() {
    return {};
  },

  // The relay's fence as declarativeNetRequest rules (null: none), for the
  // shared tabs and every tab not known to be the person's.
  async "extension.setNavigationFence"(c, [rules]) {
    await setFence(Array.isArray(rules) ? rules : null);
    return {};
  },

  // Where Chrome saved the file of a download the automation started, for
  // the relay to copy where the client asked (downloads.go in the relay).
  "extension.downloadFile"(c, [query]) {
    // One question at a time: a download told of is then no other's.
    const answer = downloadQuestions.then(() => downloadFile(query));
    downloadQuestions = answer.catch(noop);
    return answer;
  },

  // The relay's answer for a tab opened from a shared tab: shared when the
  // automation opened it, the person's otherwise.
  async "extension.sharePopup"(c, [tabId, yes]) {
    if (!candidates.delete(tabId)) return {};
    if (yes) {
      shared.add(tabId);
      addPicked(tabId);
      publish();
    } else {
      c.offered.delete(tabId);
      personTab(tabId);
    }
    return {};
  },
};

// ---- downloads -------------------------------------------------------------

// How long the relay's question waits for Chrome to finish the download it
// asks about (it asks once Chrome told the tab's debugger it completed).
const DOWNLOAD_WAIT_MS = 10_000;
const NO_DOWNLOADS =
  "the person has not allowed cdprelay to read Chrome's downloads (the extension's page: \"Copy the automation's downloads\")";

// downloadFile finds the one download of query.url that Chrome started
// query.ageMs ago (give or take) with query.bytes bytes, and says where it
// saved it. Only that download: nothing else of the person's downloads
// list leaves the browser, and the relay asks only about downloads of the
// tabs the automation drives.
async function downloadFile(query) {
  if (!(await chrome.permissions.contains({ permissions: ["downloads"] }))) throw new Error(NO_DOWNLOADS);
  const url = String((query && query.url) || "");
  const bytes = Number(query && query.bytes);
  const age = Math.max(0, Number(query && query.ageMs) || 0);
  if (!url) throw new Error("no download address");
  const since = new Date(Date.now() - age - 10_000).toISOString();
  for (const until = Date.now() + DOWNLOAD_WAIT_MS; ;) {
    const items = (await chrome.downloads.search({ startedAfter: since, orderBy: ["-startTime"], limit: 50 })).filter(
      (i) => i.url === url || i.finalUrl === url,
    );
    const told = await toldDownloads();
    const done = items.filter(
      (i) => i.state === "complete" && (!(bytes >= 0) || i.fileSize === bytes) && !told.includes(i.id),
    );
    if (done.length > 1)
      throw new Error(
        "Chrome has several downloads of this address just now; which one is the automation's cannot be told",
      );
    if (done.length === 1) {
      const i = done[0];
      if (!i.exists) throw new Error("the file Chrome saved is gone");
      await chrome.storage.session.set({ toldDownloads: [...told, i.id].slice(-TOLD_DOWNLOADS_MAX) });
      return { path: i.filename, bytes: i.fileSize };
    }
    if (items.length > 0 && items.every((i) => i.state === "interrupted"))
      throw new Error(`Chrome did not finish the download (${items[0].error || "interrupted"})`);
    if (Date.now() > until)
      throw new Error(items.length > 0 ? "Chrome did not finish the download in time" : "Chrome has no such download");
    await new Promise((r) => setTimeout(r, 100));
  }
}

// The downloads whose file the relay was already told of (by chrome's
// download id), latest last: each answers one question, so a download of
// the same address moments after another (the same file, downloaded again)
// is told from the one before. In the session's storage, which outlives
// the worker.
const TOLD_DOWNLOADS_MAX = 256;
let downloadQuestions = Promise.resolve();
async function toldDownloads() {
  const { toldDownloads: ids } = await chrome.storage.session.get("toldDownloads");
  return Array.isArray(ids) ? ids : [];
}

// Whether the person allows it (an optional permission, asked for on the
// connect page; a browser the relay launched has it outright).
let downloadsAllowed = false;
async function checkDownloads() {
  downloadsAllowed = await chrome.permissions.contains({ permissions: ["downloads"] }).catch(() => false);
}
chrome.permissions.onAdded.addListener(() => checkDownloads().then(() => publish()));
chrome.permissions.onRemoved.addListener(() => checkDownloads().then(() => publish()));

// ---- the first-request fence --------------------------------------------

// While automation is connected, the relay's URL fence is installed as
// session rules that Chrome applies before a request leaves the browser:
// the only way to fence a popup's first request, a speculative prefetch or
// an out-of-process frame. The person's own tabs are left out of it.
const fence = { rules: null, installed: [], chain: Promise.resolve() };
// Tabs known to be the person's in "pick" mode, and requests of no tab (-1).
const personTabs = new Set();

function setFence(rules) {
  fence.rules = rules;
  return applyFence();
}

function applyFence() {
  fence.chain = fence.chain.then(async () => {
    const excluded = [-1];
    if (fence.rules !== null) {
      for (const t of await chrome.tabs.query({})) {
        if (!shared.has(t.id) && !candidates.has(t.id)) excluded.push(t.id);
      }
      for (const id of personTabs) if (!excluded.includes(id)) excluded.push(id);
    }
    const addRules = (fence.rules || []).map((r) => ({
      ...r,
      condition: { ...r.condition, excludedTabIds: excluded },
    }));
    await chrome.declarativeNetRequest.updateSessionRules({ removeRuleIds: fence.installed, addRules });
    fence.installed = addRules.map((r) => r.id);
  });
  return fence.chain.catch((e) => console.warn("cdprelay: fence:", errorText(e)));
}

// A tab that is the person's: out of the fence. If its first navigation was
// blocked while it was not known yet, it is made once more.
const blockedFirst = new Map();

function personTab(tabId) {
  personTabs.add(tabId);
  if (fence.rules === null) return;
  applyFence().then(() => {
    const url = blockedFirst.get(tabId);
    blockedFirst.delete(tabId);
    if (url) chrome.tabs.update(tabId, { url }).catch(noop);
  });
}

chrome.webNavigation.onErrorOccurred.addListener((d) => {
  if (d.frameId !== 0 || fence.rules === null || !/ERR_BLOCKED_BY_CLIENT/.test(d.error)) return;
  if (personTabs.has(d.tabId) && !blockedFirst.has(d.tabId)) {
    // Known to be the person's only after the fence stopped it.
    chrome.tabs.update(d.tabId, { url: d.url }).catch(noop);
  } else if (candidates.has(d.tabId)) {
    blockedFirst.set(d.tabId, d.url);
  }
});

// ---- chrome.debugger events ------------------------------------------------

chrome.debugger.onEvent.addListener((source, method, params) => {
  const c = conn;
  if (c === null || !c.attached.has(source.tabId)) return;
  if (method === "Page.screencastFrame" && backedUp(c) && dropFrame(source, params)) return;
  out(c, JSON.stringify({ method: "chrome.debugger.onEvent", params: [source, method, params] }));
});

// backedUp reports whether more than SEND_BACKLOG_BYTES wait to go to the
// relay: sent to the socket and not yet written out, or held for the next
// batch frame.
function backedUp(c) {
  return backlog(c) > SEND_BACKLOG_BYTES;
}

function backlog(c) {
  return c.ws.bufferedAmount + c.outChars;
}

// dropFrame drops a screencast frame instead of queueing it, and acks it as
// its receiver would have (with the frame's own number, to the session it
// came from), so that Chrome keeps streaming: the relay's live view, or a
// client's own screencast, gets the frames that come once the connection
// has caught up. A frame without its number cannot be acked, and is sent
// after all. Returns whether the frame was dropped.
function dropFrame(source, params) {
  const frame = params && params.sessionId;
  if (!Number.isInteger(frame)) return false;
  const debuggee =
    source.sessionId === undefined ? { tabId: source.tabId } : { tabId: source.tabId, sessionId: source.sessionId };
  try {
    chrome.debugger.sendCommand(debuggee, "Page.screencastFrameAck", { sessionId: frame }).catch(noop);
  } catch {
    return false; // bad arguments throw instead of rejecting: send the frame
  }
  if (droppedFrames++ === 0) console.warn("cdprelay: the relay connection is backed up: dropping screencast frames");
  publishSoon();
  return true;
}

// Chrome detaches a tab by itself when it goes where the debugger cannot
// follow: a browser or Web Store page, another extension's page or frame (a
// password manager's inline menu), a discarded tab's replacement, or the
// person's Cancel on the debugging bar. The relay is told why, and a tab
// that stays shared is offered again as soon as Chrome would let it be
// attached: after its next committed navigation to a web page, or once the
// other extension's frame is gone.
chrome.debugger.onDetach.addListener((source, reason) => {
  const c = conn;
  const tabId = source.tabId;
  if (c === null || !c.attached.delete(tabId)) return;
  c.offered.delete(tabId);
  if (reason === "canceled_by_user") {
    unguard(c, tabId);
    send(c, "chrome.debugger.onDetach", [{ tabId }, reason, { cause: "canceled_by_user" }]);
    unshare(tabId).catch(noop);
    return;
  }
  // In the chain: its onRemoved, if the tab closed, comes after.
  enqueue(c, async () => {
    const why = await whyDetached(c, tabId);
    send(c, "chrome.debugger.onDetach", [{ tabId }, reason, why]);
    if (why.cause === "tab_closed") {
      unguard(c, tabId);
      return;
    }
    const flaps = flapping(tabId);
    if (why.cleared && !flaps) {
      // The relay attaches it again itself, to resume its sessions.
      awaitRelay(c, tabId, why.cause);
      return;
    }
    // Offered again at once when it can be, unless it keeps being detached.
    awaitAttachable(c, tabId, why.cause, why.cause === "unknown" && !flaps);
  });
});

// flapping reports whether Chrome detached the tab several times in the
// last few seconds: it is then looked at again only after a while.
const detaches = new Map(); // tab id to the times of its recent detaches
function flapping(tabId) {
  const t = Date.now();
  const recent = (detaches.get(tabId) || []).filter((at) => t - at < 10_000);
  recent.push(t);
  detaches.set(tabId, recent);
  return recent.length > 3;
}

// whyDetached finds out why Chrome detached a tab that was attached:
// whether it is still there, on what page, and whether it can be attached
// again (trying it is the one way to learn of another extension's frame,
// which Chrome detaches for as soon as the frame starts loading).
async function whyDetached(c, tabId) {
  const tab = await chrome.tabs.get(tabId).catch(() => null);
  if (tab === null) return { cause: "tab_closed" };
  if (!attachable(tabUrl(tab))) return { cause: "restricted_url" };
  const guard = settings.guardFrames;
  let cleared = guardCleared(c, tabId);
  if (!cleared && c.guarded.has(tabId)) {
    // The frame is in the page by now, its load under way: the guard looks
    // (and, with the person's consent, takes it out), where an attach could
    // still succeed for a moment.
    const seen = await guardFrame(tabId, undefined);
    if (seen.removed > 0 || Date.now() - seen.lastRemoved < 2000) cleared = true;
    else if (seen.foreign > 0) return { cause: "extension_frame", guard };
  }
  if (cleared) return { cause: "extension_frame", cleared: true, guard };
  const refusal = await tryAttach(tabId);
  if (refusal === "") return { cause: "unknown" };
  const cause = refusalCause(refusal);
  noteRefused(tabId, cause, tabUrl(tab));
  if (cause === "extension_frame" && guard && shared.has(tabId)) {
    // The frame came before the guard was in place (or slipped past it):
    // clear the tab now, and it can be attached again.
    await clearFrames(c, tabId);
    if ((await tryAttach(tabId)) === "") return { cause, cleared: true, guard };
  }
  return cause === "extension_frame" ? { cause, guard } : { cause };
}

// tryAttach attaches and detaches again, and returns Chrome's refusal, or
// "" when the tab can be attached. It never takes over a session: one the
// relay attached meanwhile is a refusal ("already attached").
function tryAttach(tabId) {
  return withTab(tabId, async () => {
    try {
      await chrome.debugger.attach({ tabId }, "1.3");
    } catch (e) {
      return errorText(e);
    }
    await chrome.debugger.detach({ tabId }).catch(noop);
    return "";
  });
}

// noteRefused records that a policy of the browser keeps the debugger out
// of a tab, for the connect page.
function noteRefused(tabId, cause, url) {
  if (!String(cause).startsWith("policy_")) return;
  const was = refused.get(tabId);
  refused.set(tabId, { cause, url });
  if (!was || was.cause !== cause) {
    console.warn("cdprelay: a policy of this browser keeps the debugger out of tab", tabId, cause);
    publish();
  }
}

// withTab runs fn after whatever attaches or detaches the tab already runs:
// a try must not detach the relay's own attach.
const tabChains = new Map();
function withTab(tabId, fn) {
  const run = (tabChains.get(tabId) || Promise.resolve()).then(fn);
  const chain = run.catch(noop);
  tabChains.set(tabId, chain);
  chain.then(() => {
    if (tabChains.get(tabId) === chain) tabChains.delete(tabId);
  });
  return run;
}

// withdraw takes back the offer of a shared tab Chrome refused to attach:
// the relay forgets it until it is offered again.
function withdraw(c, tabId, cause) {
  if (c === null || !c.offered.delete(tabId)) return;
  // The guard says when another extension's frame is gone.
  if (cause !== "extension_frame") unguard(c, tabId);
  chrome.tabs.get(tabId).then(
    (tab) => {
      enqueue(c, () =>
        send(c, "chrome.tabs.onRemoved", [
          tabId,
          { windowId: tab.windowId, isWindowClosing: false, withdrawn: true, cause },
        ]),
      );
      awaitAttachable(c, tabId, cause, false);
    },
    noop, // closed meanwhile: its onRemoved says so
  );
}

// awaitAttachable offers a shared tab again once Chrome would let it be
// attached. A navigation looks at once (watchNavigation); a tab whose page
// stays may lose the other extension's frame, so it is looked at again now
// and then. now: it can be attached already.
function awaitAttachable(c, tabId, cause, now) {
  const prev = c.away.get(tabId);
  if (prev) clearTimeout(prev.timer);
  const away = { cause, tries: 0, timer: 0 };
  c.away.set(tabId, away);
  if (now) {
    recheck(c, tabId);
    return;
  }
  if (cause === "restricted_url") return; // only a navigation brings it back
  schedule(c, tabId, away);
}

// awaitRelay waits for the relay to attach a tab the guard cleared; a tab
// it has not taken back after RESUME_WAIT_MS is offered again.
function awaitRelay(c, tabId, cause) {
  const prev = c.away.get(tabId);
  if (prev) clearTimeout(prev.timer);
  const away = { cause, tries: 0, timer: 0 };
  c.away.set(tabId, away);
  away.timer = setTimeout(() => recheck(c, tabId), RESUME_WAIT_MS);
}

function schedule(c, tabId, away) {
  away.timer = setTimeout(() => recheck(c, tabId), RECHECK_MS[Math.min(away.tries++, RECHECK_MS.length - 1)]);
}

async function recheck(c, tabId) {
  const away = c.away.get(tabId);
  if (conn !== c || !c.open || away === undefined || !shared.has(tabId)) return;
  clearTimeout(away.timer);
  const tab = await chrome.tabs.get(tabId).catch(() => null);
  if (tab === null) {
    c.away.delete(tabId);
    return;
  }
  if (c.away.get(tabId) !== away) return; // superseded meanwhile
  // Another extension's frame still there: the guard says when it goes.
  const framed = away.cause === "extension_frame" && foreignFrames(tabId) > 0;
  if (!framed && attachable(tabUrl(tab)) && (await tryAttach(tabId)) === "") {
    if (c.away.get(tabId) !== away) return;
    c.away.delete(tabId);
    if (refused.delete(tabId)) publish();
    announce(c, tab);
    return;
  }
  if (away.cause !== "restricted_url") schedule(c, tabId, away);
}

// ---- where shared tabs go --------------------------------------------------

// A shared tab that heads for a page that is never shared (a file, a browser
// or extension page) is let go at once, before the page commits where Chrome
// says so first: the relay is told it detached, and the tab is offered again
// when it is back on a web page.
// The relay may have let go of it first (it follows the tab's own events):
// then it is only taken back, to be offered again.
function letGo(c, tabId, cause) {
  if (c === null) return;
  const attached = c.attached.delete(tabId);
  const offered = c.offered.delete(tabId);
  if (!attached && !offered) return;
  if (attached) {
    chrome.debugger.detach({ tabId }).catch(noop);
    send(c, "chrome.debugger.onDetach", [{ tabId }, "target_closed", { cause }]);
  }
  unguard(c, tabId);
  awaitAttachable(c, tabId, cause, false);
}

function watchNavigation(d, committed) {
  const c = conn;
  if (c === null || !shared.has(d.tabId)) return;
  if (d.frameId !== 0) {
    if (committed && c.guarded.has(d.tabId)) guardFrame(d.tabId, d.frameId);
    return;
  }
  if (!attachable(d.url)) {
    letGo(c, d.tabId, "restricted_url");
    return;
  }
  if (!committed) return;
  if (c.guarded.has(d.tabId)) guardFrame(d.tabId, 0);
  if (c.away.has(d.tabId)) recheck(c, d.tabId);
  else if (!c.offered.has(d.tabId)) {
    // Back on a web page after it was let go.
    chrome.tabs.get(d.tabId).then((tab) => announce(conn === c ? c : null, tab), noop);
  }
}

chrome.webNavigation.onBeforeNavigate.addListener((d) => watchNavigation(d, false));
chrome.webNavigation.onCommitted.addListener((d) => watchNavigation(d, true));

// ---- the frame guard -------------------------------------------------------

// While the automation holds a tab, guard.js runs in each of its documents:
// it reports other extensions' frames, and removes them when the person
// allows it. It stops when the automation lets go, so that the person's own
// extensions work in every other tab, and in this one again afterwards.
const guardSeen = new Map(); // tab id to when the guard last removed a frame
const framesSeen = new Map(); // tab id to the guard's counts of other extensions' frames, by frame id

function foreignFrames(tabId) {
  let n = 0;
  for (const k of (framesSeen.get(tabId) || new Map()).values()) n += k;
  return n;
}

// The guard's count of other extensions' frames in one of a tab's
// documents: a tab Chrome detached for one comes back once none is left.
function framesCounted(tabId, frameId, n) {
  if (!framesSeen.has(tabId)) framesSeen.set(tabId, new Map());
  framesSeen.get(tabId).set(frameId, n);
  const c = conn;
  if (c === null) return;
  const away = c.away.get(tabId);
  if (away && away.cause === "extension_frame" && foreignFrames(tabId) === 0) recheck(c, tabId);
}

// guard starts the guard in a tab the relay attached: in its documents
// now, and in those to come.
async function guard(c, tabId) {
  if (c.guarded.has(tabId)) return;
  c.guarded.set(tabId, 0);
  await Promise.all([guardFrame(tabId, undefined), registerGuard(true)]);
}

// The guard as a content script of every new document while tabs are
// held: it asks whether its tab is one (guard-hello), in time for the other
// extensions' scripts.
let guardRegistered = false;
let guardRegistering = Promise.resolve();
function registerGuard(on) {
  if (on === guardRegistered) return guardRegistering;
  guardRegistered = on;
  const script = {
    id: "cdprelay-guard",
    js: ["guard.js"],
    matches: ["<all_urls>"],
    allFrames: true,
    runAt: "document_start",
    persistAcrossSessions: false,
  };
  guardRegistering = guardRegistering
    .then(() =>
      on
        ? chrome.scripting.registerContentScripts([script])
        : chrome.scripting.unregisterContentScripts({ ids: [script.id] }),
    )
    .catch((e) => console.warn("cdprelay: frame guard:", errorText(e)));
  return guardRegistering;
}

// clearFrames runs the guard in a tab Chrome detached for another
// extension's frame, so that it can be attached again; if the relay does not
// take it back in a while, the guard stops.
async function clearFrames(c, tabId) {
  if (!c.guarded.has(tabId)) c.guarded.set(tabId, 0);
  clearTimeout(c.guarded.get(tabId));
  c.guarded.set(
    tabId,
    setTimeout(() => {
      if (!c.attached.has(tabId)) unguard(c, tabId);
    }, GUARD_WAIT_MS),
  );
  await guardFrame(tabId, undefined);
}

// guardFrame runs the guard in one of a tab's documents (all of them,
// frameId undefined) and returns what they show: other extensions' frames
// there now, and removed by this look.
async function guardFrame(tabId, frameId) {
  const target = frameId === undefined ? { tabId, allFrames: true } : { tabId, frameIds: [frameId] };
  if (frameId === 0 || frameId === undefined) framesSeen.delete(tabId); // a new document counts anew
  const seen = { foreign: 0, removed: 0, lastRemoved: 0 };
  try {
    await chrome.scripting.executeScript({ target, files: ["guard.js"], injectImmediately: true });
    const counts = await chrome.scripting.executeScript({
      target,
      injectImmediately: true,
      args: [settings.guardFrames],
      func: (remove) => (globalThis.cdprelayGuard ? globalThis.cdprelayGuard.start(remove) : null),
    });
    for (const r of counts) {
      if (!r.result || !Number.isInteger(r.result.foreign)) continue;
      seen.foreign += r.result.foreign;
      seen.removed += r.result.removed;
      seen.lastRemoved = Math.max(seen.lastRemoved, r.result.lastRemoved || 0);
      framesCounted(tabId, r.frameId, r.result.foreign);
    }
  } catch (e) {
    console.warn("cdprelay: frame guard:", errorText(e));
  }
  return seen;
}

function unguard(c, tabId) {
  if (!c.guarded.has(tabId)) return;
  clearTimeout(c.guarded.get(tabId));
  c.guarded.delete(tabId);
  framesSeen.delete(tabId);
  if (c.guarded.size === 0) registerGuard(false);
  chrome.scripting
    .executeScript({
      target: { tabId, allFrames: true },
      injectImmediately: true,
      func: () => globalThis.cdprelayGuard && globalThis.cdprelayGuard.stop(),
    })
    .catch(noop);
}

// guardCleared reports whether the guard removed a frame from the tab just
// now: Chrome detached for it even so.
function guardCleared(c, tabId) {
  const at = guardSeen.get(tabId);
  return c.guarded.has(tabId) && at !== undefined && Date.now() - at < 2000;
}

// ---- tab events ------------------------------------------------------------

chrome.tabs.onCreated.addListener(async (tab) => {
  await ready;
  if (creating.size > 0) await Promise.all(creating);
  if (relayCreated.has(tab.id) || shared.has(tab.id)) return;
  if (tab.openerTabId !== undefined && shared.has(tab.openerTabId) && !attachable(tabUrl(tab))) {
    // A popup to a page that is never shared (another extension's, a
    // browser page): not shared, but the relay hears of it, so that an
    // automation waiting for its popup is told where it went.
    const c = conn;
    if (c !== null && c.open) enqueue(c, () => offer(c, [{ ...tab, cdprelayOffer: "restricted" }], true));
    if (settings.share === "pick") personTab(tab.id);
    return;
  }
  if (settings.share === "all") {
    if (attachable(tabUrl(tab))) addShared(tab);
    return;
  }
  if (tab.openerTabId !== undefined && shared.has(tab.openerTabId)) offerCandidate(tab);
  else personTab(tab.id);
});

// Popups opened by a shared tab do not always carry openerTabId (noopener,
// window.open with features), but they do show up here.
chrome.webNavigation.onCreatedNavigationTarget.addListener(async (d) => {
  await ready;
  if (settings.share !== "pick" || shared.has(d.tabId) || candidates.has(d.tabId) || !shared.has(d.sourceTabId)) return;
  const tab = await chrome.tabs.get(d.tabId).catch(() => null);
  if (tab !== null && !shared.has(tab.id)) {
    personTabs.delete(tab.id);
    if (tab.openerTabId === undefined) tab.openerTabId = d.sourceTabId;
    offerCandidate(tab);
  }
});

// A tab opened from a shared tab, in "pick" mode: the person may have
// opened it themselves (a middle click, "open in new tab"), so it is
// shared only if the relay says the automation opened it. Offered marked.
function offerCandidate(tab) {
  const c = conn;
  if (c === null || !c.open || candidates.has(tab.id)) return;
  candidates.add(tab.id);
  c.offered.add(tab.id);
  enqueue(c, () => offer(c, [{ ...tab, cdprelayOffer: "popup" }]));
}

chrome.tabs.onUpdated.addListener(async (tabId, info, tab) => {
  if (info.url === undefined && info.title === undefined && info.status === undefined) return;
  await ready;
  if (creating.size > 0) await Promise.all(creating); // same race as in onCreated
  if (settings.share === "all" && info.url !== undefined && !declined.has(tabId)) {
    if (attachable(info.url)) {
      leftForPage.delete(tabId);
      if (!shared.has(tabId)) {
        shared.add(tabId);
        publish();
      }
    } else if (shared.has(tabId)) {
      leftForPage.add(tabId);
      await forget(tabId);
      publish();
      return;
    }
  }
  const c = conn;
  if (c === null || !c.open || !shared.has(tabId)) return;
  if (info.url !== undefined && !attachable(info.url)) {
    letGo(c, tabId, "restricted_url");
    return;
  }
  if (c.offered.has(tabId)) enqueue(c, () => send(c, "chrome.tabs.onUpdated", [tabId, info, tab]));
  else announce(c, tab);
});

// A discarded tab comes back under a new id (Chrome's memory saver, or
// chrome.tabs.discard): the new id is shared if the old one was, and the
// relay hears that the old one is gone and the new one is offered.
chrome.tabs.onReplaced.addListener(async (added, removed) => {
  await ready;
  const wasShared = shared.delete(removed);
  if (wasShared) shared.add(added);
  for (const set of [relayCreated, candidates, personTabs, declined]) {
    if (set.delete(removed)) set.add(added);
  }
  if (settings.picked.includes(removed)) {
    removePicked(removed);
    addPicked(added);
  }
  const c = conn;
  if (c !== null && c.open) {
    const attached = c.attached.delete(removed);
    const known = c.offered.delete(removed) || attached || c.away.has(removed);
    const away = c.away.get(removed);
    if (away) clearTimeout(away.timer);
    c.away.delete(removed);
    unguard(c, removed);
    const tab = await chrome.tabs.get(added).catch(() => null);
    enqueue(c, () => {
      if (attached)
        send(c, "chrome.debugger.onDetach", [
          { tabId: removed },
          "target_closed",
          { cause: "discarded", replacedBy: added },
        ]);
      const info = { windowId: tab ? tab.windowId : -1, isWindowClosing: false, replacedBy: added };
      if (known) send(c, "chrome.tabs.onRemoved", [removed, info]);
    });
    if (tab !== null && shared.has(added)) announce(c, tab);
  }
  if (wasShared) publish();
});

chrome.tabs.onRemoved.addListener(async (tabId, info) => {
  await ready;
  relayCreated.delete(tabId);
  candidates.delete(tabId);
  personTabs.delete(tabId);
  blockedFirst.delete(tabId);
  declined.delete(tabId);
  removePicked(tabId);
  const wasRefused = refused.delete(tabId);
  const wasShared = shared.delete(tabId);
  const wasLeft = leftForPage.delete(tabId);
  const c = conn;
  // c.attached is left to chrome.debugger.onDetach, which still has to be forwarded.
  if (c !== null && (c.offered.delete(tabId) || wasShared || wasLeft) && c.open) {
    enqueue(c, () => send(c, "chrome.tabs.onRemoved", [tabId, info]));
  }
  if (wasShared || wasRefused) publish();
});

// ---- sharing ---------------------------------------------------------------

function addPicked(tabId) {
  if (settings.picked.includes(tabId)) return;
  settings.picked.push(tabId);
  chrome.storage.local.set({ picked: settings.picked }).catch(noop);
}

function removePicked(tabId) {
  const i = settings.picked.indexOf(tabId);
  if (i < 0) return;
  settings.picked.splice(i, 1);
  chrome.storage.local.set({ picked: settings.picked }).catch(noop);
}

function saveDeclined() {
  chrome.storage.session.set({ declined: [...declined] }).catch(noop);
}

function addShared(tab) {
  shared.add(tab.id);
  personTabs.delete(tab.id);
  if (settings.share === "pick") addPicked(tab.id);
  publish();
  announce(conn, tab);
  if (fence.rules !== null) applyFence();
}

// Stops offering a tab: detach if the relay had it, then tell the relay it is
// gone (a tab that stays open but is no longer shared is marked unshared).
async function forget(tabId) {
  shared.delete(tabId);
  if (fence.rules !== null) applyFence();
  const c = conn;
  if (c === null) return;
  if (c.attached.delete(tabId)) await chrome.debugger.detach({ tabId }).catch(noop);
  if (!c.offered.delete(tabId)) return;
  const tab = await chrome.tabs.get(tabId).catch(() => null);
  const info = { windowId: tab ? tab.windowId : -1, isWindowClosing: false, unshared: true };
  enqueue(c, () => send(c, "chrome.tabs.onRemoved", [tabId, info]));
}

// The person takes a tab back.
async function unshare(tabId) {
  removePicked(tabId);
  if (settings.share === "all") {
    declined.add(tabId);
    saveDeclined();
  }
  await forget(tabId);
  publish();
}

function sharedFrom(tabs) {
  const next = new Set();
  if (settings.share === "all") {
    for (const t of tabs) if (!declined.has(t.id) && attachable(tabUrl(t))) next.add(t.id);
    return next;
  }
  // Tab ids only live as long as the browser session: drop the stale ones.
  const open = new Set(tabs.map((t) => t.id));
  const picked = settings.picked.filter((id) => open.has(id));
  if (picked.length !== settings.picked.length) {
    settings.picked = picked;
    chrome.storage.local.set({ picked }).catch(noop);
  }
  for (const id of picked) next.add(id);
  return next;
}

async function setShareMode(mode) {
  if (mode === settings.share) return;
  settings.share = mode;
  await chrome.storage.local.set({ share: mode });
  const tabs = await chrome.tabs.query({});
  const next = sharedFrom(tabs);
  for (const id of [...shared]) if (!next.has(id)) await forget(id);
  for (const t of tabs) {
    if (next.has(t.id) && !shared.has(t.id)) {
      shared.add(t.id);
      announce(conn, t);
    }
  }
  publish();
}

// ---- status and the connect page -------------------------------------------

function snapshot() {
  return {
    state: status.state,
    error: status.error,
    relay: settings.relay,
    share: settings.share,
    enabled: settings.enabled,
    guardFrames: settings.guardFrames,
    shared: [...shared],
    // What waits to go to the relay now, in bytes, and the screencast
    // frames dropped because too much did (SEND_BACKLOG_BYTES).
    backlog: conn !== null && conn.open ? backlog(conn) : 0,
    droppedFrames,
    // Tabs a policy of the browser keeps the debugger out of.
    refused: [...refused].map(([tabId, r]) => ({ tabId, cause: r.cause, url: r.url })),
    // The person lets the automation's downloads be copied.
    downloads: downloadsAllowed,
  };
}

// publishSoon publishes the status within a second, once for any number of
// calls: the dropped-frame count changes up to 60 times a second.
let publishTimer = 0;
function publishSoon() {
  if (publishTimer !== 0) return;
  publishTimer = setTimeout(() => {
    publishTimer = 0;
    publish();
  }, 1000);
}

function publish(state = status.state, error = status.error) {
  status.state = state;
  status.error = error;
  const s = snapshot();
  chrome.storage.session.set({ status: s }).catch(noop);
  chrome.runtime.sendMessage({ type: "status", status: s }).catch(noop); // no page open: nobody listens
}

const PAGE_REQUESTS = {
  status: async () => snapshot(),

  async connect({ relay, share }) {
    const problem = relayUrlProblem(relay);
    if (problem) return { ok: false, error: problem, status: snapshot() };
    const changed = relay !== settings.relay;
    settings.relay = relay;
    settings.enabled = true;
    await chrome.storage.local.set({ relay, enabled: true });
    if (share === "all" || share === "pick") await setShareMode(share);
    if (changed || conn === null) {
      closeConn();
      attempt = 0;
      connect();
    }
    return { ok: true, status: snapshot() };
  },

  async disconnect() {
    settings.enabled = false;
    await chrome.storage.local.set({ enabled: false });
    closeConn();
    publish("disconnected", "");
    return { ok: true, status: snapshot() };
  },

  // The radio on the page: takes effect at once, connected or not.
  async mode({ share }) {
    if (share === "all" || share === "pick") await setShareMode(share);
    return { ok: true, status: snapshot() };
  },

  // The person's consent to the frame guard (guard.js).
  async guardFrames({ on }) {
    settings.guardFrames = on === true;
    await chrome.storage.local.set({ guardFrames: settings.guardFrames });
    const c = conn;
    if (c !== null) {
      // The guards in place learn the person's word.
      for (const tabId of c.guarded.keys()) guardFrame(tabId, undefined);
    }
    return { ok: true, status: snapshot() };
  },

  async share({ tabId, on }) {
    if (on) {
      const tab = await chrome.tabs.get(tabId);
      if (!attachable(tabUrl(tab))) throw new Error("Browser, extension and Web Store pages cannot be shared.");
      if (declined.delete(tabId)) saveDeclined();
      if (!shared.has(tabId)) addShared(tab);
    } else {
      await unshare(tabId);
    }
    return { ok: true, status: snapshot() };
  },
};

const ownPages = chrome.runtime.getURL("");

chrome.runtime.onMessage.addListener((msg, sender, sendResponse) => {
  if (sender.id !== chrome.runtime.id || msg === null || typeof msg !== "object") return false;
  if (sender.tab !== undefined && msg.type === "guard-hello") {
    // A new document of some tab: the guard starts where a tab is held.
    const c = conn;
    const held = c !== null && c.guarded.has(sender.tab.id);
    if (held && (sender.frameId === 0 || sender.frameId === undefined)) framesSeen.delete(sender.tab.id);
    sendResponse({ start: held, remove: settings.guardFrames });
    return false;
  }
  if (sender.tab !== undefined && (msg.type === "guard" || msg.type === "frames")) {
    // The frame guard removed a frame, or counted other extensions' ones
    // (guard.js).
    if (msg.type === "guard") guardSeen.set(sender.tab.id, Date.now());
    else if (Number.isInteger(msg.foreign)) framesCounted(sender.tab.id, sender.frameId, msg.foreign);
    return false;
  }
  // Requests only from our own pages: the guard runs in web pages.
  if (typeof sender.url !== "string" || !sender.url.startsWith(ownPages)) return false;
  if (!Object.hasOwn(PAGE_REQUESTS, msg.type)) return false;
  const handle = PAGE_REQUESTS[msg.type];
  ready
    .then(() => handle(msg))
    .then(sendResponse, (e) => sendResponse({ ok: false, error: errorText(e), status: snapshot() }));
  return true;
});

// ---- start -----------------------------------------------------------------

// The relay's own dedicated browser ships a config.json next to the
// extension; it wins over whatever was stored, on every start.
async function packagedConfig() {
  try {
    const r = await fetch(chrome.runtime.getURL("config.json"));
    if (!r.ok) return null;
    const cfg = await r.json();
    return cfg && typeof cfg.relay === "string" ? cfg : null;
  } catch {
    return null;
  }
}

async function loadSettings() {
  const s = await chrome.storage.local.get(["relay", "share", "picked", "enabled", "guardFrames"]);
  if (typeof s.relay === "string") settings.relay = s.relay;
  if (s.share === "all" || s.share === "pick") settings.share = s.share;
  if (Array.isArray(s.picked)) settings.picked = s.picked.filter(Number.isInteger);
  settings.enabled = s.enabled === true;
  settings.guardFrames = s.guardFrames === true;
  const cfg = await packagedConfig();
  if (cfg !== null) {
    settings.relay = cfg.relay;
    settings.share = cfg.share === "all" ? "all" : "pick";
    settings.enabled = true;
    await chrome.storage.local.set({ relay: settings.relay, share: settings.share, enabled: true });
  }
  const { declined: d } = await chrome.storage.session.get("declined");
  if (Array.isArray(d)) for (const id of d) declined.add(id);
}

// A worker that was stopped while attached may have left debugger sessions;
// no relay knows about them any more.
async function detachStale() {
  const targets = await chrome.debugger.getTargets();
  await Promise.all(
    targets
      .filter((t) => t.attached && t.tabId !== undefined)
      .map((t) => chrome.debugger.detach({ tabId: t.tabId }).catch(noop)),
  );
}

async function init() {
  try {
    // Session rules outlive a stopped worker; none of them is in force
    // until a relay says so again.
    const stale = await chrome.declarativeNetRequest.getSessionRules();
    await chrome.declarativeNetRequest.updateSessionRules({ removeRuleIds: stale.map((r) => r.id) });
    await loadSettings();
    await checkDownloads();
    for (const id of sharedFrom(await chrome.tabs.query({}))) shared.add(id);
    await detachStale();
  } catch (e) {
    console.warn("cdprelay: start:", errorText(e));
  }
  publish("disconnected", "");
  connect();
}

const ready = init();

// Timers die with the worker; an alarm brings it back to reconnect.
chrome.alarms.get("reconnect").then((a) => a || chrome.alarms.create("reconnect", { periodInMinutes: 0.5 }));
chrome.alarms.onAlarm.addListener(async (alarm) => {
  if (alarm.name !== "reconnect") return;
  await ready;
  connect();
});
chrome.runtime.onStartup.addListener(() => ready.then(connect));
chrome.runtime.onInstalled.addListener(() => ready.then(connect));
