// Puppeteer on a read-only site, through the relay: the README's table of
// what works there, cell by cell. It writes each attempt's outcome and the
// page as it is afterwards to <out>/report.json for the Go test. Usage:
//   node tiers-puppeteer.mjs table <endpoint> <addresses, JSON> <out dir>
import { writeFileSync } from 'node:fs';
import puppeteer from 'puppeteer-core';

const [, endpoint, addresses, out] = process.argv.slice(2);
const at = JSON.parse(addresses);
const step = (s) => console.log('ok -', s);
const report = {};

// attempt runs fn and records whether it worked, what it gave (its size,
// for a buffer) or the first lines of its error; one that has not settled
// after 10 s is recorded as hanging.
const attempt = async (group, name, fn) => {
  report[group] ??= {};
  try {
    let timer;
    const hang = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error('hung: no answer after 10 s')), 10000); });
    const v = await Promise.race([Promise.resolve().then(fn), hang]).finally(() => clearTimeout(timer));
    report[group][name] = { ok: true, value: v instanceof Uint8Array ? `${v.length} bytes` : v ?? null };
  } catch (e) {
    report[group][name] = { ok: false, error: String(e.message || e).split('\n').slice(0, 6).join(' | ') };
  }
  const r = report[group][name];
  console.log(`${group} ${name}: ${r.ok ? 'ok' : 'failed: ' + r.error}`);
};

const browser = await puppeteer.connect({ browserURL: endpoint, defaultViewport: null, protocolTimeout: 20000 });
const page = await browser.newPage();
await page.goto(at.full);
await page.goto(at.readOnly);

const w = 'works';
await attempt(w, '$eval', () => page.$eval('#marker', (e) => e.textContent));
await attempt(w, '$$eval', () => page.$$eval('input', (es) => es.length));
await attempt(w, 'page.content()', () => page.content().then((c) => c.includes('id="marker"')));
await attempt(w, 'page.screenshot()', () => page.screenshot());
await attempt(w, 'page.title()', () => page.title());

const r = 'refused';
await attempt(r, 'click', () => page.click('#change'));
await attempt(r, 'type', () => page.type('#name', 'typed'));
await attempt(r, 'goto', () => page.goto(at.full, { timeout: 5000 }));
await attempt(r, 'reload', () => page.reload({ timeout: 5000 }));
await attempt(r, 'setContent', () => page.setContent('<p id="out">set by setContent</p>', { timeout: 5000 }));
// Interception: each of the site's API calls is answered (or changed) by
// the client; Puppeteer reports no error of its own for either, so what
// counts is what the page and the site got.
const intercepted = async (how) => {
  await page.setRequestInterception(true);
  const done = new Promise((resolve) => {
    const on = (req) => {
      if (!req.url().includes('/tier/api')) {
        req.continue().catch(() => {});
        return;
      }
      page.off('request', on);
      how(req).then(() => resolve('done'), (e) => resolve('failed: ' + e.message));
    };
    page.on('request', on);
  });
  const v = await Promise.race([done, new Promise((resolve) => setTimeout(() => resolve('no request in 5 s'), 5000))]);
  await page.setRequestInterception(false);
  if (v !== 'done') throw new Error(v);
  return v;
};
await attempt(r, 'request.respond', () => intercepted((req) => req.respond({ contentType: 'application/json', body: '{"content":"forged by respond"}' })));
await attempt(r, 'request.continue with changes', () => intercepted((req) => req.continue({ headers: { ...req.headers(), 'x-forged': '1' } })));
await attempt(r, 'evaluateOnNewDocument', () => page.evaluateOnNewDocument(() => { window.initScriptRan = true; }));
await attempt(r, 'setViewport', () => page.setViewport({ width: 500, height: 400 }));

const d = 'depends';
await attempt(d, 'page.evaluate of a pure function', () => page.evaluate(() => 6 * 7));
await attempt(d, 'page.evaluate of a read', () => page.evaluate(() => document.getElementById('marker').textContent));

const read = (sel, fn) => page.$eval(sel, fn).catch((e) => 'unreadable: ' + e.message.split('\n')[0]);
report.after = {
  url: page.url(),
  out: await read('#out', (e) => e.textContent),
  marker: await read('#marker', (e) => e.textContent),
  name: await read('#name', (e) => e.value),
  api: await read('#api', (e) => e.textContent),
};
step('the table');
await page.close();
writeFileSync(`${out}/report.json`, JSON.stringify(report, null, 2));
await browser.disconnect();
step('done');
