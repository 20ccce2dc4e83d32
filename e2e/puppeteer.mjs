// Drives the relay with unmodified puppeteer-core, which never downloads a
// browser. Usage:
//   node puppeteer.mjs browserURL|browserWSEndpoint <endpoint> <main origin>
import assert from 'node:assert/strict';
import puppeteer from 'puppeteer-core';

const [kind, endpoint, main] = process.argv.slice(2);
const step = (s) => console.log('ok -', s);

const browser = await puppeteer.connect({ [kind]: endpoint, defaultViewport: null, protocolTimeout: 20000 });
const version = await browser.version();
assert.match(version, /^(Headless)?Chrome\/\d+\.\d+\.\d+\.\d+$/);
step(`connected with ${kind}, ${version}`);

const before = (await browser.pages()).length;
assert.ok(before >= 1, 'the shared tab is a page');

const page = await browser.newPage();
await page.goto(`${main}/form.html`);
assert.equal(await page.title(), 'Form');
await page.type('#name', 'relay');
await page.click('#go');
assert.equal(await page.$eval('#out', (e) => e.textContent), 'Hello, relay');
step('newPage, goto, title, type, click');

assert.equal(await page.evaluate(() => 6 * 7), 42);
const shot = await page.screenshot();
assert.ok(shot.length > 1000 && shot[0] === 0x89 && shot[1] === 0x50, 'a PNG');
step(`evaluate, screenshot ${shot.length} bytes`);

// A raw CDP session of its own on the page, beside the page's.
const session = await page.createCDPSession();
const { result } = await session.send('Runtime.evaluate', { expression: 'document.title' });
assert.equal(result.value, 'Form');
await session.detach();
assert.equal(await page.evaluate(() => document.title), 'Form');
step('page.createCDPSession(), detach; the page goes on');

const second = await browser.newPage();
await second.goto(`${main}/`);
assert.equal(await second.title(), 'cdprelay test page');
assert.equal((await browser.pages()).length, before + 2);
await second.close();
await page.close();
assert.equal((await browser.pages()).length, before);
step('second page opened, both closed');

await browser.disconnect();
step('disconnect');
