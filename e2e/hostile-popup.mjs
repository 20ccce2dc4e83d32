// A Playwright client opens a popup on a host outside the relay's allowed
// list from a page inside it, and prints what the popup showed it.
// Usage: node hostile-popup.mjs <endpoint> <inside page> <outside url>
import { chromium } from 'playwright-core';

const [endpoint, inside, outside] = process.argv.slice(2);
const browser = await chromium.connectOverCDP(endpoint, { timeout: 20000 });
try {
  const context = browser.contexts()[0];
  const page = await context.newPage();
  await page.goto(inside);
  const popup = page.waitForEvent('popup', { timeout: 5000 }).catch((e) => null);
  await page.evaluate((url) => void window.open(url), outside);
  const p = await popup;
  if (p) {
    await p.waitForLoadState('load', { timeout: 5000 }).catch((e) => console.log('popup load:', e.message));
    console.log('popup url:', p.url());
    console.log('popup text:', await p.locator('body').innerText({ timeout: 2000 }).catch((e) => e.message));
    await p.close();
  } else {
    console.log('no popup');
  }
  await page.close();
} finally {
  await browser.close();
}
