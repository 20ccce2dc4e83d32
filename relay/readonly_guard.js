// Installed by cdprelay in every isolated world of a tab that is read-only
// to automation, before the client can use the world. Reading the page
// works as before; the common ways for a script to act on it throw. The
// relay fills in SECRET (fresh for each installation, never sent to a
// client) and ON; it turns a layer off with the secret when the tab is no
// longer read-only, and installs a new layer the next time.
(() => {
  const secret = "SECRET";
  const key = Symbol.for("cdprelay.readOnly." + secret.slice(0, 8));
  if (Object.getOwnPropertyDescriptor(globalThis, key)) return; // this layer is in already
  let on = ON;
  const refusal = (what) =>
    new DOMException("cdprelay: read-only: " + what + " is refused: automation may read this tab but not act on it", "NotAllowedError");
  // A tool's own events (Playwright's "__playwright_…" checks) mean nothing
  // to the page: only those may still be dispatched.
  const toolEvent = (name, args) =>
    name === "dispatchEvent" && args[0] instanceof CustomEvent && String(args[0].type).startsWith("__");
  const guard = (target, names) => {
    if (!target) return;
    for (const name of names) {
      const d = Object.getOwnPropertyDescriptor(target, name);
      if (!d || !d.configurable) continue;
      if (typeof d.value === "function") {
        const orig = d.value;
        const stub = {
          [name](...args) {
            if (on && !toolEvent(name, args)) throw refusal(name);
            return Reflect.apply(orig, this, args);
          },
        }[name];
        Object.defineProperty(target, name, { ...d, value: stub });
      } else if (d.set) {
        const set = d.set;
        Object.defineProperty(target, name, {
          ...d,
          set(v) {
            if (on) throw refusal(name);
            return Reflect.apply(set, this, [v]);
          },
        });
      }
    }
  };
  const g = globalThis;
  guard(g.EventTarget && EventTarget.prototype, ["dispatchEvent"]);
  guard(g.HTMLElement && HTMLElement.prototype, ["click", "focus", "blur", "innerText", "outerText", "hidden", "contentEditable", "showPopover", "hidePopover", "togglePopover", "title", "lang", "dir", "draggable", "inert", "accessKey"]);
  guard(g.SVGElement && SVGElement.prototype, ["focus", "blur"]);
  guard(g.Element && Element.prototype, [
    "setAttribute", "setAttributeNS", "removeAttribute", "removeAttributeNS", "toggleAttribute", "setAttributeNode",
    "setAttributeNodeNS", "removeAttributeNode", "remove", "replaceWith", "before", "after", "append", "prepend",
    "replaceChildren", "insertAdjacentElement", "insertAdjacentHTML", "insertAdjacentText", "innerHTML", "outerHTML",
    "setHTMLUnsafe", "attachShadow", "requestFullscreen", "requestPointerLock", "setPointerCapture", "className",
    "id", "slot", "scrollTop", "scrollLeft",
  ]);
  guard(g.Node && Node.prototype, ["appendChild", "insertBefore", "removeChild", "replaceChild", "textContent", "nodeValue", "normalize"]);
  guard(g.CharacterData && CharacterData.prototype, ["data", "appendData", "deleteData", "insertData", "replaceData", "remove", "replaceWith", "before", "after"]);
  guard(g.Attr && Attr.prototype, ["value", "nodeValue", "textContent"]);
  guard(g.NamedNodeMap && NamedNodeMap.prototype, ["setNamedItem", "setNamedItemNS", "removeNamedItem", "removeNamedItemNS"]);
  guard(g.DOMTokenList && DOMTokenList.prototype, ["add", "remove", "toggle", "replace", "value"]);
  guard(g.CSSStyleDeclaration && CSSStyleDeclaration.prototype, ["setProperty", "removeProperty", "cssText"]);
  guard(g.HTMLFormElement && HTMLFormElement.prototype, ["submit", "requestSubmit", "reset"]);
  guard(g.HTMLInputElement && HTMLInputElement.prototype, ["value", "checked", "indeterminate", "valueAsDate", "valueAsNumber", "files", "select", "setRangeText", "setSelectionRange", "stepUp", "stepDown", "showPicker"]);
  guard(g.HTMLTextAreaElement && HTMLTextAreaElement.prototype, ["value", "select", "setRangeText", "setSelectionRange"]);
  guard(g.HTMLSelectElement && HTMLSelectElement.prototype, ["value", "selectedIndex", "add", "remove", "showPicker"]);
  guard(g.HTMLOptionElement && HTMLOptionElement.prototype, ["selected"]);
  guard(g.HTMLDetailsElement && HTMLDetailsElement.prototype, ["open"]);
  guard(g.HTMLDialogElement && HTMLDialogElement.prototype, ["show", "showModal", "close", "requestClose"]);
  guard(g.HTMLMediaElement && HTMLMediaElement.prototype, ["play", "pause", "load", "currentTime", "muted", "volume", "src"]);
  guard(g.HTMLIFrameElement && HTMLIFrameElement.prototype, ["src", "srcdoc"]);
  guard(g.HTMLAnchorElement && HTMLAnchorElement.prototype, ["href"]);
  guard(g.Document && Document.prototype, ["write", "writeln", "open", "close", "execCommand", "title", "cookie", "designMode", "body", "dir"]);
  guard(g.Range && Range.prototype, ["deleteContents", "extractContents", "insertNode", "surroundContents"]);
  guard(g.Selection && Selection.prototype, ["addRange", "removeRange", "removeAllRanges", "collapse", "extend", "selectAllChildren", "setBaseAndExtent", "deleteFromDocument", "modify", "empty", "setPosition", "collapseToStart", "collapseToEnd"]);
  guard(g.History && History.prototype, ["back", "forward", "go", "pushState", "replaceState", "scrollRestoration"]);
  guard(g.Storage && Storage.prototype, ["setItem", "removeItem", "clear"]);
  guard(g.XMLHttpRequest && XMLHttpRequest.prototype, ["open", "send"]);
  guard(g.Navigator && Navigator.prototype, ["sendBeacon", "share", "vibrate", "registerProtocolHandler"]);
  guard(g.MessagePort && MessagePort.prototype, ["postMessage"]);
  guard(g.BroadcastChannel && BroadcastChannel.prototype, ["postMessage"]);
  guard(g.IDBFactory && IDBFactory.prototype, ["open", "deleteDatabase"]);
  guard(g.CookieStore && CookieStore.prototype, ["set", "delete"]);
  guard(g.Clipboard && Clipboard.prototype, ["write", "writeText"]);
  guard(g.ServiceWorkerContainer && ServiceWorkerContainer.prototype, ["register"]);
  guard(g.CacheStorage && CacheStorage.prototype, ["open", "delete"]);
  guard(g.Element && Element.prototype, ["scroll", "scrollTo", "scrollBy", "scrollIntoView"]);
  guard(g, ["open", "close", "stop", "print", "alert", "confirm", "prompt", "postMessage", "fetch", "scroll", "scrollTo", "scrollBy", "moveTo", "moveBy", "resizeTo", "resizeBy", "focus", "blur", "WebSocket", "EventSource", "Worker", "SharedWorker", "Notification", "name", "status", "opener"]);
  Object.defineProperty(g, key, {
    value: (s, value) => {
      if (s === secret) on = value;
    },
  });
})();
