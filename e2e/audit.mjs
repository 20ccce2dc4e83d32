// A Playwright session through the cdprelay binary that leaves a trail in
// the audit log: a navigation, a typed password, a denied call, a
// disconnect. Usage: node audit.mjs <endpoint> <main origin> <secret>
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

const [endpoint, main, secret] = process.argv.slice(2);
const browser = await chromium.connectOverCDP(endpoint, { timeout: 20000 });
const context = browser.contexts()[0];
const page = await context.newPage();
await page.goto(`${main}/form.html?q=query-text-must-not-be-kept#frag`);
await page.fill('#name', secret);
await page.click('#go');
assert.equal(await page.textContent('#out'), `Hello, ${secret}`);
await assert.rejects(context.cookies(), /Denied by cdprelay policy/);
await page.close();
await browser.close();
console.log('ok - navigated, typed, was denied, disconnected');
