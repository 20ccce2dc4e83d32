// Drives the relay with chrome-remote-interface in its default usage: it
// reads /json/protocol and /json/list and connects to the first page's own
// endpoint, where commands carry no sessionId. Usage:
//   node cri.mjs <port> <main origin>
import assert from 'node:assert/strict';
import CDP from 'chrome-remote-interface';

const [port, main] = process.argv.slice(2);
const step = (s) => console.log('ok -', s);

const targets = await CDP.List({ host: '127.0.0.1', port });
assert.ok(targets.length >= 1 && targets[0].type === 'page', 'a page in /json/list');
const version = await CDP.Version({ host: '127.0.0.1', port });
assert.match(version.Browser, /Chrome\/\d+/);

const client = await CDP({ host: '127.0.0.1', port });
const { Page, Runtime, DOM, Input, Target } = client;
await Promise.all([Page.enable(), Runtime.enable(), DOM.enable()]);
step('connected to the first page');

const loaded = Page.loadEventFired();
await Page.navigate({ url: `${main}/form.html` });
await loaded;
const title = await Runtime.evaluate({ expression: 'document.title' });
assert.equal(title.result.value, 'Form');
step('navigate, title');

await Runtime.evaluate({ expression: 'document.getElementById("name").focus()' });
await Input.insertText({ text: 'relay' });
const { root } = await DOM.getDocument();
const { nodeId } = await DOM.querySelector({ nodeId: root.nodeId, selector: '#go' });
const { model } = await DOM.getBoxModel({ nodeId });
const [x1, y1, , , x3, y3] = model.content;
const x = (x1 + x3) / 2, y = (y1 + y3) / 2;
for (const type of ['mousePressed', 'mouseReleased']) {
  await Input.dispatchMouseEvent({ type, x, y, button: 'left', clickCount: 1 });
}
const out = await Runtime.evaluate({ expression: 'document.getElementById("out").textContent' });
assert.equal(out.result.value, 'Hello, relay');
step('type, click');

const n = await Runtime.evaluate({ expression: '6 * 7' });
assert.equal(n.result.value, 42);
// The first page need not be the tab its window shows (earlier tests open
// and close others), and Chrome paints no frame of a hidden tab for a
// screenshot to take: brought to front first, as a script that
// screenshots someone's tab would.
await Page.bringToFront();
const { data } = await Page.captureScreenshot({ format: 'png' });
const png = Buffer.from(data, 'base64');
assert.ok(png.length > 1000 && png[0] === 0x89, 'a PNG');
step(`evaluate, screenshot ${png.length} bytes`);

// A second tab through Target, then closed.
const { targetId } = await Target.createTarget({ url: `${main}/` });
assert.ok((await CDP.List({ host: '127.0.0.1', port })).some((t) => t.id === targetId), 'listed');
const { success } = await Target.closeTarget({ targetId });
assert.ok(success);
step('second tab opened and closed');

// Leave the person's tab as it was found.
await Page.navigate({ url: 'about:blank' });
await client.close();
step('close');
