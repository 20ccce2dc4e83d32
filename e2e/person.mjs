// The person in charge, in a real browser, beside a real automation.
// Usage:
//   node person.mjs <live view URL> <CDP endpoint> <main origin> <other origin> <screenshot dir>
// Playwright drives a tab through the relay; a second, ordinary headless
// Chromium opens the live view and is used as a person would: it stops the
// automation in the middle of a loop and resumes it, answers a dialog the
// automation leaves open, approves one navigation and denies another, and
// approves a click on a submit button, whose label the card shows. The
// relay's policy (set by the test) asks before navigations to the other
// origin and before a click on a form's submit control.
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

const [liveURL, endpoint, main, other, shots] = process.argv.slice(2);
const step = (s) => console.log('ok -', s);
const report = {};

const auto = await chromium.connectOverCDP(endpoint, { timeout: 20000 });
const page = await auto.contexts()[0].newPage();
const warnings = [];
page.on('console', (m) => { if (m.type() === 'warning') warnings.push(m.text()); });
await page.goto(`${main}/`);
step('automation: a tab of its own');

const viewerBrowser = await chromium.launch({
  executablePath: process.env.CHROME_PATH || '/usr/lib/chromium/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
try {
  const vp = await viewerBrowser.newPage({ viewport: { width: 1440, height: 900 } });
  const problems = [];
  vp.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  await vp.goto(liveURL);
  await vp.waitForSelector('#conn[data-state="open"]');
  const tab = vp.locator(`.tab[data-url="${main}/"]`);
  await tab.waitFor({ timeout: 10000 });
  await tab.click();
  await vp.waitForFunction(() => Number(document.getElementById('screen').dataset.frames) > 0, null, { timeout: 15000 });
  step('live view: watching the automation\'s tab');
  const shot = async (name) => {
    await vp.waitForTimeout(150); // the last list and frame painted
    await vp.screenshot({ path: `${shots}/${name}.png` });
  };

  // ---- Stop in the middle of a loop, then Resume.
  let done = 0;
  let failure = null;
  let failedAt = 0;
  const loop = (async () => {
    for (;;) {
      try {
        await page.evaluate(() => { window.__runs = (window.__runs || 0) + 1; });
        done++;
      } catch (e) {
        failure = e;
        failedAt = Date.now();
        return;
      }
    }
  })();
  while (done < 20) await new Promise((r) => setTimeout(r, 5));
  const stop = vp.locator('.brake.stop').first();
  await stop.waitFor();
  const clickedAt = Date.now();
  await stop.click();
  await loop;
  report.stopMs = failedAt - clickedAt;
  // Playwright reports any protocol error of an evaluation as a destroyed
  // context; the relay's reason is on the console, and in the error of
  // every other command.
  assert.match(failure.message, /a person stopped the automation/,
    `the loop failed ${failedAt - clickedAt} ms after the click (negative: before it), after ${done} evaluations: ${failure.message}`);
  step(`stop: the loop failed ${report.stopMs} ms after the click, after ${done} evaluations: ${failure.message.split('\n')[0]}`);
  await vp.waitForSelector('.brake.resume');
  await vp.waitForSelector('#stopped-banner:not([hidden])');
  await assert.rejects(page.goto(`${main}/form.html`), /a person stopped the automation/);
  await page.waitForEvent('console', { predicate: () => warnings.some((w) => /a person stopped the automation/.test(w)), timeout: 5000 }).catch(() => {});
  assert.ok(warnings.some((w) => /a person stopped the automation/.test(w)), `console warnings: ${warnings}`);
  await shot('person-stopped');
  await vp.locator('.brake.resume').first().click();
  await vp.waitForSelector('.brake.stop');
  const runs = await page.evaluate(() => window.__runs);
  report.stopRuns = { done, runs };
  assert.ok(runs <= done + 1, `the page ran ${runs} evaluations, the automation saw ${done} succeed: one at most may have run as the stop came`);
  step(`resume: the automation goes on; the page ran ${runs} evaluations for ${done} answered`);

  // ---- What the automation left in the page: a timer it planted, and a
  // script for new documents that plants it again. Stopped, the person
  // reloads the tab from the live view: the timer ends with the document,
  // and the automation's script does not run on the new one.
  const plant = () => { window.__planted = 0; setInterval(() => { window.__planted++; }, 50); };
  await page.addInitScript(plant);
  await page.evaluate(plant);
  await page.waitForFunction(() => window.__planted > 2);
  await vp.locator('.brake.stop').first().click();
  await vp.waitForSelector('.brake.resume');
  await vp.click('#take');
  await vp.waitForSelector('body[data-holding="true"]');
  await vp.click('#reload');
  await vp.waitForTimeout(1500); // the reload commits, and a planted timer would tick
  await vp.click('#handback');
  await vp.waitForSelector('body[data-holding="false"]');
  await vp.locator('.brake.resume').first().click();
  await vp.waitForSelector('.brake.stop');
  const planted = await page.evaluate(() => window.__planted);
  assert.equal(planted, undefined, `after the person's reload the automation's timer runs again (${planted} ticks)`);
  step('stop and reload: what the automation left in the page ended with the document');

  // ---- A dialog the automation leaves open: the person answers it.
  page.on('dialog', () => {}); // listened to, not answered
  await page.goto(`${main}/confirm.html`);
  await page.evaluate(() => window.ask());
  await vp.waitForSelector('#dialog:not([hidden])', { timeout: 10000 });
  assert.equal(await vp.textContent('#dialog-message'), 'Delete the draft?');
  await vp.waitForSelector('.tab .t-side.t-ask');
  await shot('person-dialog');
  await vp.click('#dialog-accept');
  await page.waitForFunction(() => document.getElementById('out').textContent === 'deleted', null, { timeout: 10000 });
  await vp.waitForSelector('#dialog', { state: 'hidden' });
  step('dialog: shown in the live view, accepted by the person, the page went on');

  // ---- An asked navigation, approved; another, denied.
  const nav = page.goto(`${other}/`);
  const card = vp.locator('.approval', { hasText: `navigate to ${other}/` });
  await card.waitFor({ timeout: 10000 });
  await shot('person-approval');
  await card.locator('.approve').click();
  await nav;
  assert.equal(new URL(page.url()).origin, other);
  step('approval: the navigation went on once approved');
  const denied = page.goto(`${other}/form.html`).then(() => null, (e) => e);
  const card2 = vp.locator('.approval', { hasText: `navigate to ${other}/form.html` });
  await card2.waitFor({ timeout: 10000 });
  await card2.locator('.deny').click();
  const err = await denied;
  assert.ok(err && /a person denied navigate to/.test(err.message), `denied: ${err && err.message}`);
  assert.equal(new URL(page.url()).pathname, '/');
  step(`approval: the other navigation was denied: ${err.message.split('\n')[0]}`);

  // ---- A click on a submit button: the card names it.
  await page.goto(`${main}/shop.html`);
  await page.click('#help'); // not a submit control: not asked
  const click = page.click('#buy');
  const card3 = vp.locator('.approval', { hasText: 'click the submit button "Place order"' });
  await card3.waitFor({ timeout: 10000 });
  report.submitCard = await card3.locator('.approval-what').textContent();
  await shot('person-approval-submit');
  await card3.locator('.approve').click();
  await click;
  await page.waitForSelector('#done', { timeout: 10000 });
  step(`approval: "${report.submitCard}" approved, the order placed`);

  assert.deepEqual(problems, []);
} finally {
  await viewerBrowser.close();
}
console.log('report:', JSON.stringify(report));
await page.close();
await auto.close();
