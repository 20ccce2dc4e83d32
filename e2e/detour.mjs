// A Playwright page through what the person's Chrome does in passing: the
// person takes its tab to a page Chrome does not let an extension debug
// and back, the extension reloads, Chrome stops its worker. The test acts
// as the person and tells this script, one line at a time on stdin, when
// each step of it comes; the script answers on stdout.
//
//   script → "ready <url>"   its page is at url: the test finds the tab by it
//   test   → "round"         a goto, fill, click, evaluate and screenshot;
//                            → "round ok"
//   test   → "gap [goto]"    the tab is away: a screenshot and an evaluate
//                            (or a goto) are sent now, not awaited (relay
//                            only); → "sent"
//   test   → "back <url>"    the tab is back at url: the commands sent in the
//                            gap succeed; the page is the same, at url
//                            → "back ok"
//   test   → "close"         → "closing"; then the test closes the tab,
//                            and the page closes: "closed <ms>" (how long
//                            after "closing")
//   test   → "end"           → "navigations <json>": the main frame's
//                            navigations the page saw
//
// Usage: node detour.mjs <endpoint> <main origin> <relay|reference>
import assert from 'node:assert/strict';
import { createInterface } from 'node:readline';
import { chromium } from 'playwright-core';

const [endpoint, main, mode] = process.argv.slice(2);
const relay = mode === 'relay';
const browser = relay ? await chromium.connectOverCDP(endpoint, { timeout: 20000 }) : await chromium.connectOverCDP(endpoint);
const context = browser.contexts()[0];
const page = await context.newPage();
page.setDefaultTimeout(30000);
const start = `${main}/form.html?detour-${mode}-${Date.now()}`;
await page.goto(start);
const navigations = [];
page.on('framenavigated', (f) => {
  if (f === page.mainFrame()) navigations.push(f.url());
});
let closedAt = 0;
page.on('close', () => {
  closedAt = performance.now();
});
let disconnected = false;
browser.on('disconnected', () => {
  disconnected = true;
});
console.log(`ready ${start}`);

let round = 0;
let gap = null;
let closing = false;
const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  const [cmd, arg] = line.split(' ');
  // Once the test has closed the tab, its page is closed.
  if (cmd !== 'close' && !closing) {
    assert.equal(closedAt, 0, `the page closed before "${line}"`);
    assert.equal(disconnected, false, `the client was disconnected before "${line}"`);
  }
  if (cmd === 'round') {
    round++;
    await page.goto(`${main}/form.html?round-${mode}-${round}`);
    await page.fill('#name', `round ${round}`);
    await page.click('#go');
    assert.equal(await page.textContent('#out'), `Hello, round ${round}`);
    assert.equal(await page.evaluate(() => document.title), 'Form');
    assert.ok((await page.screenshot()).length > 100);
    console.log('round ok');
  } else if (cmd === 'gap') {
    if (relay) {
      const to = arg === 'goto' ? `${main}/form.html?gap-${round}` : null;
      // The client learns first that the page's contexts are gone, as it
      // would from Chrome when the tab navigates: an evaluation already
      // under way then ends with its context, here as there.
      await new Promise((r) => setTimeout(r, 250));
      // An evaluation beside a goto would end with the document the goto
      // replaces, as it does against Chrome itself: one or the other.
      gap = Promise.all([
        to ? null : page.evaluate(() => location.href),
        page.screenshot(),
        to ? page.goto(to).then(() => to) : null,
      ]);
      // Let them reach the relay while the tab is away.
      await new Promise((r) => setTimeout(r, 300));
    }
    console.log('sent');
  } else if (cmd === 'back') {
    let want = arg;
    if (gap !== null) {
      const [href, shot, went] = await gap;
      gap = null;
      assert.ok(shot.length > 100, 'the screenshot sent in the gap');
      if (went !== null) want = went;
      else assert.equal(href, arg, 'the evaluation sent in the gap ran in the page the tab came back to');
    }
    await page.waitForURL(want);
    await page.fill('#name', 'after');
    await page.click('#go');
    assert.equal(await page.textContent('#out'), 'Hello, after');
    console.log('back ok');
  } else if (cmd === 'close') {
    const asked = performance.now();
    closing = true;
    console.log('closing');
    while (closedAt === 0 && performance.now() - asked < 30000) await new Promise((r) => setTimeout(r, 5));
    assert.notEqual(closedAt, 0, 'the page did not close');
    console.log(`closed ${Math.max(0, Math.round(closedAt - asked))}`);
  } else if (cmd === 'end') {
    console.log(`navigations ${JSON.stringify(navigations)}`);
    break;
  }
}
lines.close();
await browser.close();
