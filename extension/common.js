// Rules shared by the service worker and the connect page, so that the page
// refuses exactly what the worker would refuse.

// Unencrypted WebSockets are only acceptable when they never leave the
// machine: whoever can read the stream can drive the shared tabs.
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "[::1]", "localhost"]);

/** Returns "" when url is an acceptable relay address, else why not. */
export function relayUrlProblem(url) {
  if (!url) return "Enter the relay URL.";
  let u;
  try {
    u = new URL(url);
  } catch {
    return "This is not a valid URL.";
  }
  if (u.protocol === "wss:") return "";
  if (u.protocol !== "ws:") return "The relay URL must start with ws:// or wss://.";
  if (LOOPBACK_HOSTS.has(u.hostname)) return "";
  return "ws:// is only allowed to 127.0.0.1, [::1] or localhost; use wss:// for a relay on another host.";
}

/**
 * Reports whether url names a relay on this machine: ws:// or wss:// to
 * 127.0.0.1, [::1] or localhost. A connect link may connect by itself only
 * to such a relay (connect.js).
 */
export function loopbackRelay(url) {
  let u;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  return (u.protocol === "ws:" || u.protocol === "wss:") && LOOPBACK_HOSTS.has(u.hostname);
}

// Only ordinary web pages are ever shared with the relay: http and https
// pages, and about:blank (a tab that is still being created). Files, browser
// pages, extension pages (this extension's own most of all: a script there
// has the extension's powers) and the Web Store never are.
const WEB_SCHEMES = new Set(["http:", "https:"]);

export function attachable(url) {
  let u;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  if (u.protocol === "about:") return u.pathname === "blank";
  if (!WEB_SCHEMES.has(u.protocol)) return false;
  return !(
    u.hostname === "chromewebstore.google.com" ||
    (u.hostname === "chrome.google.com" && u.pathname.startsWith("/webstore"))
  );
}

// A tab that is still being created or is loading its first page has no url
// yet; it starts out as about:blank, which is attachable.
export function tabUrl(tab) {
  return tab.pendingUrl || tab.url || "about:blank";
}

// Why Chrome refuses to attach chrome.debugger to a tab (or detached it),
// from the error it gives: another extension's frame in the tab (a password
// manager's inline menu), a policy of the browser (policyCause), a page
// never shared (a browser page, the Web Store, another extension's page, a
// file without file access), the tab gone, or something else.
export function refusalCause(message) {
  const m = String(message);
  if (/different extension/i.test(m)) return "extension_frame";
  if (/No tab with given id/i.test(m)) return "tab_closed";
  const policy = policyCause(m);
  if (policy) return policy;
  if (/chrome:\/\/|chrome-untrusted:|devtools:|cannot be scripted|file URL|local file access/i.test(m))
    return "restricted_url";
  return "unknown";
}

// policyCause names the policy of the browser (chrome://policy) behind
// Chrome's refusal to debug a web page, or "": a site the administrator
// keeps extensions off (ExtensionSettings, runtime_blocked_hosts), and what
// Chrome's documentation says newer versions refuse every tab for (any
// blocked host, a screenshot or data-loss-prevention policy). "Cannot
// attach to this target." is what a web page gets while a policy turns
// developer tools off (DeveloperToolsAvailability).
export function policyCause(message) {
  const m = String(message);
  if (/cannot be scripted due to an ExtensionsSettings policy/i.test(m)) return "policy_blocked_host";
  if (/Host access is restricted by policy/i.test(m)) return "policy_host_access";
  if (/Screenshot capture is restricted by policy/i.test(m)) return "policy_screenshots";
  if (/^Cannot attach to this target\.?$/i.test(m.trim())) return "policy_devtools";
  return "";
}

// policyWords says a policy's refusal in the person's words.
export function policyWords(cause) {
  const where = "chrome://policy shows it; your administrator sets it.";
  switch (cause) {
    case "policy_blocked_host":
      return `This browser's policy keeps extensions off this site (ExtensionSettings: runtime_blocked_hosts). ${where}`;
    case "policy_host_access":
      return `This browser's policy restricts which sites extensions may access (ExtensionSettings: runtime_blocked_hosts), and Chrome then lets no extension debug a tab. ${where}`;
    case "policy_screenshots":
      return `This browser's policy restricts screen capture (ScreenCaptureAllowed, DisableScreenshots or a data-loss-prevention rule), and Chrome then lets no extension debug a tab. ${where}`;
    case "policy_devtools":
      return `This browser's policy most likely turns developer tools off (DeveloperToolsAvailability), and Chrome then lets no extension debug a tab. ${where}`;
  }
  return "";
}
