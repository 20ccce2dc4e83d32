// The policy through a real client: the command fence refuses file: and
// javascript: navigations and cookie reads with the policy's message; the
// navigation backstop stops a link click, a form post and a redirect to a
// host outside the allowed list; and page.route() on the same page still
// intercepts and fulfils what it asked for.
// Usage: node policy.mjs <endpoint> <main origin> <other origin>
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

const [endpoint, main, other] = process.argv.slice(2);
const step = (s) => console.log('ok -', s);
const policyError = /Denied by cdprelay policy/;

const browser = await chromium.connectOverCDP(endpoint, { timeout: 20000 });
const context = browser.contexts()[0];
const page = await context.newPage();

await assert.rejects(page.goto('file:///etc/passwd'), policyError);
step('file:///etc/passwd refused with the policy message');
await assert.rejects(page.goto('javascript:alert(1)'), policyError);
step('javascript: refused');
await assert.rejects(context.cookies(), policyError);
step('context.cookies() refused');

await page.goto(`${main}/links.html?other=${encodeURIComponent(other)}`);
assert.equal(await page.title(), 'Links');
step('an allowed host loads');

let routed = 0;
await page.route('**/api/data', (route) => {
  routed++;
  return route.fulfill({ contentType: 'application/json', body: '{"from":"route"}' });
});
assert.equal(await page.evaluate(() => fetch('/api/data').then((r) => r.json()).then((j) => j.from)), 'route');
step('page.route() intercepts and fulfils the request it asked for');

// A link to a host outside the list: the navigation fails as blocked.
const failed = [];
page.on('requestfailed', (r) => failed.push(`${r.url()} ${r.failure()?.errorText}`));
let committed = page.waitForEvent('framenavigated');
await page.click('#away');
await committed;
assert.equal(page.url(), 'chrome-error://chromewebdata/');
assert.notEqual(await page.locator('#t').count().catch(() => 0), 1, 'the other host was reached');
step('a link click to another host is blocked');

await page.goto(`${main}/links.html?other=${encodeURIComponent(other)}`);
committed = page.waitForEvent('framenavigated');
await page.click('#submit');
await committed;
step('a form post to another host is blocked');

const blocked = failed.filter((f) => f.startsWith(other) && f.includes('ERR_BLOCKED_BY_CLIENT'));
assert.ok(blocked.length >= 2, `blocked navigations seen by the client: ${failed.join(' | ')}`);
step(`the client saw ${blocked.length} navigations fail as blocked by client`);

await page.goto(`${main}/links.html?other=${encodeURIComponent(other)}`);
assert.equal(await page.evaluate(() => fetch('/api/data').then((r) => r.json()).then((j) => j.from)), 'route');
assert.ok(routed >= 2, `route handler ran ${routed} times`);
step('page.route() still fulfils after the blocked navigations');

const second = await context.newPage();
await assert.rejects(second.goto(`${main}/redirect?to=${encodeURIComponent(other + '/target.html')}`), /ERR_BLOCKED_BY_CLIENT/);
step('a 302 redirect to another host is blocked');

await second.close();
await page.close();
await browser.close();
