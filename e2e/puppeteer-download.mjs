// Puppeteer's download folder through the relay. Usage:
//   node puppeteer-download.mjs <endpoint> <main origin> <download folder> <the browser's download folder>
// puppeteer.connect({downloadBehavior}) asks for the folder; a click on a
// download link puts the file there (the person's Chrome saves it in its
// own folder, and the relay copies it). A folder the relay does not allow
// is refused when Puppeteer connects, with the reason; the browser's own
// download folder (inside the allowed ones here) gets nothing.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import puppeteer from 'puppeteer-core';
import { NodeWebSocketTransport } from 'puppeteer-core/internal/node/NodeWebSocketTransport.js';

const [endpoint, main, folder, personFolder] = process.argv.slice(2);
const step = (s) => console.log('ok -', s);
const body = 'name,value\nrelay,42\n';

// Puppeteer leaves the socket of a connect that failed open, and the relay
// serves one client at a time: this one brings its own socket, to close it.
const { webSocketDebuggerUrl } = await (await fetch(`${endpoint}/json/version`)).json();
const refused = await NodeWebSocketTransport.create(webSocketDebuggerUrl);
await assert.rejects(
  puppeteer.connect({ transport: refused, downloadBehavior: { policy: 'allow', downloadPath: '/etc' }, protocolTimeout: 20000 }),
  (e) => {
    assert.match(e.message, /outside the folders this relay writes downloads into/);
    step(`a download folder of /etc: ${e.message.split('\n')[0]}`);
    return true;
  },
);
// The relay lets a client go before it answers the client's close: once
// the socket is closed, the next client is served.
await new Promise((closed) => {
  const was = refused.onclose;
  refused.onclose = () => {
    was?.();
    closed();
  };
  refused.close();
});

const browser = await puppeteer.connect({
  browserURL: endpoint,
  defaultViewport: null,
  protocolTimeout: 20000,
  downloadBehavior: { policy: 'allow', downloadPath: folder },
});
const page = await browser.newPage();
await page.goto(`${main}/download.html`);
await page.click('#dl');
// As with Chrome itself, the file appears under its name once whole.
const file = join(folder, 'report.csv');
for (const until = Date.now() + 20000; !existsSync(file) && Date.now() < until; )
  await new Promise((r) => setTimeout(r, 100));
assert.equal(readFileSync(file, 'utf8'), body);
assert.deepEqual(readdirSync(folder), ['report.csv']);
step(`the download folder holds ${file}`);

// The tab's own download folder set to the person's: the download is
// not copied there, and the console says why.
const cdp = await page.createCDPSession();
await cdp.send('Page.setDownloadBehavior', { behavior: 'allow', downloadPath: personFolder });
const told = new Promise((resolve) =>
  page.on('console', (m) => {
    if (m.text().includes('was not copied')) resolve(m.text());
  }),
);
await page.click('#dl');
const why = await told;
assert.match(why, /the browser's own download folder/);
step(`a download folder that is the browser's own: ${why}`);
await cdp.detach();

await page.close();
await browser.disconnect();
