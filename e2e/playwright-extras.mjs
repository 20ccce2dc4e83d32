// Playwright features beyond the basics, through the relay: downloads,
// context.newCDPSession(page), browser.newBrowserCDPSession(), and the
// clear error of browser.newContext(). Usage:
//   node playwright-extras.mjs <endpoint> <main origin>
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';

const [endpoint, main] = process.argv.slice(2);
const step = (s) => console.log('ok -', s);

const browser = await chromium.connectOverCDP(endpoint, { timeout: 20000 });
const context = browser.contexts()[0];
const page = await context.newPage();

// A download: the event comes with the file's suggested name. The file is
// saved by the person's Chrome, where it saves downloads.
await page.goto(`${main}/download.html`);
const [download] = await Promise.all([page.waitForEvent('download'), page.click('#dl')]);
assert.equal(download.suggestedFilename(), 'report.csv');
assert.equal(download.url(), `${main}/files/report.csv`);
assert.equal(await download.failure(), null);
step(`download event: ${download.suggestedFilename()}`);
// Playwright asked the browser to save into its own artifacts folder, which
// the relay does not pass on: download.path() names a file that is never
// written (and saveAs() has nothing to copy).
assert.equal(existsSync(await download.path()), false);
step('download.path() names no file: the person\'s Chrome saved it');

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
