// A popup onto another extension's page (the stand-in password manager's
// menu). Against the browser's own port Playwright gets it as a page;
// through the relay, which cannot attach such a page, it still gets its
// popup event at once (the page closed), never a wait.
// Usage: node extpopup.mjs <endpoint> <main origin> <extension page> <reference|relay>
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

const [endpoint, main, extPage, mode] = process.argv.slice(2);
const browser = await chromium.connectOverCDP(endpoint, { timeout: 20000 });
const context = browser.contexts()[0];
const page = await context.newPage();
await page.goto(`${main}/form.html?extpopup`);
const started = Date.now();
const [popup] = await Promise.all([
  page.waitForEvent('popup', { timeout: 10000 }),
  page.evaluate((u) => { window.open(u); }, extPage),
]);
console.log(`ok - the popup event came after ${Date.now() - started} ms`);
if (mode === 'reference') {
  await popup.waitForLoadState();
  assert.equal(popup.url(), extPage);
  await popup.close();
} else {
  if (!popup.isClosed()) await popup.waitForEvent('close', { timeout: 10000 });
  console.log('ok - and the page is closed: the automation cannot follow it there');
}
assert.equal(await page.evaluate(() => 6 * 7), 42);
console.log('ok - the opener works on');
await page.close();
await browser.close();
