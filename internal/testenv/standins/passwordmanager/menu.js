// Tells the page's content script that the menu is up.
parent.postMessage({ standInMenu: "ready" }, "*");
