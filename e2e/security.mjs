// A Playwright client against a relay that wants tokens and serves TLS:
// the right token over https works end to end; no token and a token of
// another scope are refused. Run with NODE_EXTRA_CA_CERTS naming the
// relay's certificate. Usage:
//   node security.mjs <https endpoint> <cdp token> <viewer token> <main origin>
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

const [endpoint, cdpToken, viewerToken, main] = process.argv.slice(2);
const step = (s) => console.log('ok -', s);
const bearer = (t) => ({ Authorization: `Bearer ${t}` });

await assert.rejects(chromium.connectOverCDP(endpoint, { timeout: 10000 }), /401/);
step('no token: refused');
await assert.rejects(chromium.connectOverCDP(endpoint, { timeout: 10000, headers: bearer(viewerToken) }), /403/);
step('a viewer token: refused');

const browser = await chromium.connectOverCDP(endpoint, { timeout: 20000, headers: bearer(cdpToken) });
assert.match(browser.version(), /^\d+\.\d+\.\d+\.\d+$/);
step(`connected over TLS with a cdp token, browser ${browser.version()}`);

const context = browser.contexts()[0];
const page = await context.newPage();
await page.goto(`${main}/form.html`);
await page.fill('#name', 'tls');
await page.click('#go');
assert.equal(await page.textContent('#out'), 'Hello, tls');
assert.equal(await page.evaluate(() => 6 * 7), 42);
step('goto, fill, click, evaluate');
await page.close();
await browser.close();
step('closed');
