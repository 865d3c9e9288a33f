// Issue 17 "Must show", in headless Debian chromium against real relays and real agents:
// - install criteria met: the manifest is linked and valid (CDP Page.getAppManifest), Chromium
//   reports no installability error (Page.getInstallabilityErrors), the service worker controls
//   the page;
// - offline: the shell loads from the service worker with the relay gone and says it is
//   reconnecting (never "nothing waiting"), then recovers when the relay is back;
// - Web Push end to end: the inbox subscribes (the browser's push service is stood in for by a
//   local endpoint: the page's PushManager returns a subscription whose keys the test holds),
//   the subscription is stored on the relay (C10), the notifier encrypts with web-push, the test
//   decrypts aes128gcm itself and gets what was sent; that payload delivered through the DevTools
//   protocol (ServiceWorker.deliverPushMessage) shows the notification, and its click opens the
//   request, answered in the real form UI; an expired subscription (410) is pruned;
// - the session list shows waiting / working / finished per session, live.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createDecipheriv, createECDH, createHmac, createPublicKey, createVerify, randomBytes } from 'node:crypto';
import type { ECDH } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, CDPSession, Page } from 'playwright-core';
import { startRelay } from '@aep/relay';
import type { RelayHandle } from '@aep/relay';
import { CommandSender } from '@aep/client/node';
import { ensureVapidKeys, startNotifier } from '@aep/notify';
import type { SendRecord } from '@aep/notify';
import { webRoot } from '@aep/web';
import { launchPersistent, resultsDir } from './support/browser.js';
import { startAgent } from './support/agent.js';
import { ensureWebBuilt } from './support/processes.js';

const TOKEN = 'pwa-test-token-0123456789abcdef';
const PLANT = 'PLANTED-free-text';
const cleanup: Array<() => Promise<unknown> | unknown> = [];
after(async () => {
  for (const c of cleanup.reverse()) await c();
});

function tmp(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  cleanup.push(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

async function relayWith(opts: { port?: number; push?: string } = {}): Promise<RelayHandle> {
  const r = await startRelay({
    port: opts.port ?? 0,
    storePath: null,
    token: TOKEN,
    staticDir: webRoot,
    ...(opts.push ? { push: { vapidPublicKey: opts.push, allowHttpLoopback: true } } : {}),
  });
  cleanup.push(() => r.close());
  return r;
}

async function browser(): Promise<BrowserContext> {
  ensureWebBuilt();
  const ctx = await launchPersistent(tmp('aep-chromium-'));
  cleanup.push(() => ctx.close());
  return ctx;
}

/** Open the inbox, enter the token, and wait until the service worker controls the page. */
async function openControlled(ctx: BrowserContext, url: string, fresh = false): Promise<Page> {
  const page = (fresh ? undefined : ctx.pages()[0]) ?? (await ctx.newPage());
  await page.goto(`${url}/`);
  await page.getByLabel('Relay token').fill(TOKEN);
  await page.getByRole('button', { name: 'Open the inbox' }).click();
  await page.evaluate(() => navigator.serviceWorker.ready.then(() => undefined));
  if (!(await page.evaluate(() => navigator.serviceWorker.controller !== null))) {
    await page.reload();
  }
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null);
  return page;
}

/** Registration id of the inbox's service worker, from the DevTools protocol. */
async function registrationId(cdp: CDPSession, scope: string): Promise<string> {
  const regs: Array<{ registrationId: string; scopeURL: string; isDeleted: boolean }> = [];
  cdp.on('ServiceWorker.workerRegistrationUpdated', (e: { registrations: typeof regs }) => regs.push(...e.registrations));
  await cdp.send('ServiceWorker.enable');
  for (let i = 0; i < 200; i++) {
    const r = regs.find((x) => !x.isDeleted && x.scopeURL === scope);
    if (r) return r.registrationId;
    await new Promise((res) => setTimeout(res, 25));
  }
  throw new Error(`no service worker registration for ${scope}: ${JSON.stringify(regs)}`);
}

function pngSize(b: Buffer): [number, number] {
  assert.deepEqual([...b.subarray(0, 8)], [137, 80, 78, 71, 13, 10, 26, 10], 'a PNG');
  return [b.readUInt32BE(16), b.readUInt32BE(20)];
}

test('install criteria: manifest linked and valid, icons real, no installability error, service worker in control', async () => {
  const relay = await relayWith();
  const ctx = await browser();
  const page = await openControlled(ctx, relay.url);
  const cdp = await ctx.newCDPSession(page);
  const manifest = (await cdp.send('Page.getAppManifest')) as { url: string; errors: unknown[]; data?: string };
  assert.equal(manifest.url, `${relay.url}/manifest.webmanifest`);
  assert.deepEqual(manifest.errors, []);
  const m = JSON.parse(manifest.data ?? '{}') as {
    name: string;
    display: string;
    start_url: string;
    scope: string;
    icons: Array<{ src: string; sizes: string; type: string; purpose: string }>;
  };
  assert.equal(m.name, 'AEP inbox');
  assert.equal(m.display, 'standalone');
  for (const icon of m.icons.filter((i) => i.type === 'image/png')) {
    const res = await fetch(new URL(icon.src, manifest.url));
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'image/png');
    const [w, h] = pngSize(Buffer.from(await res.arrayBuffer()));
    assert.equal(`${w}x${h}`, icon.sizes);
  }
  assert.ok(m.icons.some((i) => i.sizes === '512x512' && i.purpose === 'maskable'));
  const inst = (await cdp.send('Page.getInstallabilityErrors')) as { installabilityErrors: unknown[] };
  assert.deepEqual(inst.installabilityErrors, [], 'Chromium finds the inbox installable');
  const sw = await fetch(`${relay.url}/sw.js`);
  assert.equal(sw.status, 200);
  assert.match(String(sw.headers.get('content-type')), /javascript/);
  await page.screenshot({ path: join(resultsDir, 'pwa-01-installable.png') });
});

test('offline: the shell comes from the service worker and says it is reconnecting (never "nothing waiting"), then recovers', async () => {
  const first = await relayWith();
  const port = first.port;
  const ctx = await browser();
  const page = await openControlled(ctx, first.url);
  await page.getByTestId('inbox-empty').waitFor({ timeout: 30_000 });
  await first.close();
  await page.reload();
  assert.equal(await page.title().then((t) => t.includes('AEP inbox')), true, 'the shell loaded with the relay gone');
  await page.getByTestId('inbox-offline').waitFor({ timeout: 30_000 });
  assert.equal(await page.getByTestId('inbox-empty').count(), 0, 'no stale all-clear');
  assert.match(await page.locator('.conn').innerText(), /connecting|reconnecting/);
  await page.screenshot({ path: join(resultsDir, 'pwa-02-offline.png') });
  // The relay comes back on the same address; the inbox goes live and shows what is waiting.
  const second = await relayWith({ port });
  const agent = await startAgent(second.url, TOKEN, 'claude-code', ['control.attention.respond']);
  cleanup.push(() => agent.close());
  const req = agent.conn.emit('s_back', 'attention.requested', { kind: 'input', prompt: 'Which branch?' }, { capture: 'redacted', severity: 'notice' });
  await page.locator(`.item[data-request="${req.id}"]`).waitFor({ timeout: 60_000 });
  assert.equal(await page.getByTestId('inbox-offline').count(), 0);
});

/** Decrypt an RFC 8291 (aes128gcm, RFC 8188) Web Push body with the user agent's keys. */
function decryptPush(body: Buffer, ua: ECDH, auth: Buffer): Buffer {
  const salt = body.subarray(0, 16);
  const idlen = body[20]!;
  const asPublic = body.subarray(21, 21 + idlen);
  const record = body.subarray(21 + idlen);
  const hmac = (key: Buffer, data: Buffer) => createHmac('sha256', key).update(data).digest();
  const ecdhSecret = ua.computeSecret(asPublic);
  const prkKey = hmac(auth, ecdhSecret);
  const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0', 'latin1'), ua.getPublicKey(), asPublic]);
  const ikm = hmac(prkKey, Buffer.concat([keyInfo, Buffer.from([1])]));
  const prk = hmac(salt, ikm);
  const cek = hmac(prk, Buffer.from('Content-Encoding: aes128gcm\0\x01', 'latin1')).subarray(0, 16);
  const nonce = hmac(prk, Buffer.from('Content-Encoding: nonce\0\x01', 'latin1')).subarray(0, 12);
  const d = createDecipheriv('aes-128-gcm', cek, nonce);
  d.setAuthTag(record.subarray(record.length - 16));
  const plain = Buffer.concat([d.update(record.subarray(0, record.length - 16)), d.final()]);
  let end = plain.length - 1;
  while (end >= 0 && plain[end] === 0) end--;
  assert.equal(plain[end], 2, 'the last record ends with the 0x02 delimiter (RFC 8188 §2)');
  return plain.subarray(0, end);
}

/** Check the VAPID header (RFC 8292): `vapid t=JWT, k=publicKey`, ES256 over the push origin. */
function checkVapid(headers: IncomingHttpHeaders, publicKey: string, audience: string): void {
  const m = /^vapid t=([^,]+),\s*k=(\S+)$/.exec(String(headers['authorization']));
  assert.ok(m, String(headers['authorization']));
  assert.equal(m[2], publicKey);
  const [h, p, s] = m[1]!.split('.') as [string, string, string];
  const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as { aud: string; exp: number; sub: string };
  assert.equal(claims.aud, audience);
  const pub = Buffer.from(publicKey, 'base64url');
  const key = createPublicKey({
    key: { kty: 'EC', crv: 'P-256', x: pub.subarray(1, 33).toString('base64url'), y: pub.subarray(33).toString('base64url') },
    format: 'jwk',
  });
  const ok = createVerify('sha256').update(`${h}.${p}`).verify({ key, dsaEncoding: 'ieee-p1363' }, Buffer.from(s, 'base64url'));
  assert.ok(ok, 'the VAPID JWT is signed by the key the relay handed out');
}

test('Web Push: subscribe from the inbox, encrypted by web-push, decrypted by the test, shown by the service worker, click opens the request, answered in the form', async () => {
  const state = tmp('aep-vapid-');
  const vapid = ensureVapidKeys(state);
  const relay = await relayWith({ push: vapid.publicKey });
  // The local push endpoint: records every push; /gone answers 410 (an expired subscription).
  const pushes: Array<{ path: string; headers: IncomingHttpHeaders; body: Buffer }> = [];
  const pushServer = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      pushes.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(req.url === '/gone' ? 410 : 201);
      res.end();
    });
  });
  await new Promise<void>((resolve) => pushServer.listen(0, '127.0.0.1', () => resolve()));
  cleanup.push(() => new Promise<void>((resolve) => pushServer.close(() => resolve())));
  const pushOrigin = `http://127.0.0.1:${(pushServer.address() as { port: number }).port}`;
  // The user agent's keys, held by the test (RFC 8291 §3): what the browser's push service would hold.
  const ua = createECDH('prime256v1');
  ua.generateKeys();
  const auth = randomBytes(16);
  const ctx = await browser();
  await ctx.grantPermissions(['notifications'], { origin: relay.url });
  // Stand-in for the browser's push service (none is reachable here): the subscription the inbox
  // gets carries keys the test holds. Everything else is the real inbox code path. (A string:
  // the test runner's transpiler decorates functions with helpers the page does not have.)
  const sub = { endpoint: `${pushOrigin}/push/device-1`, p256dh: ua.getPublicKey().toString('base64url'), auth: auth.toString('base64url') };
  await ctx.addInitScript(`(() => {
    const sub = ${JSON.stringify(sub)};
    let active = null;
    const fake = {
      endpoint: sub.endpoint, expirationTime: null, options: {},
      getKey: () => null, unsubscribe: async () => { active = null; return true; },
      toJSON: () => ({ endpoint: sub.endpoint, expirationTime: null, keys: { p256dh: sub.p256dh, auth: sub.auth } }),
    };
    PushManager.prototype.subscribe = async function (opts) {
      const k = opts && opts.applicationServerKey;
      window.__aepKey = k ? Array.from(new Uint8Array(k.buffer ? k.buffer.slice(k.byteOffset, k.byteOffset + k.byteLength) : k)) : [];
      active = fake;
      return fake;
    };
    PushManager.prototype.getSubscription = async function () { return active; };
  })();`);
  const page = await openControlled(ctx, relay.url, true); // a page created after the init script
  await page.goto(`${relay.url}/#/notify`);
  await page.getByRole('button', { name: 'Turn on notifications' }).click();

  await page.getByTestId('push-on').waitFor({ timeout: 30_000 });
  assert.deepEqual(
    await page.evaluate(() => (window as unknown as { __aepKey?: number[] }).__aepKey),
    [...Buffer.from(vapid.publicKey, 'base64url')],
    "subscribed with the relay's VAPID key",
  );
  await page.screenshot({ path: join(resultsDir, 'pwa-03-notify-on.png') });
  const listed = (await (await fetch(`${relay.url}/push/subscriptions`, { headers: { Authorization: `Bearer ${TOKEN}` } })).json()) as {
    subscriptions: Array<{ id: string; endpoint: string; keys: { p256dh: string; auth: string } }>;
  };
  assert.deepEqual(
    listed.subscriptions.map((s) => [s.endpoint, s.keys.auth]),
    [[`${pushOrigin}/push/device-1`, auth.toString('base64url')]],
  );
  // A second, expired subscription: the push service answers 410 and the notifier prunes it.
  const gone = createECDH('prime256v1');
  gone.generateKeys();
  const goneRes = await fetch(`${relay.url}/push/subscriptions`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({
      endpoint: `${pushOrigin}/gone`,
      keys: { p256dh: gone.getPublicKey().toString('base64url'), auth: randomBytes(16).toString('base64url') },
    }),
  });
  const goneId = ((await goneRes.json()) as { id: string }).id;

  const sends: SendRecord[] = [];
  const notifier = await startNotifier({
    url: relay.url,
    token: TOKEN,
    vapidFile: vapid.file,
    log: () => {},
    onSend: (s) => sends.push(s),
    config: {
      channels: new Map([['push', { name: 'push', type: 'push', capture: 'metadata', allowHttpLoopback: true }]]),
      rules: [
        { name: 'push', filter: { type: 'attention.requested', session: 's_push' }, channel: 'push', afterMs: 0, maxRepeats: 0, escalate: [], quiet: true },
      ],
      quiet: [],
      actions: { ttlMs: 60_000 },
    },
  });
  cleanup.push(() => notifier.close());
  await notifier.ready;
  const agent = await startAgent(relay.url, TOKEN, 'claude-code', ['control.attention.respond']);
  cleanup.push(() => agent.close());
  const req = agent.conn.emit(
    's_push',
    'attention.requested',
    {
      kind: 'form',
      prompt: `${PLANT} configure the backup`,
      respond_via: ['control'],
      fields: [
        { id: '1', type: 'string', label: `Bucket name ${PLANT}`, required: true },
        { id: '2', type: 'boolean', label: `Encrypt? ${PLANT}` },
      ],
    },
    { capture: 'full', severity: 'notice', subject: 'backup' },
  );

  const deadline = Date.now() + 30_000;
  while (!pushes.some((p) => p.path === '/push/device-1') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
  const push = pushes.find((p) => p.path === '/push/device-1');
  assert.ok(push, 'the push reached the endpoint');
  assert.equal(push.headers['content-encoding'], 'aes128gcm');
  assert.ok(Number(push.headers['ttl']) > 0);
  checkVapid(push.headers, vapid.publicKey, pushOrigin);
  assert.ok(!push.body.includes(Buffer.from('PLANTED')) && !push.body.includes(Buffer.from('claude-code')), 'the body is ciphertext');
  const plain = decryptPush(push.body, ua, auth).toString('utf8');
  while (!sends.some((s) => s.request === req.id) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
  const sent = sends.find((s) => s.request === req.id)!;
  assert.equal(sent.delivered, true, sent.detail);
  const payload = JSON.parse(plain) as Record<string, unknown>;
  assert.deepEqual(
    payload,
    {
      v: 1,
      title: sent.outgoing.composed.title,
      body: sent.outgoing.composed.body,
      url: `#/r/s_push/${req.id}`,
      tag: req.id,
      request: req.id,
      session: 's_push',
      kind: 'form',
      reason: 'first',
      renotify: false,
    },
    'decrypts to exactly what the notifier sent',
  );
  assert.equal(payload['title'], 'claude-code asks 2 questions');
  assert.ok(!plain.includes('PLANTED'), 'metadata ceiling: no agent text in the push');
  // Pruned: the 410 subscription is gone from the relay.
  for (let i = 0; i < 400; i++) {
    const subs = (
      (await (await fetch(`${relay.url}/push/subscriptions`, { headers: { Authorization: `Bearer ${TOKEN}` } })).json()) as {
        subscriptions: Array<{ id: string }>;
      }
    ).subscriptions;
    if (!subs.some((s) => s.id === goneId)) break;
    if (i === 399) assert.fail('the expired subscription was not pruned');
    await new Promise((r) => setTimeout(r, 25));
  }

  // Deliver that payload to the service worker through the DevTools protocol.
  await page.goto(`${relay.url}/#/sessions`);
  const cdp = await ctx.newCDPSession(page);
  const reg = await registrationId(cdp, `${relay.url}/`);
  await cdp.send('ServiceWorker.deliverPushMessage', { origin: relay.url, registrationId: reg, data: plain });
  let shown: Array<{ title: string; body: string; tag: string; data: unknown }> = [];
  for (let i = 0; i < 600 && shown.length === 0; i++) {
    shown = await page.evaluate(async () =>
      (await (await navigator.serviceWorker.ready).getNotifications()).map((n) => ({ title: n.title, body: n.body, tag: n.tag, data: n.data as unknown })),
    );
    if (shown.length === 0) await new Promise((r) => setTimeout(r, 50));
  }
  assert.deepEqual(shown, [{ title: 'claude-code asks 2 questions', body: sent.outgoing.composed.body, tag: req.id, data: { url: `#/r/s_push/${req.id}` } }]);
  // Its click (dispatched in the worker with the notification it shows: a headless browser has
  // no notification centre to tap) opens the request in the inbox.
  const worker = ctx.serviceWorkers().find((w) => w.url() === `${relay.url}/sw.js`);
  assert.ok(worker, 'the service worker is running');
  await worker.evaluate(async () => {
    const sw = self as unknown as ServiceWorkerGlobalScope;
    const [n] = await sw.registration.getNotifications();
    sw.dispatchEvent(new NotificationEvent('notificationclick', { notification: n! }));
  });
  await page.waitForFunction((id) => location.hash === `#/r/s_push/${id}`, req.id, { timeout: 30_000 });
  const form = page.locator(`.detail[data-request="${req.id}"] form.answer-form`);
  await form.waitFor({ timeout: 30_000 });
  assert.match(await page.locator(`.detail[data-request="${req.id}"] [data-testid="routed"]`).innerText(), /push \(push\)/);
  await form.getByLabel(/Bucket name/).fill('nightly-bk');
  await form.getByRole('button', { name: 'Submit answer' }).click();
  const cmd = await agent.command((c) => c.event.subject === req.id, 'the answer from the inbox');
  assert.deepEqual((cmd.event.data as { answer: unknown }).answer, { values: { 1: 'nightly-bk', 2: false } });
  await page.screenshot({ path: join(resultsDir, 'pwa-04-opened-from-push.png') });
});

test('session list: waiting / working / finished per session, waiting first, live', async () => {
  const relay = await relayWith();
  const agent = await startAgent(relay.url, TOKEN, 'claude-code', ['control.attention.respond']);
  cleanup.push(() => agent.close());
  const e = agent.conn;
  e.emit('s_wait', 'session.started', {});
  e.emit('s_wait', 'run.started', {}, {});
  const ask = e.emit(
    's_wait',
    'attention.requested',
    {
      kind: 'permission',
      prompt: 'Run ls?',
      options: [
        { id: 'allow', label: 'Allow' },
        { id: 'deny', label: 'Deny' },
      ],
    },
    { capture: 'redacted', severity: 'notice', subject: 'Bash' },
  );
  e.emit('s_work', 'session.started', {});
  e.emit('s_work', 'run.started', {}, { run: 'r1' });
  e.emit('s_done', 'session.started', {});
  e.emit('s_done', 'run.started', {}, { run: 'r1' });
  e.emit('s_done', 'run.finished', {}, { run: 'r1' });
  e.emit('s_end', 'session.started', {});
  e.emit('s_end', 'session.ended', {});
  await e.flush();
  const ctx = await browser();
  const page = ctx.pages()[0] ?? (await ctx.newPage());
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`${relay.url}/`);
  await page.getByLabel('Relay token').fill(TOKEN);
  await page.getByRole('button', { name: 'Open the inbox' }).click();
  await page.getByRole('link', { name: 'Sessions' }).click();
  const rows = page.locator('ul.sessions > li');
  await page.locator('li[data-session="s_end"]').waitFor({ timeout: 30_000 });
  await page.getByTestId('session-counts').filter({ hasText: '1 waiting for you · 1 working · 2 finished' }).waitFor({ timeout: 30_000 });
  const seen = await rows.evaluateAll((lis) =>
    lis.map((li) => [li.getAttribute('data-session'), li.getAttribute('data-status'), (li.querySelector('.status') as HTMLElement).innerText.toLowerCase()]),
  );
  assert.deepEqual(seen[0], ['s_wait', 'waiting', 'waiting for you'], 'the session that needs a person comes first');
  const by = Object.fromEntries(seen.map(([s, st]) => [s, st]));
  assert.deepEqual(by, { s_wait: 'waiting', s_work: 'working', s_done: 'finished', s_end: 'finished' });
  assert.match(await page.locator('li[data-session="s_done"]').innerText(), /run finished/);
  assert.match(await page.locator('li[data-session="s_end"]').innerText(), /session ended/);
  assert.match(await page.locator('li[data-session="s_wait"]').innerText(), /1 request waiting/);
  await page.screenshot({ path: join(resultsDir, 'pwa-05-sessions-phone.png'), fullPage: true });
  // Answered elsewhere: the session goes back to working, without a reload.
  agent.decide('control.attention.respond', () => ({
    status: 'accepted',
    after: () => {
      e.emit('s_wait', 'attention.answered', { answer: { option: 'deny' }, via: 'control' }, { subject: ask.id });
      e.emit('s_wait', 'attention.resolved', { resolution: 'answered' }, { subject: ask.id });
    },
  }));
  const sender = await CommandSender.connect({ url: relay.url, token: TOKEN, agent: 'aep-cli' });
  cleanup.push(() => sender.close());
  assert.equal((await sender.respond({ session: 's_wait', requestId: ask.id, answer: { option: 'deny' } })).status, 'accepted');
  await page.locator('li[data-session="s_wait"][data-status="working"]').waitFor({ timeout: 30_000 });
  e.emit('s_work', 'run.failed', { reason: 'error' }, { run: 'r1' });
  await page.locator('li[data-session="s_work"][data-status="finished"]').waitFor({ timeout: 30_000 });
  assert.match(await page.locator('li[data-session="s_work"]').innerText(), /run failed/);
});
