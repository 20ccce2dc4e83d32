// Only the person acts as the person: the agent against the person key.
// Usage:
//   node personkey.mjs <person's link> <CDP endpoint> <relay base> <main origin> <other origin> <screenshot dir>
// The agent is Playwright on the CDP endpoint plus whatever else its own
// process can do with the relay's address: HTTP requests, viewer sockets
// of its own (ws), its page in the shared browser. The person is a second
// headless Chromium that opens the live view, first without the key
// (view-only), then with the link serve printed. Every attack is checked
// and reported on its own ("refused -" or "NOT REFUSED -"), so that a run
// against a relay without the person key shows each one that gets through.
import assert from 'node:assert/strict';
import http from 'node:http';
import { chromium } from 'playwright-core';
import WebSocket from 'ws';

const [link, endpoint, relay, main, other, shots] = process.argv.slice(2);
const relayOrigin = new URL(relay).origin;
const wsBase = relay.replace(/^http/, 'ws');
const step = (s) => console.log('ok -', s);
const failures = [];
function refused(name, ok, detail = '') {
  if (ok) {
    console.log('refused -', name, detail);
  } else {
    failures.push(`${name}: ${detail}`);
    console.log('NOT REFUSED -', name, detail);
  }
}
// expect checks a step of the person's; a miss is reported and counted,
// and the run goes on.
function expect(name, ok, detail = '') {
  if (!ok) failures.push(`${name}: ${detail}`);
  console.log(ok ? 'ok -' : 'FAILED -', name, ok ? '' : detail);
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- the agent's own means

async function agentHTTP(method, path, headers = {}) {
  const r = await fetch(relay + path, { method, headers });
  return { status: r.status, body: (await r.text()).slice(0, 160) };
}

async function status() {
  const r = await fetch(`${relay}/v1/instances`);
  return (await r.json()).instances;
}

async function defaultInstance() {
  return (await status()).find((i) => i.default);
}

// agentViewer opens a viewer socket of the agent's own, with the Origin
// given (none: a program's), and reads its hello; a refused handshake
// resolves to its status.
function agentViewer(origin, protocols) {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${wsBase}/viewer`, protocols, origin ? { origin } : {});
    const msgs = [];
    const waiters = [];
    ws.on('unexpected-response', (req, res) => {
      // Taken over by this listener, the refused request is ours to end.
      req.destroy();
      resolve({ status: res.statusCode });
    });
    ws.on('error', (e) => resolve({ status: 0, error: e.message }));
    ws.on('message', (data, binary) => {
      // ws 7 (what e2e/node_modules has) gives text as a string and a
      // frame's JPEG as a Buffer; ws 8 says which with its second argument.
      if (binary === true || (binary === undefined && typeof data !== 'string')) return;
      const m = JSON.parse(data.toString());
      msgs.push(m);
      for (const w of [...waiters]) {
        if (w.pred(m)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(m);
        }
      }
      if (m.type === 'hello') {
        resolve({
          status: 101,
          hello: m,
          msgs,
          send: (x) => ws.send(JSON.stringify(x)),
          // next resolves with the first message, past or coming, that
          // pred accepts, or null after a while.
          next: (pred, ms = 5000) => {
            const seen = msgs.find(pred);
            if (seen) {
              msgs.splice(msgs.indexOf(seen), 1);
              return Promise.resolve(seen);
            }
            return new Promise((res) => {
              const w = { pred, resolve: res };
              waiters.push(w);
              setTimeout(() => {
                if (waiters.includes(w)) {
                  waiters.splice(waiters.indexOf(w), 1);
                  res(null);
                }
              }, ms);
            });
          },
          close: () => ws.close(),
        });
      }
    });
  });
}

// tryAsViewer sends a person's message on the agent's own sockets (no
// Origin, and the relay's Origin forged) and reports each answer.
async function tryAsViewer(what, msg, stillRefused) {
  for (const [label, origin] of [
    ['no Origin', null],
    ['forged Origin', relayOrigin],
  ]) {
    const v = await agentViewer(origin);
    if (v.status !== 101) {
      refused(`${what}, the agent's viewer socket (${label})`, true, `handshake ${v.status}`);
      continue;
    }
    if (msg.type === 'take-control') {
      v.send({ type: 'subscribe', instance: msg.instance, tab: msg.tab });
      await v.next((m) => m.type === 'status' || m.type === 'error');
    }
    v.send({ ...msg, id: 99 });
    const answer = await v.next((m) => m.type === 'error' && m.id === 99, 3000);
    await sleep(200);
    const ok = !v.hello.interactive && answer !== null && (await stillRefused());
    refused(`${what}, the agent's viewer socket (${label})`, ok, `interactive ${v.hello.interactive}; answer ${answer ? answer.message : 'none'}`);
    v.close();
  }
}

// ---- the run

const auto = await chromium.connectOverCDP(endpoint, { timeout: 20000 });
const page = await auto.contexts()[0].newPage();
const warnings = [];
page.on('console', (m) => {
  if (m.type() === 'warning') warnings.push(m.text());
});
await page.goto(`${main}/`);
const inst = (await defaultInstance()).id;
step(`automation: a tab of its own on instance ${inst}`);

const personBrowser = await chromium.launch({
  executablePath: process.env.CHROME_PATH || '/usr/lib/chromium/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
try {
  const problems = [];
  const watch = async (vp) => {
    vp.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    await vp.waitForSelector('#conn[data-state="open"]');
    const tab = vp.locator(`.tab[data-url="${main}/"]`);
    await tab.waitFor({ timeout: 10000 });
    await tab.click();
    await vp.waitForFunction(() => Number(document.getElementById('screen').dataset.frames) > 0, null, { timeout: 15000 });
  };
  const shot = async (vp, name) => {
    await vp.waitForTimeout(200);
    await vp.screenshot({ path: `${shots}/${name}.png` });
  };

  // ---- Without the key: the live view shows the tabs, view-only, and
  // says how the person acts.
  // One profile, as a person's browser is: its pages share the origin's
  // storage (Playwright's browser.newPage would give each its own).
  const person = await personBrowser.newContext({ viewport: { width: 1440, height: 900 } });
  const seen = await person.newPage();
  await seen.goto(`${relay}/`);
  await watch(seen);
  await seen.waitForSelector('#viewonly:not([hidden])', { timeout: 5000 }).catch(() => {});
  const hint = (await seen.locator('#viewonly-text').textContent({ timeout: 1000 }).catch(() => '')) || '';
  refused('the live view without the key', (await seen.locator('.brake').count()) === 0 && (await seen.isDisabled('#take')) && /person key/.test(hint), `hint: ${hint}`);
  await shot(seen, 'person-viewonly');

  // ---- The person opens the link serve printed.
  const vp = await person.newPage();
  await vp.goto(link);
  await watch(vp);
  await vp.waitForSelector('#mode[data-mode="interactive"]', { timeout: 5000 });
  expect('the key is out of the address bar', vp.url() === `${relay}/`, vp.url());
  const own = await vp.context().newCDPSession(vp);
  const { entries } = await own.send('Page.getNavigationHistory');
  await own.detach();
  expect("the key is in none of the tab's history entries", !entries.some((e) => e.url.includes('#person') || e.url.includes('cdpp_')), JSON.stringify(entries.map((e) => e.url)));
  expect('the page kept the key', await vp.evaluate(() => Object.values(localStorage).some((v) => v.startsWith('cdpp_'))));
  step('person: the link opened the live view interactive');
  await shot(vp, 'person-key');

  // An instance the person paired besides the default one (a second
  // browser, say): what the agent would like to remove. The test removes
  // it with the person key once this script is done.
  const minted = await fetch(`${relay}/v1/instances`, { method: 'POST' }).then((r) => r.json());
  const removable = minted.instanceId;
  console.log(`removable: ${removable}`);

  // ---- Stop, in the middle of a loop.
  let done = 0;
  let failure = null;
  const loop = (async () => {
    for (;;) {
      try {
        await page.evaluate(() => {
          window.__runs = (window.__runs || 0) + 1;
        });
        done++;
      } catch (e) {
        failure = e;
        return;
      }
    }
  })();
  while (done < 10) await sleep(5);
  // The default instance's brake: the instance minted above has one too.
  const brake = (state) => vp.locator(`.brake.${state}[data-instance="${inst}"]`);
  await brake('stop').click();
  await loop;
  assert.match(failure.message, /a person stopped the automation/);
  await brake('resume').waitFor();
  step(`stop: the automation's loop failed: ${failure.message.split('\n')[0]}`);

  const stopped = async () => (await defaultInstance()).stopped === true;
  // The agent's own HTTP requests.
  for (const [label, headers] of [
    ['no Origin', {}],
    ['forged Origin', { Origin: relayOrigin, 'Sec-Fetch-Site': 'same-origin' }],
    ['a key of its own', { Authorization: 'Bearer cdpp_' + 'A'.repeat(43) }],
  ]) {
    const r = await agentHTTP('POST', `/v1/instances/${inst}/resume`, headers);
    refused(`HTTP resume (${label})`, r.status === 403 && (await stopped()), `${r.status} ${r.body}`);
  }
  for (const [label, headers] of [
    ['no Origin', {}],
    ['forged Origin', { Origin: relayOrigin }],
  ]) {
    const r = await agentHTTP('DELETE', `/v1/instances/${removable}`, headers);
    const still = (await status()).some((i) => i.id === removable);
    refused(`HTTP delete of an instance (${label})`, r.status === 403 && still, `${r.status} ${r.body}`);
  }
  // Its own viewer sockets.
  await tryAsViewer('resume', { type: 'resume', instance: inst }, stopped);
  const fromItsPage = await agentViewer(main);
  refused("a viewer socket with the Origin of the agent's page (same host, another port)", fromItsPage.status === 403, `handshake ${fromItsPage.status}`);
  const keyed = await agentViewer(null, ['cdprelay-viewer', 'cdprelay-person.cdpp_' + 'B'.repeat(43)]);
  refused('a viewer socket with a key of its own', keyed.status === 101 && !keyed.hello.interactive && keyed.hello.keyRefused === true, JSON.stringify(keyed.hello));
  if (keyed.close) keyed.close();

  // (Against a relay that let the agent resume, there is nothing left to.)
  if (await stopped()) await brake('resume').click();
  await brake('stop').waitFor();
  // The relay's own word that it runs again, beside the page's button.
  for (let i = 0; (await stopped()) && i < 200; i++) await sleep(50);
  await page.evaluate(() => 1);
  step('resume: the person resumed, the automation goes on');

  // From its page in the shared browser: another origin of the same host.
  const fromPage = await page.evaluate(
    async ([relay, inst]) => {
      await fetch(`${relay}/v1/instances/${inst}/stop`, { method: 'POST', mode: 'no-cors' }).catch(() => {});
      const ws = new WebSocket(`${relay.replace(/^http/, 'ws')}/viewer`);
      return new Promise((res) => {
        ws.onopen = () => res('opened');
        ws.onerror = () => res('refused');
      });
    },
    [relay, inst],
  );
  refused("the agent's page: a stop by fetch and a viewer socket", fromPage === 'refused' && !(await stopped()), `socket ${fromPage}, stopped ${await stopped()}`);

  // ---- An asked navigation: the agent cannot approve its own.
  const nav = page.goto(`${other}/`).then(
    () => null,
    (e) => e,
  );
  const card = vp.locator('.approval', { hasText: `navigate to ${other}/` });
  await card.waitFor({ timeout: 10000 });
  const approval = (await defaultInstance()).approvals[0];
  const pending = async () => ((await defaultInstance()).approvals || []).some((a) => a.id === approval.id);
  await tryAsViewer('approve', { type: 'approve', instance: inst, approval: approval.id }, pending);
  await tryAsViewer('deny', { type: 'deny', instance: inst, approval: approval.id }, pending);
  if (await pending()) await card.locator('.approve').click();
  assert.equal(await nav, null);
  assert.equal(new URL(page.url()).origin, other);
  step('approval: the person approved, the navigation went on');

  // ---- A dialog the automation leaves open: the agent cannot answer it
  // as the person.
  await page.goto(`${main}/confirm.html`);
  page.on('dialog', () => {}); // listened to, not answered
  await vp.locator(`.tab[data-url="${main}/confirm.html"]`).waitFor({ timeout: 10000 });
  await page.evaluate(() => window.ask());
  await vp.waitForSelector('#dialog:not([hidden])', { timeout: 10000 });
  const tabOf = async () => (await defaultInstance()).tabs.find((t) => t.url === `${main}/confirm.html`);
  const dialogTab = await tabOf();
  const open = async () => !!(await tabOf()).dialog;
  await tryAsViewer('answer-dialog', { type: 'answer-dialog', instance: inst, tab: dialogTab.tabId, accept: false }, open);
  if (await open()) {
    await vp.click('#dialog-accept');
    await page.waitForFunction(() => document.getElementById('out').textContent === 'deleted', null, { timeout: 10000 });
  }
  step('dialog: the person accepted it');

  // ---- Taking control: the agent cannot; the person can.
  await page.goto(`${main}/`);
  await vp.locator(`.tab[data-url="${main}/"]`).click();
  await vp.waitForFunction(() => Number(document.getElementById('screen').dataset.frames) > 0, null, { timeout: 15000 });
  const mainTab = (await defaultInstance()).tabs.find((t) => t.url === `${main}/`);
  const free = async () => !(await defaultInstance()).tabs.find((t) => t.tabId === mainTab.tabId).controlledBy;
  await tryAsViewer('take-control', { type: 'take-control', instance: inst, tab: mainTab.tabId }, free);
  await vp.click('#take');
  await vp.waitForSelector('body[data-holding="true"]');
  const cdp = await page.context().newCDPSession(page);
  const raw = await cdp.send('Input.dispatchMouseEvent', { type: 'mouseMoved', x: 5, y: 5 }).then(
    () => null,
    (e) => e,
  );
  assert.ok(raw && /a person has taken control of this tab/.test(raw.message), `the automation's input during the take-over: ${raw}`);
  await cdp.detach();
  await vp.click('#handback');
  await vp.waitForSelector('body[data-holding="false"]');
  step('take-over: the person took the tab, the automation was refused, the person handed it back');

  // ---- The key stays with the page: the view-only tab, reloaded, is the
  // person's now; and it is the relay origin's alone, not another port's.
  await seen.reload();
  await seen.waitForSelector('#conn[data-state="open"]');
  await seen.waitForFunction(() => document.getElementById('mode').dataset.mode, null, { timeout: 10000 });
  expect('the view-only page, reloaded, is the person\'s (the key kept)', (await seen.getAttribute('#mode', 'data-mode')) === 'interactive');
  const heard = [];
  const spy = http.createServer((req, res) => {
    heard.push(JSON.stringify(req.headers) + req.url);
    res.setHeader('Content-Type', 'text/html');
    res.end('<p>another port of the same host</p>');
  });
  await new Promise((r) => spy.listen(0, '127.0.0.1', r));
  const elsewhere = await person.newPage();
  await elsewhere.goto(`http://127.0.0.1:${spy.address().port}/`);
  const there = await elsewhere.evaluate(() => JSON.stringify({ cookie: document.cookie, storage: { ...localStorage } }));
  spy.close();
  const key = new URL(link).hash.slice('#person='.length);
  if (!key.startsWith('cdpp_')) throw new Error(`no person key in the link ${link}`);
  refused('the key on another port of the relay\'s host (a server the agent could run)', !heard.some((h) => h.includes(key)) && !there.includes(key), `requests ${heard.length}, page sees ${there}`);

  // The agent's cookie and storage reads find nothing of the person's.
  for (const m of ['Storage.getCookies', 'Network.getAllCookies']) {
    const c = await page.context().newCDPSession(page);
    const r = await c.send(m).then(
      (v) => JSON.stringify(v),
      (e) => `error: ${e.message}`,
    );
    await c.detach();
    refused(`${m} by the agent`, !r.includes(key) && !r.includes(key.slice(5)), r.slice(0, 120));
  }
  assert.deepEqual(problems, []);
} finally {
  await personBrowser.close();
}
await page.close();
await auto.close();
if (failures.length) {
  console.log(`${failures.length} attack(s) not refused:\n  ${failures.join('\n  ')}`);
  process.exit(1);
}
step('every attack was refused');
