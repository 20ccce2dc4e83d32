// A sub-frame navigating to a scheme Chrome cannot debug detaches the
// whole tab (target_closed) while the tab stays open. The extension offers
// it again and the relay re-attaches it: the client sees the old page close
// and the same tab come back as a new page. Usage: node reoffer.mjs <endpoint> <main origin>
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

const [endpoint, main] = process.argv.slice(2);
const browser = await chromium.connectOverCDP(endpoint, { timeout: 20000 });
const context = browser.contexts()[0];
const page = await context.newPage();
await page.goto(`${main}/form.html`);
const closed = new Promise((resolve) => page.once('close', resolve));
const again = new Promise((resolve) => context.once('page', resolve));
await page.evaluate(() => {
  const f = document.createElement('iframe');
  f.src = 'cdprelay-unknown-scheme://x';
  document.body.appendChild(f);
}).catch(() => { /* the page may close under the evaluation */ });
await closed;
console.log('ok - the detached page closed');
const back = await Promise.race([again, new Promise((_, reject) => setTimeout(() => reject(new Error('the tab was not offered again')), 10000))]);
assert.equal(back.url(), `${main}/form.html`);
assert.equal(await back.title(), 'Form');
// Chrome itself keeps mouse input away from a tab whose frame asked for an
// external protocol, so this checks reads, typing and navigation.
await back.fill('#name', 'again');
assert.equal(await back.inputValue('#name'), 'again');
await back.goto(`${main}/`);
assert.equal(await back.title(), 'cdprelay test page');
console.log('ok - the same tab came back as a new page and works');
await back.close();
await browser.close();
