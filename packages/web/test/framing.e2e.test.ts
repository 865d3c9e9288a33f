// The inbox cannot be framed by another origin (issue 11 item 3; contract C9): the relay serves
// packages/web/dist; a page on another local origin embeds it in an iframe; headless Debian
// Chromium refuses to render it (frame-ancestors 'none', X-Frame-Options DENY). The same page
// framing a page of its own origin shows the frame does load when nothing forbids it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import { webRoot } from '@aep/web';
import { startRelay } from '@aep/relay';
import { launchChromium } from '../../../test/support/browser.js';

test('a page on another local origin cannot frame the inbox', async () => {
  assert.ok(existsSync(join(webRoot, 'index.html')), 'the inbox is built (npm run build)');
  const relay = await startRelay({ port: 0, storePath: null, token: 'frame-token-0123456789', staticDir: webRoot });
  const attacker: Server = createServer((req, res) => {
    if (req.url === '/own') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><title>own</title><p id="own">framable</p>');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<!doctype html><title>attacker</title>
      <iframe id="inbox" src="${relay.url}/" width="800" height="600"></iframe>
      <iframe id="own" src="/own" width="200" height="100"></iframe>`);
  });
  await new Promise<void>((r) => attacker.listen(0, '127.0.0.1', () => r()));
  const addr = attacker.address();
  const attackerUrl = `http://localhost:${typeof addr === 'object' && addr ? addr.port : 0}/`;
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    const refusals: string[] = [];
    page.on('console', (m) => {
      if (/frame|frame-ancestors|X-Frame-Options/i.test(m.text())) refusals.push(m.text());
    });
    const inboxResponse = page.waitForResponse((r) => r.url() === `${relay.url}/`);
    await page.goto(attackerUrl, { waitUntil: 'load' });
    const resp = await inboxResponse;
    assert.equal(resp.status(), 200, 'the inbox itself was served');
    assert.equal(resp.headers()['x-frame-options'], 'DENY');
    // The control: a frame of the attacker's own origin renders.
    const own = page.frames().find((f) => f.url().endsWith('/own'));
    assert.ok(own, 'the own-origin frame loaded');
    assert.equal(await own.locator('#own').innerText(), 'framable');
    // The inbox frame did not: Chromium replaces it with its error page, no inbox document.
    await page.waitForTimeout(300);
    const inbox = page.frames().find((f) => f !== page.mainFrame() && !f.url().endsWith('/own'));
    assert.ok(inbox, 'an inbox frame exists');
    assert.notEqual(inbox.url(), `${relay.url}/`, `the inbox rendered inside another origin's frame (${inbox.url()})`);
    const title = await inbox.title().catch(() => '');
    assert.ok(!/inbox/i.test(title), `inbox document in the frame: ${title}`);
    assert.ok(
      refusals.some((t) => /frame-ancestors|X-Frame-Options/i.test(t)),
      `Chromium reported the refusal: ${refusals.join(' | ')}`,
    );
  } finally {
    await browser.close();
    await new Promise<void>((r) => attacker.close(() => r()));
    await relay.close();
  }
});
