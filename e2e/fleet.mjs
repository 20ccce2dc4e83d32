// Playwright through a fleet's front door: it is given the node's base
// URL only, finds the browser socket in /json/version as it always does,
// and drives the tab through the front door. Usage:
//   node fleet.mjs <node URL through the front door> <cdp token> <main origin>
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

const [endpoint, token, main] = process.argv.slice(2);
const step = (s) => console.log('ok -', s);
const headers = { Authorization: `Bearer ${token}` };

// What Playwright is about to read: a socket under the same node's
// prefix, through the same front door.
const version = await (await fetch(`${endpoint}/json/version/`, { headers })).json();
const ws = version.webSocketDebuggerUrl;
assert.ok(ws.startsWith(endpoint.replace(/^http/, 'ws') + '/devtools/browser/'), `webSocketDebuggerUrl ${ws}`);
step(`/json/version names ${ws}`);

const browser = await chromium.connectOverCDP(endpoint, { timeout: 20000, headers });
step(`connected through the front door, browser ${browser.version()}`);
const page = await browser.contexts()[0].newPage();
await page.goto(`${main}/form.html`);
await page.fill('#name', 'fleet');
await page.click('#go');
assert.equal(await page.textContent('#out'), 'Hello, fleet');
step('goto, fill, click');
await page.close();
await browser.close();
step('closed');
