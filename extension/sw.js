// The service worker: holds the one WebSocket to the relay, answers its
// commands with chrome.debugger / chrome.tabs calls, and forwards the events
// of the tabs the person shares. The wire format is "protocol v2": commands
// {id, method, params[]}, replies {id, result|error}, events {method, params[]}.

import { attachable, relayUrlProblem, tabUrl } from "./common.js";

const KEEPALIVE_MS = 20_000; // the worker is stopped after 30 s without traffic
const BACKOFF_MS = [500, 1000, 2000, 4000, 5000];
const REOFFER_MS = 150;
const KEEPALIVE = '{"method":"extension.keepalive","params":[]}';
const INITIALIZED = '{"method":"extension.initialized","params":[]}';
// Batch frames (feature "batches"): once the relay accepts them, what is to
// be sent waits while a command that came in the last BATCH_HOLD_MS is being
// answered, for at most BATCH_HOLD_MS, and goes in one frame of at most
// BATCH_MAX_CHARS; a larger message goes alone.
const BATCH_HOLD_MS = 2;
const BATCH_MAX_CHARS = 1 << 20;
const noop = () => {};

const settings = { relay: "", share: "pick", picked: [], enabled: false };

// Tabs the relay may see and attach. In "pick" mode these are the picked tabs;
// in "all" mode every tab on an attachable URL that the person did not decline.
const shared = new Set();
// "all" mode only: tabs the person took back (unticked, or cancelled the debugger bar).
const declined = new Set();
// Tabs opened by the relay's chrome.tabs.create; the relay announces those itself.
const relayCreated = new Set();
// chrome.tabs.onCreated can fire before chrome.tabs.create resolves, so its
// listener waits for these before deciding whether a tab is the relay's.
const creating = new Set();
// "pick" mode: tabs opened from a shared tab, offered to the relay, which
// says whether the automation opened them (extension.sharePopup). Until it
// has, they are not shared.
const candidates = new Set();

// The current connection: {ws, open, attached, offered, chain, keepalive,
// batch, busy, outbox, outChars, flushTimer}. attached: tabs the relay
// attached over it; offered: tabs it was told about; batch: the relay
// accepts batch frames; busy: when each command being answered came
// (id → performance.now()); outbox: messages for the next batch frame.
let conn = null;
let attempt = 0;
let retryTimer = 0;
const status = { state: "disconnected", error: "" };

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
  const product = (userAgent.includes("HeadlessChrome") ? "HeadlessChrome/" : "Chrome/") + version;
  return {
    userAgent,
    product,
    version,
    extensionVersion: chrome.runtime.getManifest().version,
    // What this extension can do beyond protocol v2 (docs/EXTENSION-PROTOCOL.md).
    features: ["navigation-fence", "popup-consent", "batches"],
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
  c.attached.clear();
  c.offered.clear();
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

async function offer(c, tabs) {
  if (tabs.length === 0) return;
  const ids = await targetIds();
  for (const tab of tabs) {
    if (!c.offered.has(tab.id)) continue; // withdrawn meanwhile
    const targetId = ids.get(tab.id);
    if (targetId) tab.targetId = targetId;
    send(c, "chrome.tabs.onCreated", [tab]);
  }
}

function announce(c, tab) {
  if (c === null || !c.open || c.offered.has(tab.id) || !attachable(tabUrl(tab))) return;
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
    if (!attachable(tabUrl(now))) throw new Error(`Tab ${tabId} shows a page that is never shared.`);
    const debuggee = { tabId };
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
    if (conn !== c || !c.open) {
      chrome.debugger.detach(debuggee).catch(noop);
      throw new Error("connection closed");
    }
    c.attached.add(tabId);
    // It may have moved on while attaching.
    const after = await chrome.tabs.get(tabId).catch(() => null);
    if (after === null || !attachable(tabUrl(after))) {
      letGo(c, tabId, "restricted_url");
      throw new Error(`Tab ${tabId} shows a page that is never shared.`);
    }
    return {};
  },

  async "chrome.debugger.detach"(c, [target]) {
    c.attached.delete(target.tabId);
    await chrome.debugger.detach({ tabId: target.tabId });
    return {};
  },

  async "chrome.tabs.create"(c, [props]) {
    // Without a URL Chrome opens its new-tab page, which cannot be attached.
    const pending = chrome.tabs.create({ ...props, url: (props && props.url) || "about:blank" });
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

  // The relay's fence as declarativeNetRequest rules (null: none), for the
  // shared tabs and every tab not known to be the person's.
  async "extension.setNavigationFence"(c, [rules]) {
    await setFence(Array.isArray(rules) ? rules : null);
    return {};
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
  if (c !== null && c.attached.has(source.tabId)) {
    out(c, JSON.stringify({ method: "chrome.debugger.onEvent", params: [source, method, params] }));
  }
});

chrome.debugger.onDetach.addListener((source, reason) => {
  const c = conn;
  const tabId = source.tabId;
  if (c === null || !c.attached.delete(tabId)) return;
  send(c, "chrome.debugger.onDetach", [{ tabId }, reason]);
  if (reason === "canceled_by_user") {
    unshare(tabId).catch(noop);
    return;
  }
  c.offered.delete(tabId);
  if (reason !== "target_closed") return;
  // A sub-frame navigating to an unknown scheme detaches the whole tab with
  // target_closed while the tab stays open: offer it again once that settles.
  setTimeout(async () => {
    const tab = await chrome.tabs.get(tabId).catch(() => null);
    if (tab !== null && shared.has(tabId)) announce(conn === c ? c : null, tab);
  }, REOFFER_MS);
});

// ---- where shared tabs go --------------------------------------------------

// A shared tab that heads for a page that is never shared (a file, a browser
// or extension page) is let go at once, before the page commits where Chrome
// says so first: the relay is told it detached, and the tab is offered again
// when it is back on a web page.
function letGo(c, tabId, reason) {
  if (c === null || !c.attached.delete(tabId)) return;
  chrome.debugger.detach({ tabId }).catch(noop);
  c.offered.delete(tabId);
  send(c, "chrome.debugger.onDetach", [{ tabId }, reason]);
}

function watchNavigation(d) {
  if (d.frameId !== 0) return;
  const c = conn;
  if (c === null || !shared.has(d.tabId)) return;
  if (!attachable(d.url)) {
    letGo(c, d.tabId, "restricted_url");
    return;
  }
  if (!c.offered.has(d.tabId)) {
    // Back on a web page after it was let go, or after Chrome detached it.
    chrome.tabs.get(d.tabId).then((tab) => announce(conn === c ? c : null, tab), noop);
  }
}

chrome.webNavigation.onBeforeNavigate.addListener(watchNavigation);
chrome.webNavigation.onCommitted.addListener(watchNavigation);

// ---- tab events ------------------------------------------------------------

chrome.tabs.onCreated.addListener(async (tab) => {
  await ready;
  if (creating.size > 0) await Promise.all(creating);
  if (relayCreated.has(tab.id) || shared.has(tab.id)) return;
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
      if (!shared.has(tabId)) {
        shared.add(tabId);
        publish();
      }
    } else if (shared.has(tabId)) {
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

chrome.tabs.onRemoved.addListener(async (tabId, info) => {
  await ready;
  relayCreated.delete(tabId);
  candidates.delete(tabId);
  personTabs.delete(tabId);
  blockedFirst.delete(tabId);
  declined.delete(tabId);
  removePicked(tabId);
  const wasShared = shared.delete(tabId);
  const c = conn;
  // c.attached is left to chrome.debugger.onDetach, which still has to be forwarded.
  if (c !== null && (c.offered.delete(tabId) || wasShared) && c.open) {
    enqueue(c, () => send(c, "chrome.tabs.onRemoved", [tabId, info]));
  }
  if (wasShared) publish();
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
    shared: [...shared],
  };
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

chrome.runtime.onMessage.addListener((msg, sender, sendResponse) => {
  if (sender.id !== chrome.runtime.id || msg === null || typeof msg !== "object") return false;
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
  const s = await chrome.storage.local.get(["relay", "share", "picked", "enabled"]);
  if (typeof s.relay === "string") settings.relay = s.relay;
  if (s.share === "all" || s.share === "pick") settings.share = s.share;
  if (Array.isArray(s.picked)) settings.picked = s.picked.filter(Number.isInteger);
  settings.enabled = s.enabled === true;
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
