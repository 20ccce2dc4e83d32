// The live view in a real browser, beside a real automation. Usage:
//   node liveview.mjs <live view URL> <CDP endpoint> <main origin> <screenshot path>
// An automation (connectOverCDP) drives a tab through the relay; a second,
// ordinary headless Chromium opens the live-view page, watches that tab,
// takes control, clicks a button through the canvas and hands back.
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

const [liveURL, endpoint, main, shotPath] = process.argv.slice(2);
const step = (s) => console.log('ok -', s);

const auto = await chromium.connectOverCDP(endpoint, { timeout: 20000 });
const page = await auto.contexts()[0].newPage();
const warnings = [];
page.on('console', (m) => { if (m.type() === 'warning') warnings.push(m.text()); });
await page.goto(`${main}/`);
assert.equal(await page.textContent('p'), 'hello');
step('automation: a tab of its own at the test page');

const viewerBrowser = await chromium.launch({
  executablePath: process.env.CHROME_PATH || '/usr/lib/chromium/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
try {
  const vp = await viewerBrowser.newPage({ viewport: { width: 1440, height: 900 } });
  const problems = [];
  vp.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  vp.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  await vp.goto(liveURL);
  await vp.waitForSelector('#conn[data-state="open"]');
  assert.equal(await vp.textContent('#mode'), 'Interactive');
  step('live view: connected, interactive');

  const tab = vp.locator(`.tab[data-url="${main}/"]`);
  await tab.waitFor({ timeout: 10000 });
  await tab.click();
  await vp.waitForFunction(() => Number(document.getElementById('screen').dataset.frames) > 0, null, { timeout: 15000 });
  const first = await canvasDigest(vp);
  assert.ok(first.width > 0 && first.height > 0, 'the canvas has the frame size');
  step(`live view: frames of the automation's tab on the canvas (${first.width}×${first.height})`);

  // The automation navigates: the live view shows the new page.
  await page.goto(`${main}/form.html`);
  await vp.waitForFunction(
    (before) => document.getElementById('screen').toDataURL('image/png') !== before,
    first.png, { timeout: 15000, polling: 100 },
  );
  await vp.waitForSelector(`.tab[data-url="${main}/form.html"][aria-current="true"]`, { timeout: 10000 });
  step('live view: the canvas changed when the tab navigated');

  await page.fill('#name', 'live view');
  // Measured before the take-over: while a person holds the tab it is
  // read-only for the automation, and page.evaluate (whose wrapper V8
  // cannot prove free of side effects) is refused.
  const view = await page.evaluate(() => ({ w: innerWidth, h: innerHeight }));
  await vp.click('#take');
  await vp.waitForSelector('body[data-holding="true"]');
  await vp.waitForSelector('#status[data-held="me"]');
  step('live view: control taken');

  // While the person holds the tab, the automation's input is refused:
  // Playwright retries its click until it times out, a raw CDP call gets
  // the relay's error, and the page's console says why.
  const refused = await page.click('#go', { timeout: 3000 }).then(() => null, (e) => e);
  assert.ok(refused, 'the automation clicked during the take-over');
  assert.equal(await page.textContent('#out'), 'nothing yet');
  const cdp = await page.context().newCDPSession(page);
  const raw = await cdp.send('Input.dispatchMouseEvent', { type: 'mouseMoved', x: 5, y: 5 }).then(() => null, (e) => e);
  assert.ok(raw, 'Input.dispatchMouseEvent went through during the take-over');
  assert.match(raw.message, /a person has taken control of this tab/);
  await cdp.detach();
  assert.ok(warnings.some((w) => /taken control/.test(w)), `no console warning about the take-over: ${JSON.stringify(warnings)}`);
  step('automation: its input is refused while a person holds the tab, with a reason');

  // Click the button through the canvas: where it is, as a fraction of
  // the viewport, is where it is on the canvas.
  const cb = await vp.locator('#screen').boundingBox();
  const clickOnCanvas = async (selector) => {
    const box = await page.locator(selector).boundingBox();
    const fx = (box.x + box.width / 2) / view.w;
    const fy = (box.y + box.height / 2) / view.h;
    await vp.mouse.move(cb.x + fx * cb.width, cb.y + fy * cb.height);
    await vp.mouse.down();
    await vp.mouse.up();
  };
  await clickOnCanvas('#go');
  // The automation still reads the tab (Playwright's locators run in its
  // own isolated world).
  await page.locator('#out', { hasText: 'Hello, live view' }).waitFor({ timeout: 10000 });
  step("live view: a click on the canvas ran the button's onclick in the shared tab");

  // Typing goes through too: the person clicks into the field and types.
  await clickOnCanvas('#name');
  await vp.locator('#screen').focus();
  await vp.keyboard.type('typed');
  for (let i = 0; ; i++) {
    if ((await page.locator('#name').inputValue()).endsWith('typed')) break;
    if (i > 100) throw new Error('the keys typed on the canvas did not reach the field: ' + (await page.locator('#name').inputValue()));
    await vp.waitForTimeout(100);
  }
  step('live view: keys typed on the canvas reach the focused field');

  await vp.waitForFunction(() => document.getElementById('activity').children.length >= 4);
  await vp.screenshot({ path: shotPath.replace(/\.png$/, '-control.png') });

  await vp.click('#handback');
  await vp.waitForSelector('body[data-holding="false"]');
  await page.click('#go');
  assert.match(await page.textContent('#out'), /^Hello, .*typed$/);
  step('automation: clicks again after the hand-back');

  await vp.waitForTimeout(300);
  await vp.screenshot({ path: shotPath });
  step(`screenshot: ${shotPath}`);
  assert.deepEqual(problems, []);
} finally {
  await viewerBrowser.close();
}

await page.close();
await auto.close();
step('closed');

async function canvasDigest(p) {
  return p.evaluate(() => {
    const c = document.getElementById('screen');
    return { width: c.width, height: c.height, png: c.toDataURL('image/png') };
  });
}
