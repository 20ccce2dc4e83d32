// Installed by cdprelay in every isolated world of a tab that is read-only
// to automation, before the client can use the world. Reading the page
// works as before; the common ways for a script to act on it throw. The
// relay fills in SECRET (fresh for each installation, never sent to a
// client), ON and WHY (the tab's reason, which every refusal gives); it
// turns a layer off with the secret when the tab is no longer read-only,
// and installs a new layer the next time.
(() => {
  const secret = "SECRET";
  const key = Symbol.for("cdprelay.readOnly." + secret.slice(0, 8));
  if (Object.getOwnPropertyDescriptor(globalThis, key)) return; // this layer is in already
  let on = ON;
  const why = WHY;
  const refusal = (what) => new DOMException("cdprelay: read-only: " + what + " is refused: " + why, "NotAllowedError");
  // A tool's own events (Playwright's "__playwright_…" checks) mean nothing
  // to the page: only those may still be dispatched.
  // What it checks with is taken now: a script that replaces CustomEvent,
  // String or startsWith later must not make its own event look like one.
  const apply = Reflect.apply;
  const getProto = Object.getPrototypeOf;
  const CustomEventCtor = globalThis.CustomEvent;
  const eventType = Object.getOwnPropertyDescriptor(Event.prototype, "type").get;
  const startsWith = String.prototype.startsWith;
  const isCustomEvent = (e) => {
    try {
      return getProto(e) === CustomEventCtor.prototype;
    } catch {
      return false;
    }
  };
  const toolEvent = (name, args) =>
    name === "dispatchEvent" && isCustomEvent(args[0]) && apply(startsWith, apply(eventType, args[0], []), ["__"]);
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
            return apply(orig, this, args);
          },
        }[name];
        Object.defineProperty(target, name, { ...d, value: stub });
      } else if (d.set) {
        const set = d.set;
        Object.defineProperty(target, name, {
          ...d,
          set(v) {
            if (on) throw refusal(name);
            apply(set, this, [v]);
          },
        });
      }
    }
  };
  const g = globalThis;
  // Every realm the world reaches: its own, and each same-origin frame's,
  // which a script could otherwise borrow an unguarded click from.
  const done = new WeakSet();
  const installIn = (w) => {
    if (!w || done.has(w)) return;
    done.add(w);
    guard(w.EventTarget && w.EventTarget.prototype, ["dispatchEvent"]);
    guard(w.HTMLElement && w.HTMLElement.prototype, [
      "click",
      "focus",
      "blur",
      "innerText",
      "outerText",
      "hidden",
      "contentEditable",
      "showPopover",
      "hidePopover",
      "togglePopover",
      "title",
      "lang",
      "dir",
      "draggable",
      "inert",
      "accessKey",
    ]);
    guard(w.SVGElement && w.SVGElement.prototype, ["focus", "blur"]);
    guard(w.Element && w.Element.prototype, [
      "setAttribute",
      "setAttributeNS",
      "removeAttribute",
      "removeAttributeNS",
      "toggleAttribute",
      "setAttributeNode",
      "setAttributeNodeNS",
      "removeAttributeNode",
      "remove",
      "replaceWith",
      "before",
      "after",
      "append",
      "prepend",
      "replaceChildren",
      "insertAdjacentElement",
      "insertAdjacentHTML",
      "insertAdjacentText",
      "innerHTML",
      "outerHTML",
      "setHTMLUnsafe",
      "attachShadow",
      "requestFullscreen",
      "requestPointerLock",
      "setPointerCapture",
      "className",
      "id",
      "slot",
      "scrollTop",
      "scrollLeft",
    ]);
    guard(w.Node && w.Node.prototype, [
      "appendChild",
      "insertBefore",
      "removeChild",
      "replaceChild",
      "textContent",
      "nodeValue",
      "normalize",
    ]);
    guard(w.CharacterData && w.CharacterData.prototype, [
      "data",
      "appendData",
      "deleteData",
      "insertData",
      "replaceData",
      "remove",
      "replaceWith",
      "before",
      "after",
    ]);
    guard(w.Attr && w.Attr.prototype, ["value", "nodeValue", "textContent"]);
    guard(w.NamedNodeMap && w.NamedNodeMap.prototype, [
      "setNamedItem",
      "setNamedItemNS",
      "removeNamedItem",
      "removeNamedItemNS",
    ]);
    guard(w.DOMTokenList && w.DOMTokenList.prototype, ["add", "remove", "toggle", "replace", "value"]);
    guard(w.CSSStyleDeclaration && w.CSSStyleDeclaration.prototype, ["setProperty", "removeProperty", "cssText"]);
    guard(w.HTMLFormElement && w.HTMLFormElement.prototype, ["submit", "requestSubmit", "reset"]);
    guard(w.HTMLInputElement && w.HTMLInputElement.prototype, [
      "value",
      "checked",
      "indeterminate",
      "valueAsDate",
      "valueAsNumber",
      "files",
      "select",
      "setRangeText",
      "setSelectionRange",
      "stepUp",
      "stepDown",
      "showPicker",
    ]);
    guard(w.HTMLTextAreaElement && w.HTMLTextAreaElement.prototype, [
      "value",
      "select",
      "setRangeText",
      "setSelectionRange",
    ]);
    guard(w.HTMLSelectElement && w.HTMLSelectElement.prototype, [
      "value",
      "selectedIndex",
      "add",
      "remove",
      "showPicker",
    ]);
    guard(w.HTMLOptionElement && w.HTMLOptionElement.prototype, ["selected"]);
    guard(w.HTMLDetailsElement && w.HTMLDetailsElement.prototype, ["open"]);
    guard(w.HTMLDialogElement && w.HTMLDialogElement.prototype, ["show", "showModal", "close", "requestClose"]);
    guard(w.HTMLMediaElement && w.HTMLMediaElement.prototype, [
      "play",
      "pause",
      "load",
      "currentTime",
      "muted",
      "volume",
      "src",
    ]);
    guard(w.HTMLIFrameElement && w.HTMLIFrameElement.prototype, ["src", "srcdoc"]);
    guard(w.HTMLAnchorElement && w.HTMLAnchorElement.prototype, ["href"]);
    guard(w.Document && w.Document.prototype, [
      "write",
      "writeln",
      "open",
      "close",
      "execCommand",
      "title",
      "cookie",
      "designMode",
      "body",
      "dir",
    ]);
    guard(w.Range && w.Range.prototype, ["deleteContents", "extractContents", "insertNode", "surroundContents"]);
    guard(w.Selection && w.Selection.prototype, [
      "addRange",
      "removeRange",
      "removeAllRanges",
      "collapse",
      "extend",
      "selectAllChildren",
      "setBaseAndExtent",
      "deleteFromDocument",
      "modify",
      "empty",
      "setPosition",
      "collapseToStart",
      "collapseToEnd",
    ]);
    guard(w.History && w.History.prototype, [
      "back",
      "forward",
      "go",
      "pushState",
      "replaceState",
      "scrollRestoration",
    ]);
    guard(w.Navigation && w.Navigation.prototype, [
      "navigate",
      "reload",
      "back",
      "forward",
      "traverseTo",
      "updateCurrentEntry",
    ]);
    guard(w.Storage && w.Storage.prototype, ["setItem", "removeItem", "clear"]);
    guard(w.XMLHttpRequest && w.XMLHttpRequest.prototype, ["open", "send"]);
    guard(w.Navigator && w.Navigator.prototype, ["sendBeacon", "share", "vibrate", "registerProtocolHandler"]);
    guard(w.MessagePort && w.MessagePort.prototype, ["postMessage"]);
    guard(w.BroadcastChannel && w.BroadcastChannel.prototype, ["postMessage"]);
    guard(w.IDBFactory && w.IDBFactory.prototype, ["open", "deleteDatabase"]);
    guard(w.CookieStore && w.CookieStore.prototype, ["set", "delete"]);
    guard(w.Clipboard && w.Clipboard.prototype, ["write", "writeText"]);
    guard(w.ServiceWorkerContainer && w.ServiceWorkerContainer.prototype, ["register"]);
    guard(w.CacheStorage && w.CacheStorage.prototype, ["open", "delete"]);
    guard(w.Element && w.Element.prototype, ["scroll", "scrollTo", "scrollBy", "scrollIntoView"]);
    guard(w, [
      "open",
      "close",
      "stop",
      "print",
      "alert",
      "confirm",
      "prompt",
      "postMessage",
      "fetch",
      "scroll",
      "scrollTo",
      "scrollBy",
      "moveTo",
      "moveBy",
      "resizeTo",
      "resizeBy",
      "focus",
      "blur",
      "WebSocket",
      "EventSource",
      "Worker",
      "SharedWorker",
      "Notification",
      "name",
      "status",
      "opener",
    ]);
  };
  installIn(g);
  for (let i = 0; i < g.frames.length; i++) {
    try {
      installIn(g.frames[i]);
    } catch {
      // Another origin's frame: nothing of it to borrow.
    }
  }
  // A frame reached later, through its element, is guarded before it is
  // handed over.
  for (const [ctor, name, toWindow] of [
    [g.HTMLIFrameElement, "contentWindow", (v) => v],
    [g.HTMLIFrameElement, "contentDocument", (v) => v && v.defaultView],
    [g.HTMLFrameElement, "contentWindow", (v) => v],
    [g.HTMLFrameElement, "contentDocument", (v) => v && v.defaultView],
    [g.HTMLObjectElement, "contentWindow", (v) => v],
    [g.HTMLObjectElement, "contentDocument", (v) => v && v.defaultView],
  ]) {
    const d = ctor && Object.getOwnPropertyDescriptor(ctor.prototype, name);
    if (!d || !d.get || !d.configurable) continue;
    const get = d.get;
    Object.defineProperty(ctor.prototype, name, {
      ...d,
      get() {
        const v = apply(get, this, []);
        try {
          installIn(toWindow(v));
        } catch {
          // Another origin's: nothing to guard here.
        }
        return v;
      },
    });
  }
  Object.defineProperty(g, key, {
    value: (s, value) => {
      if (s === secret) on = value;
    },
  });
})();
