// The frame guard: run by the service worker in our isolated world of each
// document of a tab the automation holds. It watches for the frames other
// extensions put into the page (password managers' inline menus are such
// frames), closed shadow roots included, and tells the worker how many
// there are: Chrome detaches chrome.debugger from the whole tab when such a
// frame starts to load, and refuses to attach it again until the frame is
// gone, so the worker needs to know why a tab went and when it can come
// back. When the person allows it, the guard also removes them as soon as
// they are inserted. That cannot prevent the detach (Chrome detaches before
// any script can react), but the tab can be attached again at once. When
// the automation lets go, the worker stops the guard, and the other
// extension puts its frame back (its inline menu comes back on the next
// focus).
//
// The worker injects this file into the documents there are when it takes
// a tab, then calls cdprelayGuard.start(remove), and cdprelayGuard.stop()
// when it lets go. While it holds tabs, the file also runs at the start of
// every new document (a registered content script), where it asks the
// worker whether to start: so it is in place before any other extension's
// script has run.
(() => {
  if (globalThis.cdprelayGuard) return;
  const own = chrome.runtime.getURL("");
  const SELECTOR = "iframe, frame, embed, object";
  let roots = new Set(); // the document and the shadow roots watched
  let observer = null;
  let remove = false;
  let removed = 0;
  let lastRemoved = 0; // when, in ms since the epoch
  let reported = -1;

  const addressOf = (el) => {
    switch (el.localName) {
      case "iframe":
      case "frame":
      case "embed":
        return el.getAttribute("src") || "";
      case "object":
        return el.getAttribute("data") || "";
    }
    return "";
  };

  // Another extension's document: chrome-extension://<not ours>/…, however
  // the page spells it (the browser resolves it against the document).
  function foreign(el) {
    const raw = addressOf(el);
    if (!raw) return false;
    let u;
    try {
      u = new URL(raw, document.baseURI);
    } catch {
      return false;
    }
    return u.protocol === "chrome-extension:" && !u.href.startsWith(own);
  }

  function tell(msg) {
    chrome.runtime.sendMessage(msg).catch(() => {});
  }

  // An extension that puts its frame back as soon as it is removed would
  // make the two of us a loop: past MAX_REMOVALS in WINDOW_MS the guard
  // only watches.
  const MAX_REMOVALS = 10;
  const WINDOW_MS = 5000;
  let recent = [];

  function drop(el) {
    const now = Date.now();
    recent = recent.filter((at) => now - at < WINDOW_MS);
    if (recent.length >= MAX_REMOVALS) {
      remove = false;
      return;
    }
    recent.push(now);
    el.remove();
    removed++;
    lastRemoved = now;
    tell({ type: "guard", removed });
  }

  // Looks at node and everything under it, shadow roots included, and
  // starts watching the shadow roots it finds.
  function sweep(node) {
    const all = [];
    const walker = document.createTreeWalker(node, NodeFilter.SHOW_ELEMENT);
    for (let n = walker.currentNode; n !== null; n = walker.nextNode()) {
      if (n.nodeType === Node.ELEMENT_NODE) all.push(n);
    }
    for (const n of all) {
      if (!n.isConnected) continue; // went with a frame removed before it
      if (remove && foreign(n)) {
        drop(n);
        continue;
      }
      const root = chrome.dom.openOrClosedShadowRoot(n);
      if (root && !roots.has(root)) {
        roots.add(root);
        watch(root);
        sweep(root);
      }
    }
  }

  function watch(root) {
    observer.observe(root, { childList: true, subtree: true, attributes: true, attributeFilter: ["src", "data"] });
  }

  // count says how many other extensions' frames the document shows now,
  // when that changed.
  function count() {
    let n = 0;
    for (const root of roots) {
      if (root !== document && !root.host.isConnected) {
        roots.delete(root);
        continue;
      }
      for (const el of root.querySelectorAll(SELECTOR)) if (foreign(el)) n++;
    }
    if (n !== reported) {
      reported = n;
      tell({ type: "frames", foreign: n });
    }
  }

  // framey: an element that is, holds or hosts a frame.
  const framey = (n) =>
    n.nodeType === Node.ELEMENT_NODE &&
    (n.matches(SELECTOR) || n.querySelector(SELECTOR) !== null || chrome.dom.openOrClosedShadowRoot(n) !== null);

  function onMutations(records) {
    let changed = false;
    for (const r of records) {
      if (r.type === "attributes") {
        if (remove && r.target.isConnected && foreign(r.target)) drop(r.target);
        changed = true;
        continue;
      }
      for (const n of r.addedNodes) {
        if (!framey(n)) continue;
        changed = true;
        if (n.isConnected) sweep(n);
      }
      for (const n of r.removedNodes) if (framey(n)) changed = true;
    }
    if (changed) count();
  }

  // start starts watching, or looks again; it returns what the document
  // shows now, what this look removed and when the guard last removed one.
  function start(removing) {
    remove = removing === true;
    if (observer === null) {
      observer = new MutationObserver(onMutations);
      roots = new Set([document]);
      watch(document);
    }
    const before = removed;
    sweep(document);
    reported = -1;
    count();
    return { foreign: reported, removed: removed - before, lastRemoved };
  }

  function stop() {
    if (observer === null) return;
    observer.disconnect();
    observer = null;
    roots = new Set();
  }

  globalThis.cdprelayGuard = { start, stop };
  chrome.runtime.sendMessage({ type: "guard-hello" }).then(
    (r) => r && r.start && start(r.remove),
    () => {},
  );
})();
