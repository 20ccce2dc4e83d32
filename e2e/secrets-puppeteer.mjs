// Puppeteer against the logged-in test site (internal/testenv's Site),
// through the relay: request interception with the headers it reads, and
// a secret typed by reference. It writes what it saw to <out>/report.json
// for the Go test. Usage:
//   node secrets-puppeteer.mjs <scenario> <endpoint> <main origin> <other origin> <out dir>
// scenario: all
import { writeFileSync } from 'node:fs';
import puppeteer from 'puppeteer-core';

const [, endpoint, main, , out] = process.argv.slice(2);
const step = (s) => console.log('ok -', s);
const report = { reads: [] };

const browser = await puppeteer.connect({ browserURL: endpoint, defaultViewport: null, protocolTimeout: 20000 });
const page = await browser.newPage();

// Request interception: each request continued with the headers
// request.headers() gave.
await page.setRequestInterception(true);
const onRequest = (req) => {
  report.reads.push({ url: req.url(), headers: req.headers() });
  if (req.url().includes('/secure/api')) req.continue({ headers: req.headers() });
  else req.continue();
};
const onResponse = (resp) => report.reads.push({ url: resp.url(), response: resp.headers() });
page.on('request', onRequest).on('response', onResponse);
await page.goto(`${main}/secure/home`);
report.state = await page.$eval('#state', (e) => e.textContent);
report.api = await page.evaluate(() => fetch('/secure/api?puppeteer').then((r) => r.text()));
report.rotate = await page.evaluate(() => fetch('/secure/rotate').then((r) => r.text().then(() => r.status)));
report.after = await page.evaluate(() => fetch('/secure/api?after').then((r) => r.text()));
page.off('request', onRequest).off('response', onResponse);
await page.setRequestInterception(false);
step(`intercepted: ${report.state}, ${report.api}, ${report.after}`);

// The secret, typed with keyboard.sendCharacter (Input.insertText).
await page.goto(`${main}/secure/login.html`);
await page.focus('#password');
await page.keyboard.sendCharacter('{{secret:site}}');
report.value = await page.$eval('#password', (e) => e.value);
await Promise.all([page.waitForNavigation(), page.click('#submit')]);
report.login = await page.$eval('#state', (e) => e.textContent);
step(`sendCharacter: ${report.login}`);

// page.type sends one key per character: no reference is ever whole.
await page.goto(`${main}/secure/login.html`);
await page.type('#password', '{{secret:site}}');
report.typed = await page.$eval('#password', (e) => e.value);
step(`page.type: ${report.typed}`);

writeFileSync(`${out}/report.json`, JSON.stringify(report, null, 1));
await page.close();
await browser.disconnect();
