// The connect page, used as the toolbar popup, as the options page and as
// the page a relay link opens (connect.html?relay=ws://...&share=pick&auto=1&close=1).
// A link's auto=1 connects without a click only to a relay on this machine
// in "pick" mode (autoConnectProblem); anything more waits for the person.

import { attachable, loopbackRelay, policyWords, relayUrlProblem, tabUrl } from "./common.js";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const ownPrefix = chrome.runtime.getURL("");

let status = {
  state: "disconnected",
  error: "",
  relay: "",
  share: "pick",
  enabled: false,
  guardFrames: false,
  shared: [],
};
// A share mode asked for by the link shows until the person connects or picks one.
let wantedShare = ["all", "pick"].includes(params.get("share")) ? params.get("share") : "";
let closeWhenConnected = false;

function request(msg) {
  return chrome.runtime.sendMessage(msg).then((r) => {
    if (r && r.status) showStatus(r.status);
    if (r && r.ok === false) throw new Error(r.error);
    return r;
  });
}

function shareMode() {
  return document.querySelector('input[name="share"]:checked')?.value || "pick";
}

function setShareMode(mode) {
  for (const radio of document.querySelectorAll('input[name="share"]')) radio.checked = radio.value === mode;
}

function showProblem(text) {
  $("problem").textContent = text;
  $("problem").hidden = !text;
}

function showStatus(s) {
  status = s;
  const state = $("state");
  const n = s.shared.length;
  const tabs = `${n} tab${n === 1 ? "" : "s"} shared`;
  let label = "Not connected";
  let kind = "off";
  let detail = "Enter the relay URL cdprelay printed, then Connect.";
  if (s.state === "connected") {
    label = "Connected";
    kind = "ok";
    detail = `${masked(s.relay)} · ${tabs}`;
  } else if (s.state === "connecting") {
    label = "Connecting…";
    kind = "wait";
    detail = s.error ? `${masked(s.relay)} · last attempt: ${s.error}` : masked(s.relay);
  } else if (s.enabled) {
    label = "Disconnected";
    kind = "bad";
    detail = `${s.error || "not connected"} · retrying ${masked(s.relay)}`;
  } else if (s.error) {
    kind = "bad";
    detail = s.error;
  }
  state.textContent = label;
  state.dataset.kind = kind;
  if (s.droppedFrames > 0) {
    const f = s.droppedFrames;
    detail += ` · ${f} screencast frame${f === 1 ? "" : "s"} dropped while the relay connection was backed up`;
  }
  $("detail").textContent = detail;
  $("disconnect").disabled = !s.enabled;
  if (!$("relay").value && s.relay) $("relay").value = s.relay;
  setShareMode(wantedShare || s.share);
  $("guard").checked = s.guardFrames === true;
  $("downloads").checked = s.downloads === true;
  // A browser the relay launched has the permission outright.
  $("downloads").disabled = (chrome.runtime.getManifest().permissions || []).includes("downloads");
  showRefused(s.refused || []);
  $("hint").textContent =
    s.share === "all"
      ? "Every tab with a web page is shared, including new ones. Untick a tab to keep it private."
      : "Tick the tabs the relay may control. Popups the automation opens from them are shared too; tabs you open from them are not.";
  renderTabs();
  if (closeWhenConnected && s.state === "connected") closeSelf();
}

// showRefused says which tabs a policy of this browser keeps the automation
// out of, and where the person sees the policy.
function showRefused(refused) {
  const box = $("refused");
  const byCause = new Map();
  for (const r of refused) {
    if (!byCause.has(r.cause)) byCause.set(r.cause, { tabs: 0, hosts: new Set() });
    const c = byCause.get(r.cause);
    c.tabs++;
    c.hosts.add(hostOf(r.url));
  }
  box.replaceChildren(
    ...[...byCause].map(([cause, { tabs: n, hosts }]) => {
      const p = document.createElement("p");
      const head = document.createElement("strong");
      head.textContent = `Chrome refuses to let cdprelay debug ${n} tab${n === 1 ? "" : "s"} (${[...hosts].join(", ")}). `;
      p.append(head, policyWords(cause));
      return p;
    }),
  );
  box.hidden = refused.length === 0;
}

async function closeSelf() {
  closeWhenConnected = false;
  const tab = await chrome.tabs.getCurrent();
  if (tab) chrome.tabs.remove(tab.id);
  else window.close();
}

let renderQueued = false;
function renderTabs() {
  if (renderQueued) return;
  renderQueued = true;
  // Tab events come in bursts (a page load is several updates): draw once.
  setTimeout(async () => {
    renderQueued = false;
    const tabs = (await chrome.tabs.query({})).filter((t) => !(t.url || "").startsWith(ownPrefix));
    const shared = new Set(status.shared);
    const list = $("tabs");
    list.replaceChildren(...tabs.map((t) => tabRow(t, shared.has(t.id))));
    $("count").textContent = `${shared.size} of ${tabs.length} shared`;
  }, 50);
}

function tabRow(tab, isShared) {
  const li = document.createElement("li");
  li.className = isShared ? "shared" : "";
  const url = tabUrl(tab);
  const canShare = attachable(url);

  const box = document.createElement("input");
  box.type = "checkbox";
  box.checked = isShared;
  box.disabled = !canShare && !isShared;
  box.title = canShare ? "Share this tab with the relay" : "Browser and extension pages cannot be shared";
  box.addEventListener("change", () => {
    request({ type: "share", tabId: tab.id, on: box.checked }).catch((e) => {
      box.checked = !box.checked;
      showProblem(e.message);
    });
  });

  const icon = document.createElement("img");
  icon.className = "favicon";
  icon.alt = "";
  if (tab.favIconUrl && /^(https?|data):/.test(tab.favIconUrl)) icon.src = tab.favIconUrl;
  else icon.classList.add("blank");

  const text = document.createElement("div");
  text.className = "text";
  const title = document.createElement("div");
  title.className = "title";
  title.textContent = tab.title || url;
  const link = document.createElement("div");
  link.className = "url";
  link.textContent = url;
  text.append(title, link);

  const label = document.createElement("label");
  label.append(box, icon, text);
  li.append(label);
  if (isShared) {
    const mark = document.createElement("span");
    mark.className = "mark";
    mark.textContent = "shared";
    li.append(mark);
  }
  return li;
}

// autoConnectProblem says why a link's auto=1 must not connect without the
// person's click, or "" when it may: a link can be opened by anything that
// opens a tab, and only the person may decide to share every tab (and every
// tab opened later), or to hand tabs to a relay on another machine. A link
// that changes nothing (the relay and mode already in use) may go ahead.
function autoConnectProblem(relay, share) {
  if (status.enabled && status.relay === relay && status.share === share) return "";
  const asks = [];
  if (share === "all") asks.push("to share every tab, including the ones you open later");
  if (!loopbackRelay(relay)) asks.push(`to connect to a relay on another machine (${hostOf(relay)})`);
  if (asks.length === 0) return "";
  return `This link asks ${asks.join(" and ")}. Check the relay URL and what to share, then click Connect.`;
}

function hostOf(url) {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

function showConfirm(text) {
  $("confirm").textContent = text;
  $("confirm").hidden = !text;
}

async function connectNow() {
  const relay = $("relay").value.trim();
  const problem = relayUrlProblem(relay);
  showProblem(problem);
  showConfirm("");
  if (problem) return;
  const share = shareMode();
  wantedShare = "";
  try {
    await request({ type: "connect", relay, share });
  } catch (e) {
    showProblem(e.message);
    return;
  }
  closeWhenConnected = params.get("close") === "1";
  if (closeWhenConnected && status.state === "connected") closeSelf();
}

$("form").addEventListener("submit", (e) => {
  e.preventDefault();
  connectNow();
});
$("relay").addEventListener("input", () => showProblem(""));
$("disconnect").addEventListener("click", () => request({ type: "disconnect" }).catch((e) => showProblem(e.message)));
$("guard").addEventListener("change", () =>
  request({ type: "guardFrames", on: $("guard").checked }).catch((e) => showProblem(e.message)),
);
// The downloads permission is asked for here, in the person's click: Chrome
// shows its own prompt.
$("downloads").addEventListener("change", async () => {
  const box = $("downloads");
  const want = box.checked;
  try {
    const ok = want
      ? await chrome.permissions.request({ permissions: ["downloads"] })
      : await chrome.permissions.remove({ permissions: ["downloads"] });
    if (!ok) box.checked = !want;
  } catch (e) {
    box.checked = !want;
    showProblem(e.message);
  }
});
for (const radio of document.querySelectorAll('input[name="share"]')) {
  radio.addEventListener("change", () => {
    wantedShare = "";
    request({ type: "mode", share: radio.value }).catch((e) => showProblem(e.message));
  });
}

// The worker's status broadcasts. Another open connect page's request for
// the status ({type: "status"}, no status) comes here too: it is the
// worker's to answer, and a throw here would answer it with an error.
chrome.runtime.onMessage.addListener((msg) => {
  if (msg && msg.type === "status" && msg.status && typeof msg.status === "object") showStatus(msg.status);
});
chrome.tabs.onCreated.addListener(renderTabs);
chrome.tabs.onRemoved.addListener(renderTabs);
chrome.tabs.onUpdated.addListener((id, info) => {
  if (info.url !== undefined || info.title !== undefined || info.favIconUrl !== undefined) renderTabs();
});

async function start() {
  // The popup has no tab of its own; it gets the narrow layout.
  if (!(await chrome.tabs.getCurrent())) document.documentElement.classList.add("popup");

  // "mcpRelayUrl" is the name used by links made for the stock Playwright extension.
  const relay = params.get("relay") || params.get("mcpRelayUrl") || "";
  if (relay) $("relay").value = relay;
  try {
    const name = JSON.parse(params.get("client") || "null")?.name;
    if (name) {
      $("client").textContent = `Requested by ${name}`;
      $("client").hidden = false;
    }
  } catch {
    // An unreadable client description only loses the label.
  }

  showStatus(await chrome.runtime.sendMessage({ type: "status" }));
  if (relay) showProblem(relayUrlProblem(relay));
  if (params.get("auto") !== "1" || !relay || relayUrlProblem(relay)) return;
  const ask = autoConnectProblem(relay, shareMode());
  if (ask === "") {
    await connectNow();
    return;
  }
  // The person's click on Connect decides.
  showConfirm(ask);
  $("connect").focus();
}

start();

// masked hides a token in a relay URL: the status line is for reading
// over a shoulder, the token is a credential.
function masked(url) {
  try {
    const u = new URL(url);
    if (u.searchParams.has("token")) u.searchParams.set("token", "hidden");
    return u.toString();
  } catch {
    return url;
  }
}
