// A Playwright client opens popups on a host outside the relay's allowed
// list from a page inside it, one after the other, and prints what each
// popup showed it.
// Usage: node hostile-popup.mjs <endpoint> <inside page> <outside url>...
import { chromium } from 'playwright-core';

const [endpoint, inside, ...outside] = process.argv.slice(2);
const browser = await chromium.connectOverCDP(endpoint, { timeout: 20000 });
try {
  const context = browser.contexts()[0];
  const page = await context.newPage();
  await page.goto(inside);
  for (const url of outside) {
    const popup = page.waitForEvent('popup', { timeout: 3000 }).catch(() => null);
    const opened = await page.evaluate((u) => window.open(u) !== null, url);
    const p = await popup;
    if (!p) {
      console.log(`${url}: window.open returned a window: ${opened}; no popup for the client`);
      continue;
    }
    await p.waitForLoadState('load', { timeout: 3000 }).catch((e) => console.log('popup load:', e.message));
    const text = await p.locator('body').innerText({ timeout: 2000 }).catch((e) => e.message);
    console.log(`${url}: popup at ${p.url()} shows: ${text}`);
    await p.close();
  }
  await page.close();
} finally {
  await browser.close();
}
