// The soak's automation (tools/soak): unmodified playwright-core
// through connectOverCDP, repeating goto, evaluate, click, newPage and
// page close until the time is up, reconnecting whenever the relay closes
// it. Every operation has a deadline and prints one JSON line:
//   {"op":"evaluate","ok":true,"ms":3.1,"count":7,"n":1}
//   {"op":"goto","ok":false,"ms":12.0,"error":"..."}
// "hang": true marks an operation that neither settled nor failed before
// its deadline. Evaluations count in the page (window.__soakCount) and
// remember each operation's id, so that the soak can tell a command run
// twice from one that failed. A page that closes without the client
// closing it, and a connection the relay ends, print an event line:
//   {"op":"page closed","event":true,"ok":true,"ms":0,"url":"..."}
//   {"op":"disconnected","event":true,"ok":true,"ms":0}
// so that the soak can tell which fault cost the client its page. Usage:
//   node soak-client.mjs <endpoint> <page URL> <seconds> <deadline ms>
import { chromium } from 'playwright-core';

const [endpoint, pageURL, seconds, deadlineArg] = process.argv.slice(2);
const end = Date.now() + Number(seconds) * 1000;
const deadline = Number(deadlineArg);
// Playwright's own timeouts fire first, so that a slow step is reported by
// Playwright; the deadline catches a command that nobody ever answered.
const pwTimeout = Math.max(1000, Math.floor(deadline * 0.75));
const ours = 'soak-client';

let browser = null;
let context = null;
let page = null;
// The page's counters as last read; null when unknown (a failed step may or
// may not have run).
let count = null;
let clicks = null;
let opID = 0;
// Pages the client closes itself: their close is not an event.
const closing = new WeakSet();
// Set when the run is over and the client closes its connection.
let ending = false;

class Hang extends Error {}

const emit = (rec) => process.stdout.write(JSON.stringify(rec) + '\n');
const firstLine = (e) => String((e && e.message) || e).split('\n')[0].slice(0, 300);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function op(name, fn) {
  const id = ++opID;
  const t0 = performance.now();
  let timer;
  const guard = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Hang(`no answer within ${deadline} ms`)), deadline);
  });
  try {
    const extra = await Promise.race([fn(id), guard]);
    emit({ op: name, ok: true, ms: +(performance.now() - t0).toFixed(1), ...extra });
    return true;
  } catch (e) {
    const hang = e instanceof Hang;
    emit({ op: name, ok: false, ms: +(performance.now() - t0).toFixed(1), hang, error: firstLine(e) });
    if (hang) forget();
    return false;
  } finally {
    clearTimeout(timer);
  }
}

// forget drops a connection that left a step hanging: nothing on it can be
// trusted any more.
function forget() {
  const b = browser;
  browser = context = page = null;
  count = clicks = null;
  if (b) b.close().catch(() => {});
}

// watch reports a page of b that closes under the client: the person
// closed its tab, or the relay ended its target. A page closed by the
// client itself, or with a connection it dropped, is not reported.
function watch(b, p) {
  p.on('close', () => {
    if (browser === b && !ending && !closing.has(p)) emit({ op: 'page closed', event: true, ok: true, ms: 0, url: p.url() });
  });
}

async function connect() {
  const b = await chromium.connectOverCDP(endpoint, { timeout: pwTimeout });
  b.on('disconnected', () => {
    if (browser === b) {
      if (!ending) emit({ op: 'disconnected', event: true, ok: true, ms: 0 });
      browser = context = page = null;
      count = clicks = null;
    }
  });
  browser = b;
  context = b.contexts()[0];
  for (const p of context.pages()) watch(b, p);
  context.on('page', (p) => watch(b, p));
  // Pages left by an earlier connection of ours: close them, or every
  // reconnect would leave tabs behind.
  let closed = 0;
  for (const p of context.pages()) {
    if (p.url().includes(ours)) {
      closing.add(p);
      await p.close().catch(() => {});
      closed++;
    }
  }
  return { pages: context.pages().length, closedStale: closed };
}

async function newPage() {
  const p = await context.newPage();
  p.setDefaultTimeout(pwTimeout);
  p.setDefaultNavigationTimeout(pwTimeout);
  await p.goto(`${pageURL}?${ours}=0`);
  page = p;
  count = 0;
  clicks = 0;
  return {};
}

async function gotoStep(id) {
  await page.goto(`${pageURL}?${ours}=${id}`);
  count = 0;
  clicks = 0;
  return {};
}

async function evaluateStep(id) {
  const before = count;
  count = null;
  const r = await page.evaluate((opID) => {
    const seen = (window.__soakSeen ??= {});
    seen[opID] = (seen[opID] || 0) + 1;
    window.__soakCount = (window.__soakCount || 0) + 1;
    return { n: seen[opID], count: window.__soakCount };
  }, id);
  count = r.count;
  return { n: r.n, count: r.count, expected: before === null ? null : before + 1 };
}

async function clickStep() {
  const before = clicks;
  clicks = null;
  await page.click('#inc');
  const got = await page.evaluate(() => window.__clicks || 0);
  clicks = got;
  return { clicks: got, expected: before === null ? null : before + 1 };
}

async function extraPage() {
  const p = await context.newPage();
  p.setDefaultTimeout(pwTimeout);
  await p.goto(`${pageURL}?${ours}=extra`);
  closing.add(p);
  await p.close();
  return {};
}

const steps = [
  ['goto', gotoStep],
  ['evaluate', evaluateStep],
  ['click', clickStep],
  ['evaluate', evaluateStep],
  ['newPage+close', extraPage],
  ['evaluate', evaluateStep],
  ['click', clickStep],
];

let i = 0;
while (Date.now() < end) {
  if (browser === null) {
    if (!(await op('connect', connect))) await sleep(500);
    continue;
  }
  if (page === null || page.isClosed()) {
    if (!(await op('newPage', newPage))) await sleep(200);
    continue;
  }
  const [name, fn] = steps[i++ % steps.length];
  await op(name, fn);
}
ending = true;
if (browser) await Promise.race([browser.close().catch(() => {}), sleep(5000)]);
emit({ op: 'end', ok: true, ms: 0 });
process.exit(0);
