// cdprelay live view. Speaks the viewer protocol (viewer/PROTOCOL.md) over
// the WebSocket at /viewer of this page's own origin.

// The person's link (/#person=<key>, printed by cdprelay serve) carries the
// person key in its fragment, which no browser sends anywhere. It is taken
// out of the address bar before anything else runs, and kept in this
// origin's storage: unlike a cookie, storage is not shared with the other
// ports of this host, where the agent may run a server of its own. The key
// is offered on the viewer socket as a subprotocol, never in a URL.
const PERSON_PROTOCOL = "cdprelay-person.";
const VIEWER_PROTOCOL = "cdprelay-viewer";
// Relays behind one front door share an origin under their own paths.
const keySlot = `cdprelay.person:${location.pathname.replace(/[^/]*$/, "")}`;
const personStore = (() => {
  let mem = null;
  try {
    localStorage.getItem(keySlot);
  } catch {
    // Storage is off: the key lasts as long as the page.
    return { get: () => mem, set: (k) => (mem = k), drop: () => (mem = null) };
  }
  return {
    get: () => localStorage.getItem(keySlot),
    set: (k) => localStorage.setItem(keySlot, k),
    drop: () => localStorage.removeItem(keySlot),
  };
})();
{
  const fragment = new URLSearchParams(location.hash.slice(1));
  const key = fragment.get("person");
  if (key !== null) {
    history.replaceState(null, "", location.pathname + location.search);
    if (/^[A-Za-z0-9_-]{1,512}$/.test(key)) personStore.set(key);
  }
}

const $ = (id) => document.getElementById(id);
const el = {
  conn: $("conn"),
  connText: $("conn-text"),
  mode: $("mode"),
  instances: $("instances"),
  activity: $("activity"),
  title: $("tab-title"),
  url: $("tab-url"),
  status: $("status"),
  take: $("take"),
  handback: $("handback"),
  nav: $("nav"),
  navURL: $("nav-url"),
  navGo: $("nav-go"),
  viewport: $("viewport"),
  front: $("front"),
  reload: $("reload"),
  stats: $("stats"),
  box: $("screen-box"),
  canvas: $("screen"),
  placeholder: $("placeholder"),
  banner: $("banner"),
  stoppedBanner: $("stopped-banner"),
  approvalsPanel: $("approvals-panel"),
  approvals: $("approvals"),
  dialog: $("dialog"),
  dialogKind: $("dialog-kind"),
  dialogMessage: $("dialog-message"),
  dialogPrompt: $("dialog-prompt"),
  dialogAccept: $("dialog-accept"),
  dialogDismiss: $("dialog-dismiss"),
  dialogNote: $("dialog-note"),
  viewOnly: $("viewonly"),
  viewOnlyText: $("viewonly-text"),
};
const ctx2d = el.canvas.getContext("2d");

const state = {
  ws: null,
  me: "", // this viewer's name, as holders are named
  interactive: false,
  instances: [],
  sel: null, // {instance, tab} watched
  status: "idle", // the watched tab's screencast status
  holder: "", // who controls the watched tab ('' = automation)
  pendingMeta: null, // the frame message whose JPEG comes next
  frames: 0,
  lastSeq: 0,
  frameTimes: [],
  lastBytes: 0,
  decoding: false, // a JPEG is being decoded; newer ones wait (latest wins)
  queued: null, // {meta, buf} waiting for the decoder
  retry: 500,
  nextID: 1,
};

const MAX_ACTIVITY = 60;

// The token the page was opened with (/?token=…) is kept here and taken
// out of the address bar at once: not in the history, not in what a shared
// tab showing this page tells automation.
const pageToken = new URLSearchParams(location.search).get("token");
if (pageToken) {
  const u = new URL(location.href);
  u.searchParams.delete("token");
  history.replaceState(null, "", u.pathname + u.search + u.hash);
}

// ---- activity panel ----

function activity(text, kind = "info") {
  const li = document.createElement("li");
  li.dataset.kind = kind;
  const t = document.createElement("time");
  t.textContent = new Date().toLocaleTimeString([], { hour12: false });
  const s = document.createElement("span");
  s.textContent = text;
  li.append(t, s);
  el.activity.prepend(li);
  while (el.activity.children.length > MAX_ACTIVITY) el.activity.lastChild.remove();
}

// ---- connection ----

function connect() {
  const mode = new URLSearchParams(location.search).get("mode");
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  // A relay with tokens is opened as /?token=…: a browser cannot put a
  // header on a WebSocket, so the token travels in the query.
  const query = new URLSearchParams();
  if (mode) query.set("mode", mode);
  if (pageToken) query.set("token", pageToken);
  const qs = query.toString();
  // Beside the page, whatever its path: behind a front door the relay is
  // under a prefix (/relay-1/).
  const dir = location.pathname.replace(/[^/]*$/, "");
  const url = `${proto}//${location.host}${dir}viewer${qs ? `?${qs}` : ""}`;
  // With a token the page acts as its token says; the key is offered only
  // without one (the relay refuses two credentials at once).
  const key = pageToken ? null : personStore.get();
  const ws = key ? new WebSocket(url, [VIEWER_PROTOCOL, PERSON_PROTOCOL + key]) : new WebSocket(url);
  ws.binaryType = "arraybuffer";
  state.ws = ws;
  setConn("connecting", "Connecting…");
  ws.onopen = () => {
    state.retry = 500;
    setConn("open", "Connected");
    activity("Connected to the relay");
    if (state.sel) send({ type: "subscribe", instance: state.sel.instance, tab: state.sel.tab });
  };
  ws.onmessage = (ev) => {
    if (typeof ev.data === "string") onMessage(JSON.parse(ev.data));
    else onJPEG(ev.data);
  };
  ws.onclose = (ev) => {
    if (state.ws !== ws) return;
    setConn("closed", "Disconnected");
    activity(`Disconnected${ev.reason ? `: ${ev.reason}` : ""}; retrying`, "error");
    state.holder = "";
    state.pendingMeta = null;
    render();
    setTimeout(connect, state.retry);
    state.retry = Math.min(state.retry * 2, 5000);
  };
}

function setConn(s, text) {
  el.conn.dataset.state = s;
  el.connText.textContent = text;
}

function send(msg) {
  if (state.ws && state.ws.readyState === WebSocket.OPEN) {
    msg.id = state.nextID++;
    state.ws.send(JSON.stringify(msg));
  }
}

function onMessage(m) {
  switch (m.type) {
    case "hello":
      state.me = m.viewer;
      state.interactive = m.interactive;
      el.mode.textContent = m.interactive ? "Interactive" : "View only";
      el.mode.dataset.mode = m.interactive ? "interactive" : "view";
      el.mode.title = `You are ${m.viewer}. ${m.interactive ? "You may take control of a tab." : "This page may watch only."}`;
      if (m.keyRefused) personStore.drop();
      el.viewOnly.hidden = m.interactive;
      el.viewOnlyText.textContent = m.hint || "This page may watch only.";
      break;
    case "instances":
      noteChanges(state.instances, m.instances);
      state.instances = m.instances;
      if (state.sel) {
        const t = findTab(state.sel);
        if (t) {
          state.holder = t.controlledBy || "";
          if (state.selURL && t.url !== state.selURL) activity(`${tabName(t)} navigated to ${t.url}`);
          state.selURL = t.url;
        }
      }
      renderInstances();
      render();
      break;
    case "status":
      if (!isSel(m)) break;
      if (m.status !== state.status) {
        // live and no-frames alternate on any page that repaints now and
        // then: only the first frame and the end are worth a line.
        if (m.status === "live" && !state.sawLive) {
          state.sawLive = true;
          activity(`${tabName(m)}: first frame after ${Math.round(performance.now() - state.subscribedAt)} ms`);
        } else if (m.status === "detached" || m.status === "stopped") {
          activity(`${tabName(m)}: ${describeStatus(m.status)}`, "error");
        }
        state.status = m.status;
      }
      render();
      break;
    case "frame":
      state.pendingMeta = m;
      break;
    case "control": {
      const who = m.holder === state.me ? "you" : m.holder;
      activity(
        m.holder ? `${tabName(m)}: control taken by ${who}` : `${tabName(m)}: handed back to automation`,
        "control",
      );
      if (isSel(m)) state.holder = m.holder;
      const t = findTab(m);
      if (t) t.controlledBy = m.holder;
      renderInstances();
      render();
      break;
    }
    case "error":
      activity(m.message, "error");
      break;
  }
}

// noteChanges tells the activity panel what the person in charge should
// know: a stop, a dialog, a command waiting for them.
function noteChanges(before, after) {
  const old = new Map(before.map((i) => [i.id, i]));
  for (const inst of after) {
    const was = old.get(inst.id);
    if (was && was.stopped !== inst.stopped)
      activity(inst.stopped ? `Automation stopped by ${who(inst.stoppedBy)}` : "Automation resumed", "control");
    const known = new Set(((was && was.refused) || []).map((r) => `${r.tab} ${r.policy}`));
    for (const r of inst.refused || [])
      if (!known.has(`${r.tab} ${r.policy}`))
        activity(`Chrome refuses to debug a tab${r.origin ? ` on ${r.origin}` : ""}: ${r.reason}`, "error");
    const seen = new Set(((was && was.approvals) || []).map((a) => a.id));
    for (const a of inst.approvals || []) if (!seen.has(a.id)) activity(`Waiting for you: ${a.what}`, "ask");
    for (const t of inst.tabs) {
      const wt = was && was.tabs.find((x) => x.id === t.id);
      if (t.dialog && !(wt && wt.dialog && wt.dialog.id === t.dialog.id))
        activity(`${tabName(t)} asks (${t.dialog.type}): ${t.dialog.message}`, "ask");
    }
  }
}

function who(name) {
  return name === state.me ? "you" : name;
}

function isSel(m) {
  return state.sel && m.instance === state.sel.instance && m.tab === state.sel.tab;
}

function findTab(sel) {
  const inst = state.instances.find((i) => i.id === sel.instance);
  return inst && inst.tabs.find((t) => t.id === sel.tab);
}

// tabName names a tab (or a message about one) for the activity panel.
function tabName(x) {
  const t = "id" in x ? x : findTab({ instance: x.instance, tab: x.tab });
  const title = t && (t.title || t.url);
  return title ? `“${title.length > 40 ? `${title.slice(0, 39)}…` : title}”` : `Tab ${x.tab ?? x.id}`;
}

function describeStatus(s) {
  return (
    {
      starting: "starting the screencast",
      live: "live",
      "no-frames": "no new frames (the page is not repainting)",
      detached: "the tab is gone",
      stopped: "screencast stopped",
      idle: "idle",
    }[s] || s
  );
}

// ---- frames ----

function onJPEG(buf) {
  const meta = state.pendingMeta;
  state.pendingMeta = null;
  if (!meta || !isSel(meta)) return;
  if (state.decoding) {
    state.queued = { meta, buf };
    return;
  }
  draw(meta, buf);
}

async function draw(meta, buf) {
  state.decoding = true;
  try {
    const bmp = await createImageBitmap(new Blob([buf], { type: "image/jpeg" }));
    if (isSel(meta) && meta.seq > state.lastSeq) {
      if (el.canvas.width !== bmp.width || el.canvas.height !== bmp.height) {
        el.canvas.width = bmp.width;
        el.canvas.height = bmp.height;
        fitCanvas();
      }
      ctx2d.drawImage(bmp, 0, 0);
      state.lastSeq = meta.seq;
      state.frames++;
      state.lastBytes = meta.bytes;
      state.geom = meta;
      el.canvas.dataset.seq = String(meta.seq);
      el.canvas.dataset.frames = String(state.frames);
      const now = performance.now();
      state.frameTimes.push(now);
      while (state.frameTimes.length && now - state.frameTimes[0] > 1000) state.frameTimes.shift();
      el.placeholder.hidden = true;
    }
    bmp.close();
  } catch (e) {
    activity(`A frame could not be decoded: ${e.message}`, "error");
  } finally {
    state.decoding = false;
    const q = state.queued;
    state.queued = null;
    if (q) draw(q.meta, q.buf);
  }
}

// The canvas keeps the frame's aspect ratio and fills as much of the
// stage as it can.
function fitCanvas() {
  const w = el.canvas.width,
    h = el.canvas.height;
  if (!w || !h) return;
  const bw = el.box.clientWidth - 24,
    bh = el.box.clientHeight - 24;
  const scale = Math.min(bw / w, bh / h);
  el.canvas.style.width = `${Math.max(1, Math.floor(w * scale))}px`;
  el.canvas.style.height = `${Math.max(1, Math.floor(h * scale))}px`;
}
new ResizeObserver(fitCanvas).observe(el.box);

setInterval(() => {
  const now = performance.now();
  while (state.frameTimes.length && now - state.frameTimes[0] > 1000) state.frameTimes.shift();
  if (!state.sel || !state.frames) {
    el.stats.textContent = "—";
    return;
  }
  const g = state.geom;
  const css = g && g.deviceWidth ? `${Math.round(g.deviceWidth)}×${Math.round(g.deviceHeight)} CSS px` : "";
  el.stats.textContent = [
    css,
    `${state.frameTimes.length} fps`,
    `${Math.round(state.lastBytes / 1024)} KB`,
    `#${state.lastSeq}`,
  ]
    .filter(Boolean)
    .join(" · ");
}, 500);

// ---- instances and tabs ----

function renderInstances() {
  el.instances.replaceChildren();
  if (!state.instances.length) {
    el.instances.innerHTML = '<p class="empty">No instance.</p>';
    return;
  }
  for (const inst of state.instances) {
    const box = document.createElement("div");
    const head = document.createElement("div");
    head.className = "instance-head";
    const name = document.createElement("span");
    name.className = "instance-name";
    name.textContent = inst.default ? "Default instance" : `Instance ${inst.id}`;
    name.title = `Instance ${inst.id}${inst.browser ? ` · ${inst.browser}` : ""}`;
    const meta = document.createElement("span");
    meta.className = "instance-meta";
    meta.textContent = inst.stopped
      ? `automation stopped by ${who(inst.stoppedBy)}`
      : !inst.extension
        ? "extension not connected"
        : inst.client
          ? "automation connected"
          : "no automation";
    head.append(name, meta);
    if (state.interactive) {
      const brake = document.createElement("button");
      brake.className = inst.stopped ? "brake resume" : "brake stop";
      brake.dataset.instance = inst.id;
      brake.textContent = inst.stopped ? "Resume" : "Stop";
      brake.title = inst.stopped
        ? "Let the automation go on"
        : "Stop the automation now: what it is doing fails, and everything it sends is refused until you resume";
      brake.onclick = () => send({ type: inst.stopped ? "resume" : "stop", instance: inst.id });
      head.append(brake);
    }
    box.dataset.stopped = String(!!inst.stopped);
    box.append(head);
    const refused = refusedNotice(inst.refused || []);
    if (refused) box.append(refused);
    if (!inst.tabs.length) {
      const p = document.createElement("p");
      p.className = "empty";
      p.textContent = inst.extension ? "No shared tab." : "Waiting for the extension.";
      box.append(p);
    }
    const ul = document.createElement("ul");
    ul.className = "tabs";
    for (const t of inst.tabs) {
      const li = document.createElement("li");
      const b = document.createElement("button");
      b.className = "tab";
      b.dataset.tabId = String(t.id);
      b.dataset.url = t.url;
      b.setAttribute("aria-current", String(!!state.sel && state.sel.instance === inst.id && state.sel.tab === t.id));
      const dot = document.createElement("span");
      dot.className = "sdot";
      dot.dataset.status = t.status;
      dot.title = describeStatus(t.status);
      const text = document.createElement("span");
      text.style.minWidth = "0";
      const title = document.createElement("div");
      title.className = "t-title";
      title.textContent = t.title || t.url || `Tab ${t.id}`;
      const url = document.createElement("div");
      url.className = "t-url";
      url.textContent = t.url;
      text.append(title, url);
      const side = document.createElement("span");
      side.className = "t-side";
      if (t.dialog) {
        side.classList.add("t-ask");
        side.textContent = t.dialog.type;
        side.title = `The page asks: ${t.dialog.message}`;
      } else if (t.access === "blind") {
        side.classList.add("t-hidden");
        side.textContent = "hidden";
        side.title = "This site is hidden from automation and the live view";
      } else if (t.controlledBy) {
        side.classList.add("t-held");
        side.textContent = t.controlledBy === state.me ? "you control" : "controlled";
        side.title = `Controlled by ${t.controlledBy}`;
      } else if (t.access === "read-only") {
        side.textContent = "read-only";
        side.title = "Automation may read this site, not act on it";
      } else if (t.detached) {
        side.classList.add("t-let-go");
        side.textContent = "let go";
        side.title = `Chrome let go of this tab: ${t.detached}`;
      } else if (t.viewers) {
        side.textContent = `${t.viewers} watching`;
      }
      b.append(dot, text, side);
      b.onclick = () => select(inst.id, t.id);
      li.append(b);
      ul.append(li);
    }
    box.append(ul);
    el.instances.append(box);
  }
  renderApprovals();
}

// refusedNotice says which tabs a policy of the browser keeps the debugger
// out of, by policy, and where to look; null when none.
function refusedNotice(refused) {
  if (!refused.length) return null;
  const byPolicy = new Map();
  for (const r of refused) {
    if (!byPolicy.has(r.policy)) byPolicy.set(r.policy, { reason: r.reason, origins: new Set(), tabs: 0 });
    const p = byPolicy.get(r.policy);
    p.tabs++;
    if (r.origin) p.origins.add(r.origin);
  }
  const box = document.createElement("div");
  box.className = "refused";
  box.setAttribute("role", "status");
  for (const [policy, p] of byPolicy) {
    const line = document.createElement("p");
    const head = document.createElement("strong");
    head.textContent = `Refused by the browser's policy (${policy}): `;
    const where = p.origins.size ? ` Tabs: ${[...p.origins].join(", ")}.` : "";
    line.append(head, `${p.tabs} tab${p.tabs === 1 ? "" : "s"}. ${capital(p.reason)}.${where}`);
    box.append(line);
  }
  return box;
}

function capital(s) {
  return s ? s[0].toUpperCase() + s.slice(1) : s;
}

// renderApprovals shows the commands waiting for a person, oldest first,
// each with what it would do and its deadline.
function renderApprovals() {
  const cards = [];
  for (const inst of state.instances) {
    for (const a of inst.approvals || []) {
      const card = document.createElement("div");
      card.className = "approval";
      card.dataset.approval = String(a.id);
      card.dataset.instance = inst.id;
      const what = document.createElement("div");
      what.className = "approval-what";
      what.textContent = a.what;
      const meta = document.createElement("div");
      meta.className = "approval-meta";
      const t = a.tab && findTab({ instance: inst.id, tab: a.tab });
      meta.textContent = `${t ? tabName(t) : "the browser"} · ${a.method}`;
      const left = document.createElement("div");
      left.className = "approval-left";
      left.dataset.expires = a.expiresAt;
      const actions = document.createElement("div");
      actions.className = "approval-actions";
      const deny = document.createElement("button");
      deny.className = "deny";
      deny.textContent = "Deny";
      deny.onclick = () => send({ type: "deny", instance: inst.id, approval: a.id });
      const approve = document.createElement("button");
      approve.className = "primary approve";
      approve.textContent = "Approve";
      approve.onclick = () => send({ type: "approve", instance: inst.id, approval: a.id });
      deny.disabled = approve.disabled = !state.interactive;
      actions.append(deny, approve);
      card.append(what, meta, left, actions);
      cards.push(card);
    }
  }
  el.approvals.replaceChildren(...cards);
  el.approvalsPanel.hidden = !cards.length;
  tickApprovals();
}

function tickApprovals() {
  for (const left of el.approvals.querySelectorAll(".approval-left")) {
    const s = Math.max(0, Math.round((Date.parse(left.dataset.expires) - Date.now()) / 1000));
    left.textContent = `denied in ${s} s unless you answer`;
  }
}
setInterval(tickApprovals, 1000);

function select(instance, tab) {
  if (state.sel && state.sel.instance === instance && state.sel.tab === tab) return;
  state.sel = { instance, tab };
  state.status = "starting";
  state.frames = 0;
  state.lastSeq = 0;
  state.frameTimes = [];
  state.pendingMeta = null;
  state.queued = null;
  state.geom = null;
  state.sawLive = false;
  state.subscribedAt = performance.now();
  const t = findTab(state.sel);
  state.selURL = t ? t.url : "";
  state.holder = (t && t.controlledBy) || "";
  el.canvas.width = 0;
  el.canvas.height = 0;
  el.canvas.dataset.seq = "0";
  el.canvas.dataset.frames = "0";
  el.placeholder.hidden = false;
  el.placeholder.textContent = "Waiting for the first frame…";
  send({ type: "subscribe", instance, tab });
  activity(`Watching ${t ? tabName(t) : `tab ${tab}`}`);
  renderInstances();
  render();
}

// ---- toolbar ----

function holding() {
  return !!state.me && state.holder === state.me;
}

function render() {
  const t = state.sel && findTab(state.sel);
  el.title.textContent = t ? t.title || `Tab ${t.id}` : state.sel ? `Tab ${state.sel.tab}` : "No tab selected";
  el.url.textContent = t ? t.url : "";
  const mine = holding();
  document.body.dataset.holding = String(mine);
  el.banner.hidden = !mine;
  let label = state.sel ? describeStatus(state.status) : "idle";
  if (state.status === "no-frames") label = "no new frames";
  el.status.dataset.status = state.sel ? state.status : "idle";
  el.status.dataset.held = mine ? "me" : state.holder ? "other" : "";
  if (mine) label = "you control this tab";
  else if (state.holder) label = `controlled by ${state.holder}`;
  el.status.textContent = label;
  const canTake = state.interactive && !!state.sel && !state.holder && state.status !== "detached";
  el.take.disabled = !canTake;
  el.take.hidden = mine;
  el.handback.disabled = !mine;
  for (const c of [el.navURL, el.navGo, el.viewport, el.front, el.reload]) c.disabled = !mine;
  if (!state.interactive && state.me) el.take.title = "This page is view-only";
  const inst = state.sel && state.instances.find((i) => i.id === state.sel.instance);
  el.stoppedBanner.hidden = !(inst && inst.stopped);
  if (inst && inst.stopped)
    el.stoppedBanner.textContent = `Automation stopped by ${who(inst.stoppedBy)}: everything it sends is refused until ${state.interactive ? "you press Resume" : "someone resumes it"}. What its scripts left running in a page stops when the tab is reloaded.`;
  if (t && t.access === "blind") {
    el.placeholder.hidden = false;
    el.placeholder.textContent = `This tab is on ${t.url}, a site hidden from automation and from this view.`;
    el.take.disabled = true;
  }
  renderDialog(t);
}

// renderDialog shows the JavaScript dialog of the watched tab, which the
// screencast cannot: the page waits for an answer.
function renderDialog(t) {
  const d = t && t.dialog;
  el.dialog.hidden = !d;
  if (!d) {
    state.dialogShown = 0;
    return;
  }
  el.dialog.dataset.type = d.type;
  el.dialogKind.textContent =
    {
      alert: "The page says",
      confirm: "The page asks you to confirm",
      prompt: "The page asks",
      beforeunload: "The page asks before it is left",
    }[d.type] || "The page asks";
  el.dialogMessage.textContent = d.message || "(no message)";
  el.dialogPrompt.hidden = d.type !== "prompt";
  if (state.dialogShown !== d.id) {
    state.dialogShown = d.id;
    el.dialogPrompt.value = d.defaultPrompt || "";
  }
  el.dialogDismiss.hidden = d.type === "alert";
  el.dialogAccept.textContent = d.type === "alert" ? "OK" : d.type === "beforeunload" ? "Leave" : "Accept";
  const answered = !!d.answeredBy;
  el.dialogAccept.disabled = el.dialogDismiss.disabled = answered || !state.interactive;
  el.dialogNote.textContent = answered
    ? `Answered by ${who(d.answeredBy)}…`
    : state.interactive
      ? "The automation may answer it too; the first answer counts."
      : "This page is view-only.";
}

function answerDialog(accept) {
  const t = state.sel && findTab(state.sel);
  if (!t || !t.dialog) return;
  send({
    type: "answer-dialog",
    instance: state.sel.instance,
    tab: t.id,
    dialog: t.dialog.id,
    accept,
    promptText: t.dialog.type === "prompt" ? el.dialogPrompt.value : undefined,
  });
}
el.dialogAccept.onclick = () => answerDialog(true);
el.dialogDismiss.onclick = () => answerDialog(false);

el.take.onclick = () => {
  send({ type: "take-control" });
  el.canvas.focus();
};
el.handback.onclick = () => send({ type: "hand-back" });
el.front.onclick = () => input({ kind: "bring-to-front" });
el.reload.onclick = () => {
  input({ kind: "reload" });
  activity("Reloading the tab");
};
el.nav.onsubmit = (e) => {
  e.preventDefault();
  let url = el.navURL.value.trim();
  if (!url) return;
  if (!/^[a-z][a-z0-9+.-]*:/i.test(url)) url = `https://${url}`;
  input({ kind: "navigate", url });
  activity(`Navigating to ${url}`);
};
el.viewport.onchange = () => {
  const v = el.viewport.value;
  el.viewport.value = "";
  if (!v) return;
  let [w, h] = v === "fit" ? [el.box.clientWidth - 24, el.box.clientHeight - 24] : v.split("x").map(Number);
  w = Math.round(w);
  h = Math.round(h);
  input({ kind: "resize", width: w, height: h });
  activity(`Viewport set to ${w} × ${h}`);
};

function input(i) {
  if (holding()) send({ type: "input", input: i });
}

// ---- mouse and keyboard, while this viewer holds control ----

function modifiers(e) {
  return (e.altKey ? 1 : 0) | (e.ctrlKey ? 2 : 0) | (e.metaKey ? 4 : 0) | (e.shiftKey ? 8 : 0);
}

// point maps a pointer event to the frame as fractions, or null outside
// it: the server refuses out-of-range points rather than clamping them.
function point(e) {
  const r = el.canvas.getBoundingClientRect();
  if (!r.width || !r.height) return null;
  const x = (e.clientX - r.left) / r.width;
  const y = (e.clientY - r.top) / r.height;
  if (!(x >= 0 && x <= 1 && y >= 0 && y <= 1)) return null;
  return { x, y };
}

const BUTTONS = ["left", "middle", "right", "back", "forward"];

function mouse(action, e, extra = {}) {
  if (!holding() || !state.geom) return;
  const p = point(e);
  if (!p) return;
  input({ kind: "mouse", action, ...p, modifiers: modifiers(e), buttons: e.buttons, ...extra });
}

let pendingMove = null;
el.canvas.addEventListener("mousemove", (e) => {
  if (!holding()) return;
  if (!pendingMove)
    requestAnimationFrame(() => {
      const m = pendingMove;
      pendingMove = null;
      if (m)
        mouse("move", m, {
          button: m.buttons & 1 ? "left" : m.buttons & 2 ? "right" : m.buttons & 4 ? "middle" : "none",
        });
    });
  pendingMove = e;
});
el.canvas.addEventListener("mousedown", (e) => {
  if (!holding()) return;
  e.preventDefault();
  el.canvas.focus();
  mouse("down", e, { button: BUTTONS[e.button] || "left", clickCount: Math.min(Math.max(e.detail, 1), 3) });
});
el.canvas.addEventListener("mouseup", (e) => {
  if (!holding()) return;
  e.preventDefault();
  mouse("up", e, { button: BUTTONS[e.button] || "left", clickCount: Math.min(Math.max(e.detail, 1), 3) });
});
el.canvas.addEventListener("contextmenu", (e) => {
  if (holding()) e.preventDefault();
});
el.canvas.addEventListener(
  "wheel",
  (e) => {
    if (!holding()) return;
    e.preventDefault();
    const unit = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? (state.geom ? state.geom.deviceHeight : 600) : 1;
    const clamp = (v) => Math.max(-10000, Math.min(10000, v * unit));
    mouse("wheel", e, { deltaX: clamp(e.deltaX), deltaY: clamp(e.deltaY) });
  },
  { passive: false },
);

// keyText is what a key press types, as Chrome expects it in a keyDown.
function keyText(e) {
  if ((e.ctrlKey || e.metaKey) && !e.altKey) return "";
  if (e.key === "Enter") return "\r";
  return [...e.key].length === 1 ? e.key : "";
}

function key(action, e) {
  if (!holding()) return;
  e.preventDefault();
  const i = {
    kind: "key",
    action,
    key: e.key,
    code: e.code,
    keyCode: e.keyCode || 0,
    location: e.location,
    modifiers: modifiers(e),
  };
  if (action === "down") i.text = keyText(e);
  input(i);
}
el.canvas.addEventListener("keydown", (e) => key("down", e));
el.canvas.addEventListener("keyup", (e) => key("up", e));
el.canvas.addEventListener("paste", (e) => {
  if (!holding()) return;
  e.preventDefault();
  const text = e.clipboardData.getData("text");
  if (text) input({ kind: "key", action: "text", text: text.slice(0, 8000) });
});

render();
connect();
