// Playwright on sites of the three tiers, through the relay: what it may
// read and do on a full site, a read-only one and a blind one, and a page
// that leaves a blind site. It writes each attempt's outcome to
// <out>/report.json for the Go test, which judges it and searches it (and
// every frame the client received) for the blind page's content. Usage:
//   node tiers.mjs <scenario> <endpoint> <addresses, JSON> <out dir>
// scenario: sites | table (the README's table of a read-only site) | frames | carry
import { writeFileSync } from 'node:fs';
import { chromium } from 'playwright-core';

const [scenario, endpoint, addresses, out] = process.argv.slice(2);
const at = JSON.parse(addresses);
const step = (s) => console.log('ok -', s);
const report = {};
const act = { timeout: 2000 };

// attempt runs fn and records whether it worked, what it gave (its size,
// for a buffer) or the first line of its error. Some calls have no
// timeout of their own (evaluate): one that has not settled after 10 s is
// recorded as hanging.
const attempt = async (group, name, fn) => {
  report[group] ??= {};
  try {
    let timer;
    const hang = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error('hung: no answer after 10 s')), 10000); });
    const v = await Promise.race([Promise.resolve().then(fn), hang]).finally(() => clearTimeout(timer));
    report[group][name] = { ok: true, value: Buffer.isBuffer(v) ? `${v.length} bytes` : v ?? null };
  } catch (e) {
    report[group][name] = { ok: false, error: String(e.message || e).split('\n').slice(0, 12).join(' | ') };
  }
  const r = report[group][name];
  console.log(`${group} ${name}: ${r.ok ? 'ok' : 'failed: ' + r.error}`);
};

const browser = await chromium.connectOverCDP(endpoint, { timeout: 20000 });
const context = browser.contexts()[0];
const upload = `${out}/upload.txt`;
writeFileSync(upload, 'a file to upload\n');

// The page as it is now, read through Playwright's locators.
const state = async (page) => page.locator('#out').textContent({ timeout: 5000 }).catch((e) => 'unreadable: ' + e.message.split('\n')[0]);

switch (scenario) {
  case 'sites': {
    // Full: reads and acts.
    const full = await context.newPage();
    await full.goto(at.full);
    await attempt('full', 'title', () => full.title());
    await attempt('full', 'fill', () => full.fill('#name', 'hello'));
    await attempt('full', 'click', () => full.click('#change'));
    await attempt('full', 'evaluate', () => full.evaluate(() => document.getElementById('out').textContent));
    report.full.after = await state(full);
    step('full site');

    // Read-only: the reads work, the acts fail.
    const ro = await context.newPage();
    await ro.goto(at.readOnly);
    await attempt('readOnly', 'title', () => ro.title());
    await attempt('readOnly', 'url', () => ro.url());
    await attempt('readOnly', 'textContent', () => ro.textContent('#marker'));
    await attempt('readOnly', 'innerText', () => ro.innerText('#marker'));
    await attempt('readOnly', 'getAttribute', () => ro.getAttribute('#tick', 'data-secret'));
    await attempt('readOnly', 'count', () => ro.locator('input').count());
    await attempt('readOnly', 'isVisible', () => ro.isVisible('#change'));
    await attempt('readOnly', 'screenshot', () => ro.screenshot());
    await attempt('readOnly', 'ariaSnapshot', () => ro.locator('body').ariaSnapshot());
    await attempt('readOnlyActs', 'click', () => ro.click('#change', act));
    await attempt('readOnlyActs', 'fill', () => ro.fill('#name', 'typed by automation', act));
    await attempt('readOnlyActs', 'press', () => ro.press('#name', 'Enter', act));
    await attempt('readOnlyActs', 'goto', () => ro.goto(at.full, act));
    await attempt('readOnlyActs', 'evaluate', () => ro.evaluate(() => { document.body.innerHTML = ''; }));
    await attempt('readOnlyActs', 'setInputFiles', () => ro.setInputFiles('#file', upload, act));
    report.readOnlyAfter = { out: await state(ro), url: ro.url(), inputs: await ro.locator('input').count() };
    step('read-only site');

    // Blind: the person's tab on the blind site.
    const blind = context.pages().find((p) => p.url().startsWith(at.blindOrigin));
    if (!blind) throw new Error('no page on the blind site: ' + context.pages().map((p) => p.url()).join(' '));
    report.blindURL = blind.url();
    await attempt('blind', 'evaluate', () => blind.evaluate(() => document.body.innerText));
    await attempt('blind', 'screenshot', () => blind.screenshot({ timeout: 5000 }));
    await attempt('blind', 'click', () => blind.click('#change', act));
    await attempt('blind', 'title', () => blind.title());
    await attempt('blind', 'content', () => blind.content());
    await attempt('blind', 'textContent', () => blind.textContent('#marker', act));
    step('blind site');

    // It leaves: the same Page object works again.
    await attempt('left', 'goto', () => blind.goto(at.leaveTo).then((r) => r && r.status()));
    await attempt('left', 'textContent', () => blind.textContent('#marker', { timeout: 5000 }));
    await attempt('left', 'click', () => blind.click('#change', { timeout: 5000 }));
    await attempt('left', 'evaluate', () => blind.evaluate(() => document.getElementById('out').textContent));
    report.leftURL = blind.url();
    step('left the blind site');

    // A page of Playwright's own follows a link into the blind site, and
    // leaves it again.
    const own = await context.newPage();
    await own.goto(at.links);
    await attempt('wentBlind', 'click', () => own.click('#here'));
    await attempt('wentBlind', 'waitForURL', () => own.waitForURL(`${at.blindOrigin}/`, { timeout: 5000 }).then(() => own.url()));
    await attempt('wentBlind', 'evaluate', () => own.evaluate(() => document.body.innerText));
    await attempt('wentBlind', 'title', () => own.title());
    await attempt('wentBlind', 'textContent', () => own.textContent('#marker', act));
    await attempt('leftAgain', 'goto', () => own.goto(at.leaveAgainTo).then((r) => r && r.status()));
    await attempt('leftAgain', 'textContent', () => own.textContent('#marker', { timeout: 5000 }));
    await attempt('leftAgain', 'click', () => own.click('#change', { timeout: 5000 }));
    await attempt('leftAgain', 'evaluate', () => own.evaluate(() => document.getElementById('out').textContent));
    step('went blind by a link, and left again');
    await own.close();
    await full.close();
    await ro.close();
    break;
  }
  case 'table': {
    // The README's table of what works on a read-only site, cell by cell.
    // A page that came from a full site, so that it has somewhere to go
    // back to; the read-only site calls its API now and then.
    const page = await context.newPage();
    await page.goto(at.full);
    await page.goto(at.readOnly);
    const w = 'works';
    await attempt(w, 'locator.textContent', () => page.locator('#marker').textContent(act));
    await attempt(w, 'locator.innerText', () => page.locator('#marker').innerText(act));
    await attempt(w, 'locator.getAttribute', () => page.locator('#tick').getAttribute('data-secret', act));
    await attempt(w, 'locator.isVisible', () => page.locator('#change').isVisible());
    await attempt(w, 'locator.count', () => page.locator('input').count());
    await attempt(w, 'page.content()', () => page.content().then((c) => c.includes('id="marker"')));
    await attempt(w, 'page.title()', () => page.title());
    await attempt(w, 'page.screenshot()', () => page.screenshot(act));
    await attempt(w, 'aria snapshots', () => page.locator('body').ariaSnapshot(act));
    await attempt(w, 'page.url()', () => page.url());
    await attempt(w, 'network events', () => page.waitForEvent('response', { timeout: 5000 }).then((r) => r.url()));

    const r = 'refused';
    const d0 = 'depends';
    await attempt(r, 'click', () => page.click('#change', act));
    await attempt(r, 'fill', () => page.fill('#name', 'filled', act));
    await attempt(r, 'type', () => page.locator('#name').pressSequentially('typed', act));
    await attempt(r, 'press', () => page.press('#name', 'Enter', act));
    await attempt(r, 'check', () => page.check('#agree', act));
    await attempt(r, 'selectOption', () => page.selectOption('#pick', 'b', act));
    await attempt(r, 'setInputFiles', () => page.setInputFiles('#file', upload, act));
    await attempt(r, 'goto', () => page.goto(at.full, act));
    await attempt(r, 'reload', () => page.reload(act));
    await attempt(r, 'goBack', () => page.goBack(act));
    await attempt(r, 'setContent', () => page.setContent('<p id="out">set by setContent</p>', act));
    // A route whose handler answers (or changes) the site's next API call.
    const routed = async (how) => {
      let done;
      const handled = new Promise((resolve) => { done = resolve; });
      await page.route('**/tier/api*', (route) => how(route).then(() => done('done'), (e) => done('failed: ' + e.message)));
      const v = await Promise.race([handled, new Promise((resolve) => setTimeout(() => resolve('no request routed in 5 s'), 5000))]);
      await page.unroute('**/tier/api*').catch(() => {});
      if (v !== 'done') throw new Error(v);
      return v;
    };
    await attempt(r, 'route.fulfill', () => routed((route) => route.fulfill({ contentType: 'application/json', body: '{"content":"forged by a route"}' })));
    await attempt(r, 'route.continue with changes', () => routed((route) => route.continue({ headers: { ...route.request().headers(), 'x-forged': '1' } })));
    await attempt(d0, 'route.continue unchanged', () => routed((route) => route.continue()));
    await attempt(r, 'addInitScript', () => page.addInitScript(() => { window.initScriptRan = true; }));
    await attempt(r, 'setViewportSize', () => page.setViewportSize({ width: 500, height: 400 }));

    const d = 'depends';
    await attempt(d, 'page.evaluate of a pure function', () => page.evaluate(() => 6 * 7));
    await attempt(d, 'page.evaluate of a read', () => page.evaluate(() => document.getElementById('marker').textContent));
    await attempt(d, 'page.evaluate of an expression', () => page.evaluate('document.getElementById("marker").textContent'));

    report.after = {
      url: page.url(),
      out: await state(page),
      marker: await page.locator('#marker').textContent(act).catch((e) => 'unreadable: ' + e.message.split('\n')[0]),
      name: await page.locator('#name').inputValue(act).catch((e) => 'unreadable: ' + e.message.split('\n')[0]),
      agree: await page.locator('#agree').isChecked(act).catch((e) => 'unreadable: ' + e.message.split('\n')[0]),
      pick: await page.locator('#pick').inputValue(act).catch((e) => 'unreadable: ' + e.message.split('\n')[0]),
      api: await page.locator('#api').textContent(act).catch((e) => 'unreadable: ' + e.message.split('\n')[0]),
      viewport: page.viewportSize(),
    };
    step('the table');
    await page.close();
    break;
  }
  case 'frames': {
    // A blind site in a frame of a full page: out of process, and in
    // process (same site).
    for (const [group, parent] of [['outOfProcess', at.outOfProcess], ['inProcess', at.inProcess]]) {
      const page = await context.newPage();
      await attempt(group, 'goto', () => page.goto(parent, { timeout: 5000 }).then((r) => r && r.status()));
      await attempt(group, 'frame appears', async () => {
        for (let i = 0; i < 50 && page.frames().length < 2; i++) await page.waitForTimeout(100);
        return page.frames().map((f) => f.url());
      });
      const frame = page.frames().find((f) => f !== page.mainFrame());
      if (frame) {
        await attempt(group, 'frame.evaluate', () => frame.evaluate(() => document.title + ' | ' + document.body.innerText));
        await attempt(group, 'frame.textContent', () => frame.textContent('#marker', act));
        await attempt(group, 'frame.click', () => frame.click('#change', act).then(() => frame.textContent('#out', act)));
      }
      await attempt(group, 'page.click', () => page.click('#pchange', act).then(() => page.textContent('#pout', act)));
      await page.close();
    }
    step('frames');
    break;
  }
  case 'carry': {
    // A client sets its page up on a full site — headers, a user agent
    // (on a session of its own), a script for new documents, a bypassed
    // content security policy — and the page is then sent on to a blind
    // site: by a redirect, by a link it follows, by its script. Whether
    // any of it reached the blind site, the Go test asks the site.
    const page = await context.newPage();
    await page.setExtraHTTPHeaders({ 'X-Planted': at.mark });
    await page.addInitScript({ content: at.script });
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.setUserAgentOverride', { userAgent: 'planted-agent ' + at.mark });
    await cdp.send('Page.setBypassCSP', { enabled: true });
    for (const [name, way] of Object.entries(at.ways)) {
      await page.goto(at.full);
      await attempt('carry', name, () => page.goto(way, { timeout: 5000 }).then((r) => r && r.status()));
      // The page goes on by itself (a link, a script): time for it.
      await page.waitForTimeout(1500);
    }
    // Back on a full site, the set-up is back: the header reaches it.
    await page.goto(at.full);
    await attempt('carry', 'back', () => page.goto(at.back).then((r) => r && r.status()));
    step('carry');
    break;
  }
  default:
    throw new Error('unknown scenario ' + scenario);
}

writeFileSync(`${out}/report.json`, JSON.stringify(report, null, 2));
await browser.close();
step('done');
