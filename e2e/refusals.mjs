// Every action of a client on a tab automation may not act on — a
// read-only site, and a tab a person holds from the live view — with a
// long timeout of its own: how long each takes to fail, and what it says.
// It writes <out>/report.json for the Go test (refusals_test.go). Usage:
//   node refusals.mjs <playwright|puppeteer> <endpoint> <read-only URL> <held URL> <file to upload> <out dir>
import { writeFileSync } from 'node:fs';

const [client, endpoint, readOnlyURL, heldURL, upload, out] = process.argv.slice(2);
const timeout = Number(process.env.REFUSALS_TIMEOUT || 30000);
const report = {};

// attempt runs fn and records whether it worked, how long it took, and
// its error's first lines. Past 40 s it is recorded as hanging.
const attempt = async (group, name, fn) => {
  report[group] ??= {};
  const start = Date.now();
  let r;
  try {
    let timer;
    const hang = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error('hung: no answer after 40 s')), 40000); });
    await Promise.race([Promise.resolve().then(fn), hang]).finally(() => clearTimeout(timer));
    r = { ok: true };
  } catch (e) {
    r = { ok: false, error: String(e.message || e).split('\n').slice(0, 6).join(' | ') };
  }
  r.ms = Date.now() - start;
  report[group][name] = r;
  console.log(`${group} ${name}: ${r.ok ? 'ok' : 'failed'} in ${r.ms} ms${r.ok ? '' : ': ' + r.error}`);
};

if (client === 'playwright') {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.connectOverCDP(endpoint, { timeout: 20000 });
  const context = browser.contexts()[0];
  // The pages the browser had are announced as they are set up.
  for (let i = 0; i < 100 && !context.pages().some((p) => p.url() === heldURL); i++) await new Promise((r) => setTimeout(r, 100));
  const held = context.pages().find((p) => p.url() === heldURL);
  if (!held) throw new Error('no page on the held tab: ' + context.pages().map((p) => p.url()).join(' '));
  const opts = { timeout };
  // The held tab first, while it is the one in front (a background tab
  // has no animation frames, which Playwright waits for).
  for (const group of ['held', 'readOnly']) {
    let page = held;
    if (group === 'readOnly') {
      page = await context.newPage();
      await page.goto(readOnlyURL);
    }
    page.setDefaultTimeout(timeout);
    await attempt(group, 'click', () => page.click('#change', opts));
    await attempt(group, 'dblclick', () => page.dblclick('#change', opts));
    await attempt(group, 'hover', () => page.hover('#change', opts));
    await attempt(group, 'tap', () => page.tap('#change', opts));
    await attempt(group, 'check', () => page.check('#agree', opts));
    await attempt(group, 'uncheck', () => page.uncheck('#agree', opts));
    await attempt(group, 'fill', () => page.fill('#name', 'filled', opts));
    await attempt(group, 'type', () => page.locator('#name').pressSequentially('typed', opts));
    await attempt(group, 'press', () => page.press('#name', 'Enter', opts));
    await attempt(group, 'focus', () => page.focus('#name', opts));
    await attempt(group, 'selectOption', () => page.selectOption('#pick', 'b', opts));
    await attempt(group, 'setInputFiles', () => page.setInputFiles('#file', upload, opts));
    await attempt(group, 'dragTo', () => page.locator('#change').dragTo(page.locator('#name'), opts));
    await attempt(group, 'locator.click', () => page.getByRole('button', { name: 'Change' }).click(opts));
    report[group + 'After'] = await page.locator('#out').textContent({ timeout: 5000 }).catch((e) => 'unreadable: ' + e.message.split('\n')[0]);
  }
  await browser.close();
} else {
  const { default: puppeteer } = await import('puppeteer-core');
  const browser = await puppeteer.connect({ browserURL: endpoint, defaultViewport: null, protocolTimeout: 60000 });
  const held = (await browser.pages()).find((p) => p.url() === heldURL);
  if (!held) throw new Error('no page on the held tab: ' + (await browser.pages()).map((p) => p.url()).join(' '));
  for (const group of ['held', 'readOnly']) {
    let page = held;
    if (group === 'readOnly') {
      page = await browser.newPage();
      await page.goto(readOnlyURL);
    }
    page.setDefaultTimeout(timeout);
    await attempt(group, 'click', () => page.click('#change'));
    await attempt(group, 'type', () => page.type('#name', 'typed'));
    await attempt(group, 'hover', () => page.hover('#change'));
    await attempt(group, 'select', () => page.select('#pick', 'b'));
    await attempt(group, 'focus', () => page.focus('#name'));
    await attempt(group, 'uploadFile', async () => {
      const input = await page.$('#file');
      await input.uploadFile(upload);
    });
    await attempt(group, 'keyboard.press', () => page.keyboard.press('Enter'));
    await attempt(group, 'mouse.click', () => page.mouse.click(50, 50));
    report[group + 'After'] = await page.$eval('#out', (e) => e.textContent).catch((e) => 'unreadable: ' + e.message.split('\n')[0]);
  }
  await browser.disconnect();
}
writeFileSync(`${out}/report.json`, JSON.stringify(report, null, 2));
console.log('done');
