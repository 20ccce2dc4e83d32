// The extension restarts under a connected Playwright (a reload or an
// update): the connection stays, the command under way fails as a closed
// page's, and the tab comes back as a new page that works. The test
// reloads the extension once this prints "ready".
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
await page.goto(url);
const closed = new Promise((resolve) => page.once('close', resolve));
const back = new Promise((resolve) => context.on('page', (p) => { if (p.url() === url) resolve(p); }));
const pending = page.evaluate(() => new Promise(() => {})).then(() => 'resolved', (e) => e.message);
console.log('ready');

const failure = await pending;
assert.match(failure, /closed/i, failure);
assert.doesNotMatch(failure, /Execution context was destroyed/);
await closed;
console.log(`ok - the command under way failed as a closed page's: ${failure.split('\n')[0]}`);
const again = await Promise.race([back, new Promise((_, reject) => setTimeout(() => reject(new Error('the tab did not come back')), 30000).unref())]);
assert.equal(await again.title(), 'Form');
await again.fill('#name', 'again');
await again.click('#go');
assert.equal(await again.textContent('#out'), 'Hello, again');
assert.equal(disconnected, false, 'the client was disconnected');
console.log('ok - the same connection has the tab back as a new page, and it works');
await again.close();
await browser.close();
