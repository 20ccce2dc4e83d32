// Drives the relay with unmodified playwright-core through connectOverCDP,
// the way an automation author would. Usage:
//   node playwright.mjs <endpoint> <main origin> <other origin>
// The endpoint is the http:// discovery URL or the ws:// browser URL.
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

const [endpoint, main, other] = process.argv.slice(2);
const step = (s) => console.log('ok -', s);

const browser = await chromium.connectOverCDP(endpoint, { timeout: 20000 });
assert.match(browser.version(), /^\d+\.\d+\.\d+\.\d+$/);
step(`connected, browser ${browser.version()}`);

const context = browser.contexts()[0];
assert.ok(context, 'a default context');
const before = context.pages().length;
assert.ok(before >= 1, 'the shared tab is a page');

// A page of our own, so that the person's tab is left as it was.
const page = await context.newPage();
assert.equal(context.pages().length, before + 1);
step('context.newPage()');

await page.goto(`${main}/form.html`);
assert.equal(await page.title(), 'Form');
await page.fill('#name', 'relay');
await page.click('#go');
assert.equal(await page.textContent('#out'), 'Hello, relay');
step('goto, fill, click');

assert.equal(await page.evaluate(() => 6 * 7), 42);
assert.equal(await page.evaluate(() => location.href), `${main}/form.html`);
step('evaluate');

const shot = await page.screenshot();
assert.ok(shot.length > 1000 && shot[0] === 0x89 && shot[1] === 0x50, 'a PNG');
step(`screenshot, ${shot.length} bytes`);

// A cross-site iframe lives in its own renderer: its own child session,
// routed by the relay to this tab.
await page.goto(`${main}/frames.html?other=${encodeURIComponent(other)}`);
const frame = page.frameLocator('#f');
await frame.locator('#where').waitFor();
assert.match(await frame.locator('#where').textContent(), /inner frame at 127\.0\.0\.2/);
await frame.locator('#b').click();
assert.equal(await frame.locator('#b').textContent(), 'clicked in frame');
const child = page.frames().find((f) => f.url().startsWith(other));
assert.ok(child, 'the out-of-process frame is a Frame');
assert.equal(await child.evaluate(() => location.host), new URL(other).host);
step('cross-origin iframe read and clicked through frameLocator');

// window.open: the popup is shared because its opener is, and becomes a
// Page whose opener is this one.
await page.goto(`${main}/form.html`);
const [popup] = await Promise.all([page.waitForEvent('popup'), page.click('#open')]);
await popup.waitForLoadState();
assert.equal(await popup.textContent('#p'), 'I am the popup');
assert.equal(await popup.opener(), page);
step('window.open popup is a Page');

await popup.close();
await page.close();
assert.equal(context.pages().length, before);
step('page.close()');

await browser.close();
step('browser.close()');
