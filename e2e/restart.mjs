// The extension restarts under a connected Playwright (a reload or an
// update): the connection stays, and so does the page: the command under
// way is answered (the debugger it ran under is gone), no new page comes,
// and the same page works once the extension is back. The test reloads
// the extension once this prints "ready".
// Usage: node restart.mjs <endpoint> <main origin>
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

const [endpoint, main] = process.argv.slice(2);
const url = `${main}/form.html?restart`;
const browser = await chromium.connectOverCDP(endpoint, { timeout: 20000 });
let disconnected = false;
browser.on('disconnected', () => { disconnected = true; });
const context = browser.contexts()[0];
const page = await context.newPage();
page.setDefaultTimeout(60000);
await page.goto(url);
let closed = false;
page.once('close', () => { closed = true; });
const others = [];
context.on('page', (p) => others.push(p.url()));
const pending = page.evaluate(() => new Promise(() => {})).then(() => 'resolved', (e) => e.message);
console.log('ready');

const failure = await pending;
assert.notEqual(failure, 'resolved');
assert.equal(closed, false, `the page closed: ${failure}`);
console.log(`ok - the command under way was answered: ${failure.split('\n')[0]}`);
await page.fill('#name', 'again');
await page.click('#go');
assert.equal(await page.textContent('#out'), 'Hello, again');
assert.equal(page.url(), url);
assert.equal(closed, false, 'the page closed');
assert.deepEqual(others, [], 'a new page came');
assert.equal(disconnected, false, 'the client was disconnected');
console.log('ok - the same page works once the extension is back, on the same connection');
await page.close();
await browser.close();
