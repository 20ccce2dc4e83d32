// Playwright against a page that mirrors its password field into
// attributes, through the relay: a secret typed by reference, then read
// every way Playwright and a raw CDP session on the page give the page, and
// the field attacked with DOM commands and screenshots. It writes what it
// saw to <out>/report.json for the Go test, which searches it (and every
// frame the client received) for the value. Usage:
//   node lock-playwright.mjs <scenario> <endpoint> <main origin> <other origin> <out dir>
// scenario: field
import { writeFileSync } from 'node:fs';
import { chromium } from 'playwright-core';

const [scenario, endpoint, main, , out] = process.argv.slice(2);
const report = {};

const browser = await chromium.connectOverCDP(endpoint, { timeout: 20000 });
const context = browser.contexts()[0];
const page = await context.newPage();
const outcome = async (p) => {
  try {
    await p;
    return 'done';
  } catch (e) {
    return e.message;
  }
};

switch (scenario) {
  case 'field': {
    await page.goto(`${main}/lock/mirror.html`);
    await page.fill('#password', '{{secret:site}}');
    // The mirror, read as Playwright reads a page.
    report.content = await page.content();
    report.dataEcho = await page.getAttribute('#echo', 'data-echo');
    report.title = await page.getAttribute('#echo', 'title');
    report.copy = await page.locator('#copy').evaluate((el) => el.outerHTML);
    report.aria = await page.locator('body').ariaSnapshot();
    const cdp = await context.newCDPSession(page);
    report.mhtml = (await cdp.send('Page.captureSnapshot', { format: 'mhtml' })).data;
    // The field, attacked without script.
    const { root } = await cdp.send('DOM.getDocument', { depth: -1 });
    const { nodeId } = await cdp.send('DOM.querySelector', { nodeId: root.nodeId, selector: '#password' });
    report.setType = await outcome(cdp.send('DOM.setAttributeValue', { nodeId, name: 'type', value: 'text' }));
    report.setOuter = await outcome(cdp.send('DOM.setOuterHTML', { nodeId, outerHTML: '<input id="password" type="text">' }));
    report.type = await page.locator('#password').evaluate((el) => el.type);
    report.screenshotDots = await outcome(page.screenshot());
    // The page's own "show password": the screenshot is refused.
    await page.click('#show');
    report.shownType = await page.locator('#password').evaluate((el) => el.type);
    report.screenshotShown = await outcome(page.screenshot({ timeout: 5000 }));
    await page.click('#show');
    report.screenshotAgain = await outcome(page.screenshot());
    report.pdf = await outcome(cdp.send('Page.printToPDF'));
    await cdp.detach();
    break;
  }
  default:
    throw new Error(`unknown scenario ${scenario}`);
}

writeFileSync(`${out}/report.json`, JSON.stringify(report, null, 1));
if (!page.isClosed()) await page.close();
await browser.close();
