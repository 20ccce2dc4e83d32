// Playwright features beyond the basics, through the relay: downloads,
// context.newCDPSession(page), browser.newBrowserCDPSession(), and the
// clear error of browser.newContext(). Usage:
//   node playwright-extras.mjs <endpoint> <main origin>
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const [endpoint, main] = process.argv.slice(2);
const step = (s) => console.log('ok -', s);

const browser = await chromium.connectOverCDP(endpoint, { timeout: 20000 });
const context = browser.contexts()[0];
const page = await context.newPage();

// A download: the event comes with the file's suggested name. The person's
// Chrome saves it where it saves downloads, and the relay copies the file
// into the folder Playwright asked for, before Playwright hears that the
// download completed: path() and saveAs() have the file's bytes.
const body = 'name,value\nrelay,42\n';
await page.goto(`${main}/download.html`);
const [download] = await Promise.all([page.waitForEvent('download'), page.click('#dl')]);
assert.equal(download.suggestedFilename(), 'report.csv');
assert.equal(download.url(), `${main}/files/report.csv`);
assert.equal(await download.failure(), null);
step(`download event: ${download.suggestedFilename()}`);
const path = await download.path();
assert.equal(readFileSync(path, 'utf8'), body);
step(`download.path(): ${path} holds the file`);
const saveDir = mkdtempSync(join(tmpdir(), 'cdprelay-saveas-'));
try {
  await download.saveAs(join(saveDir, 'copy.csv'));
  assert.equal(readFileSync(join(saveDir, 'copy.csv'), 'utf8'), body);
  step('download.saveAs() writes the file');
} finally {
  rmSync(saveDir, { recursive: true, force: true });
}

// A raw session on the page, beside Playwright's own.
const cdp = await context.newCDPSession(page);
const { result } = await cdp.send('Runtime.evaluate', { expression: 'document.title' });
assert.equal(result.value, 'Download');
await cdp.send('Network.enable');
await cdp.detach();
assert.equal(await page.title(), 'Download');
step('context.newCDPSession(page), detach; the page goes on');

const bs = await browser.newBrowserCDPSession();
const v = await bs.send('Browser.getVersion');
assert.match(v.product, /Chrome\/\d+/);
const { targetInfos } = await bs.send('Target.getTargets');
assert.ok(targetInfos.some((t) => t.type === 'page'));
await bs.detach();
step('browser.newBrowserCDPSession()');

await assert.rejects(browser.newContext(), /default context/);
step('browser.newContext() fails with a clear error');

await page.close();
await browser.close();
