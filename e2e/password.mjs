// A login page with a password manager's inline menu (the stand-in, a
// frame of another extension, internal/testenv/standins.go), driven the
// way an automation author would. Run against a Chromium's own port it is
// the reference; through the relay, with the frame guard allowed, it must
// pass just the same. Usage: node password.mjs <endpoint> <main origin>
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

const [endpoint, main] = process.argv.slice(2);
const step = (s) => console.log('ok -', s);

const browser = await chromium.connectOverCDP(endpoint, { timeout: 20000 });
const context = browser.contexts()[0];
const page = await context.newPage();
const warnings = [];
page.on('console', (m) => {
  if (m.type() === 'warning' && m.text().startsWith('cdprelay:')) warnings.push(m.text());
});
const closed = new Promise((resolve) => page.once('close', () => resolve('closed')));

// The menu comes with the page, inside a closed shadow root.
await page.goto(`${main}/login.html?pm=shadow`);
assert.equal(await page.title(), 'Login');
assert.equal(await page.textContent('#out'), 'not signed in');
step('goto a login page whose menu comes on load');

// The menu comes when the field gets focus, in the middle of filling.
await page.goto(`${main}/login.html?pm-when=focus`);
await page.fill('#user', 'me');
await page.fill('#pw', 'secret');
await page.click('#go');
assert.equal(await page.textContent('#out'), 'Hello, me (6)');
step('fill and click while the menu comes on focus');

// Both, in the light DOM.
await page.goto(`${main}/login.html`);
await page.fill('#pw', 'another');
await page.press('#pw', 'Enter');
assert.equal(await page.textContent('#out'), 'Hello,  (7)');
assert.equal(await page.evaluate(() => 6 * 7), 42);
step('the same with the menu in the light DOM');

const result = await Promise.race([closed, Promise.resolve('open')]);
assert.equal(result, 'open', 'the page was closed under the automation');
console.log(`warnings: ${warnings.length}`);
for (const w of warnings) console.log('  ' + w);
await page.close();
await browser.close();
