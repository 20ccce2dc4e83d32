// A managed browser: a policy keeps the extension off one site. Usage:
//   node managed.mjs <live view URL> <CDP endpoint> <main origin> <blocked origin>
// Playwright goes there, opens a tab there and follows a link there; each
// time it is told which policy and where to look. The live view, in a
// second browser, lists the refused tab with the policy.
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

const [liveURL, endpoint, main, blocked] = process.argv.slice(2);
const step = (s) => console.log('ok -', s);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const browser = await chromium.connectOverCDP(endpoint, { timeout: 20000 });
const context = browser.contexts()[0];
let page = await context.newPage();
await page.goto(`${main}/`);

// Chrome reads the policy file once the test has it reload its policies
// (and by itself, later), and applies an extension's settings from it
// some seconds after that, at times most of a minute: until then the
// navigation goes through. Once it applies the policy, Chrome
// either refuses the navigation there, or lets it commit and then refuses
// every command on the tab while it is on the site (the way back
// included), or lets go of the tab (the page is closed). Whichever
// command Chrome refuses, the client is told which policy and where to
// look; the rest of the script goes on from a fresh page.
let refused = null;
for (const until = Date.now() + 60000; Date.now() < until && !refused; ) {
  for (const url of [`${blocked}/`, `${main}/`]) {
    try {
      await page.goto(url);
    } catch (e) {
      if (page.isClosed() || /has been closed/.test(e.message)) {
        step(`the policy came while the tab was on the site: ${e.message.split('\n')[0]}`);
      } else {
        refused = e;
      }
      await page.close().catch(() => {});
      page = await context.newPage();
      await page.goto(`${main}/`);
      break;
    }
  }
  await sleep(500);
}
assert.ok(refused, 'the navigation to the blocked site was never refused: Chrome did not apply the policy');
assert.match(refused.message, /runtime_blocked_hosts/);
assert.match(refused.message, /chrome:\/\/policy/);
step(`page.goto fails once the policy is in force: ${refused.message.split('\n')[0]}`);

// A tab the automation opens on the site: Chrome will not let it be debugged.
const bs = await browser.newBrowserCDPSession();
await assert.rejects(bs.send('Target.createTarget', { url: `${blocked}/?opened` }), (e) => {
  assert.match(e.message, /ExtensionsSettings policy/);
  assert.match(e.message, /runtime_blocked_hosts/);
  assert.match(e.message, /chrome:\/\/policy/);
  step(`a tab opened there: ${e.message.split('\n')[0]}`);
  return true;
});
await bs.detach();

// The page follows a link there: Chrome lets go of the tab, and the
// client's console says why. The refused navigation above may still be
// settling (Chrome put the tab back where it was): the page is on the main
// site, loaded, before the link is put in it.
for (const until = Date.now() + 20000, fresh = Date.now() + 5000; ; ) {
  try {
    await page.goto(`${main}/?back`);
    await page.evaluate(() => document.readyState);
    break;
  } catch (e) {
    if (Date.now() > until) throw e;
    if (Date.now() > fresh && /ExtensionsSettings policy/.test(e.message)) {
      // Chrome kept the tab on the site, refusing every command there.
      step(`the refused tab stays on the site: ${e.message.split('\n')[0]}`);
      await page.close().catch(() => {});
      page = await context.newPage();
      continue;
    }
    await sleep(250);
  }
}
const warnings = [];
page.on('console', (m) => {
  if (m.type() === 'warning') warnings.push(m.text());
});
await page.evaluate((u) => {
  const a = document.createElement('a');
  a.href = u;
  a.id = 'go';
  a.textContent = 'go';
  document.body.append(a);
}, `${blocked}/?followed`);
await page.click('#go', { noWaitAfter: true }).catch(() => {});
for (const until = Date.now() + 20000; Date.now() < until && !warnings.some((w) => /runtime_blocked_hosts/.test(w)); )
  await sleep(100);
const warning = warnings.find((w) => /runtime_blocked_hosts/.test(w));
assert.ok(warning, `no console warning names the policy: ${JSON.stringify(warnings)}`);
assert.match(warning, /chrome:\/\/policy/);
step(`following a link there: the console says ${warning.slice(0, 140)}…`);

// The live view says it too.
const viewerBrowser = await chromium.launch({
  executablePath: process.env.CHROME_PATH || '/usr/lib/chromium/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
try {
  const vp = await viewerBrowser.newPage();
  await vp.goto(liveURL);
  const notice = vp.locator('.refused');
  await notice.first().waitFor({ timeout: 15000 });
  const text = await notice.first().textContent();
  assert.match(text, /ExtensionSettings/);
  assert.match(text, /chrome:\/\/policy/);
  assert.match(text, new RegExp(blocked.replace(/[.]/g, '\\.')));
  step(`live view: ${text.slice(0, 160)}…`);
  const log = await vp.textContent('#activity');
  assert.match(log, /Chrome refuses to debug a tab/);
  step('live view: the activity log says it');
} finally {
  await viewerBrowser.close();
}

await browser.close();
