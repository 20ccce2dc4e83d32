// Protocol v2, as the stock Playwright extension speaks it: one shared tab
// offered, the v2 commands and no others, the debugger's events of the
// tabs it attached, popups of those tabs offered. Like the stock
// extension it sends no keepalive of its own and does not forward
// chrome.tabs.onRemoved. Its WebSocket lives in the worker, which Chrome
// stops after 30 s without activity.
let ws = null;
const attached = new Set();

chrome.runtime.onMessage.addListener((msg, sender, sendResponse) => {
  if (!msg || msg.type !== "connect") return false;
  connect(msg.relay, msg.tabId).then(
    () => sendResponse({ ok: true }),
    (e) => sendResponse({ ok: false, error: String((e && e.message) || e) }),
  );
  return true;
});

async function connect(url, tabId) {
  if (ws) ws.close();
  const tab = await chrome.tabs.get(tabId);
  const sock = new WebSocket(url);
  await new Promise((resolve, reject) => {
    sock.onopen = resolve;
    sock.onerror = () => reject(new Error("relay unreachable"));
  });
  ws = sock;
  sock.onmessage = (e) => onMessage(sock, JSON.parse(e.data));
  sock.onclose = () => {
    if (ws === sock) ws = null;
    for (const id of attached) chrome.debugger.detach({ tabId: id }).catch(() => {});
    attached.clear();
  };
  send("chrome.tabs.onCreated", [tab]);
  send("extension.initialized", []);
}

function send(method, params) {
  if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ method, params }));
}

async function onMessage(sock, m) {
  let reply;
  try {
    const result = await handle(m.method, m.params || []);
    reply = { id: m.id, result: result === undefined ? {} : result };
  } catch (e) {
    reply = { id: m.id, error: String((e && e.message) || e) };
  }
  if (sock.readyState === WebSocket.OPEN) sock.send(JSON.stringify(reply));
}

async function handle(method, p) {
  switch (method) {
    case "chrome.debugger.attach":
      await chrome.debugger.attach(p[0], p[1] || "1.3");
      attached.add(p[0].tabId);
      return {};
    case "chrome.debugger.detach":
      attached.delete(p[0].tabId);
      await chrome.debugger.detach(p[0]);
      return {};
    case "chrome.debugger.sendCommand":
      return chrome.debugger.sendCommand(p[0], p[1], p[2]);
    case "chrome.tabs.create":
      return chrome.tabs.create(p[0] || {});
    case "chrome.tabs.remove":
      await chrome.tabs.remove(p[0]);
      return {};
  }
  throw new Error("Unknown method: " + method);
}

chrome.debugger.onEvent.addListener((source, method, params) => {
  if (attached.has(source.tabId)) send("chrome.debugger.onEvent", [source, method, params]);
});

chrome.debugger.onDetach.addListener((source, reason) => {
  if (attached.delete(source.tabId)) send("chrome.debugger.onDetach", [{ tabId: source.tabId }, reason]);
});

chrome.tabs.onCreated.addListener((tab) => {
  if (tab.openerTabId !== undefined && attached.has(tab.openerTabId)) send("chrome.tabs.onCreated", [tab]);
});
