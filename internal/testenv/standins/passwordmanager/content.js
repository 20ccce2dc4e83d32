// The inline menu: a frame of this extension's own next to each password
// field. The page says when (?pm-when=load, the default, or focus) and how
// (?pm=light, the default, or shadow: inside a closed shadow root, as the
// real ones do). A field's data-pm says how far its menu got: "inserted",
// then "ready" once the menu's frame has loaded. A menu that went (the page
// or another extension removed it) comes back on the field's next focus,
// as the real ones do.
const MENU = chrome.runtime.getURL("menu.html");
const q = new URLSearchParams(location.search);
const shadow = q.get("pm") === "shadow";
const onLoad = q.get("pm-when") !== "focus";
const menus = new WeakMap(); // field to the frame showing its menu

function show(field) {
  const old = menus.get(field);
  if (old && old.isConnected) return;
  field.dataset.pm = "inserted";
  const frame = document.createElement("iframe");
  frame.src = MENU;
  frame.style.cssText = "width:160px;height:40px;border:0";
  menus.set(field, frame);
  if (shadow) {
    let host = field.nextElementSibling;
    if (!host || host.localName !== "stand-in-menu") {
      host = document.createElement("stand-in-menu");
      host.attachShadow({ mode: "closed" });
      field.after(host);
    }
    chrome.dom.openOrClosedShadowRoot(host).append(frame);
  } else {
    field.after(frame);
  }
}

addEventListener("message", (e) => {
  if (e.origin !== "chrome-extension://" + chrome.runtime.id || !e.data || e.data.standInMenu !== "ready") return;
  for (const f of document.querySelectorAll("input[type=password]")) if (f.dataset.pm) f.dataset.pm = "ready";
});

for (const field of document.querySelectorAll("input[type=password]")) {
  if (onLoad) show(field);
  field.addEventListener("focus", () => show(field));
}
