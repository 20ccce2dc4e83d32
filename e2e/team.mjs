// Two people's automations and one person's live view, for the tenants
// test (e2e/team). Usage:
//   node team.mjs drive <relay> <cdp token> <url>
//     connectOverCDP(<relay>) with the token, open <url> in a new tab and
//     leave it open (the tab stays shared after the client goes).
//   node team.mjs liveview <browser ws> <relay> <viewer token> <own url> <other url> <screenshot> [instances]
//     in the person's own browser (its debugging port, the test's way to
//     act as the person), open the live view with the token: it lists
//     <own url> and never <other url>, shows its frames, and is
//     screenshotted. With [instances] (the operator's token), it lists
//     that many instances, <other url> among them.
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

const [cmd, ...args] = process.argv.slice(2);
const step = (s) => console.log('ok -', s);

if (cmd === 'drive') {
  const [relay, token, url] = args;
  const browser = await chromium.connectOverCDP(relay, { timeout: 20000, headers: { Authorization: `Bearer ${token}` } });
  const page = await browser.contexts()[0].newPage();
  await page.goto(url);
  step(`drove a tab of its own to ${url}: "${await page.title()}"`);
  await browser.close();
} else if (cmd === 'liveview') {
  const [browserWS, relay, token, own, other, shot, all] = args;
  const person = await chromium.connectOverCDP(browserWS, { timeout: 20000 });
  const vp = await person.contexts()[0].newPage();
  await vp.setViewportSize({ width: 1280, height: 720 });
  const problems = [];
  vp.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  await vp.goto(`${relay}/?token=${encodeURIComponent(token)}`);
  await vp.waitForSelector('#conn[data-state="open"]', { timeout: 15000 });
  const tab = vp.locator(`.tab[data-url="${own}"]`);
  await tab.waitFor({ timeout: 15000 });
  if (all) {
    await vp.locator(`.tab[data-url^="${other}"]`).first().waitFor({ timeout: 15000 });
  }
  const urls = await vp.$$eval('.tab', (bs) => bs.map((b) => b.dataset.url));
  const instances = await vp.locator('.instance-head').count();
  if (all) {
    assert.equal(instances, Number(all), `the live view lists ${instances} instances`);
    step(`the operator's live view lists every instance's tabs: ${urls.join(', ')}`);
  } else {
    assert.ok(!urls.some((u) => u.startsWith(other)), `the live view lists another tenant's tab: ${urls}`);
    assert.equal(instances, 1, `the live view lists ${instances} instances`);
    step(`the live view lists this tenant's tabs only: ${urls.join(', ')}`);
  }
  await tab.click();
  await vp.waitForFunction(() => Number(document.getElementById('screen').dataset.frames) > 0, null, { timeout: 15000 });
  step('its tab live on the canvas');
  await vp.screenshot({ path: shot });
  step(`screenshot ${shot}`);
  assert.deepEqual(problems, []);
  await vp.close();
  // Leave the person's browser as it is: only the test's connection to
  // its own port goes.
  process.exit(0);
} else {
  throw new Error(`unknown command ${cmd}`);
}
