// connect.html?mcpRelayUrl=<ws url>&url=<the page of the tab to share>:
// the worker connects and shares that tab, as the stock extension's
// connect page does once the person has picked the tab.
const q = new URLSearchParams(location.search);
chrome.tabs.query({}).then(async (tabs) => {
  const tab = tabs.find((t) => t.url === q.get("url"));
  const r = await chrome.runtime.sendMessage({
    type: "connect",
    relay: q.get("mcpRelayUrl"),
    tabId: tab ? tab.id : -1,
  });
  document.getElementById("state").textContent = r && r.ok ? "connected" : "failed: " + (r && r.error);
});
