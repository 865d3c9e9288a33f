// Contract C10: push subscriptions on the relay (src/push.ts). A real relay on port 0; the
// subscriptions survive a restart on the same store; bad input is refused with a code naming the
// rule and never crashes or loses what was accepted.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createECDH, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRelay } from '../src/index.js';
import type { RelayHandle } from '../src/index.js';
import { http } from './helpers.js';

const TOKEN = 'push-test-token-0123456789';
const vapid = createECDH('prime256v1');
vapid.generateKeys();
const VAPID_PUBLIC = vapid.getPublicKey().toString('base64url');
const dirs: string[] = [];
const relays: RelayHandle[] = [];
after(async () => {
  for (const r of relays) await r.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function browserSubscription(endpoint = `https://push.example.test/send/${randomBytes(8).toString('hex')}`): Record<string, unknown> {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  return { endpoint, expirationTime: null, keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth: randomBytes(16).toString('base64url') } };
}

const auth = (t = TOKEN) => ({ authorization: `Bearer ${t}` });
const jsonHeaders = (t = TOKEN) => ({ ...auth(t), 'content-type': 'application/json' });

async function relay(opts: { storePath?: string | null; token?: string; push?: boolean; allowHttpLoopback?: boolean } = {}): Promise<RelayHandle> {
  const r = await startRelay({
    port: 0,
    storePath: opts.storePath ?? null,
    ...(opts.token === '' ? {} : { token: opts.token ?? TOKEN }),
    ...(opts.push === false ? {} : { push: { vapidPublicKey: VAPID_PUBLIC, allowHttpLoopback: opts.allowHttpLoopback ?? false } }),
  });
  relays.push(r);
  return r;
}

test('GET /push/config hands out the VAPID public key to an authenticated reader, never without the token', async () => {
  const r = await relay();
  const ok = await http(`${r.url}/push/config`, { headers: auth() });
  assert.equal(ok.status, 200);
  assert.deepEqual(ok.json, { vapidPublicKey: VAPID_PUBLIC });
  assert.equal(ok.headers['cache-control'], 'no-store');
  assert.match(String(ok.headers['content-security-policy']), /frame-ancestors 'none'/);
  const anon = await http(`${r.url}/push/config`);
  assert.equal(anon.status, 401);
  assert.equal((anon.json as { error: string }).error, 'unauthorized');
  const wrong = await http(`${r.url}/push/config`, { headers: auth('not-the-token') });
  assert.equal(wrong.status, 401);
});

test('subscribe, list, re-subscribe keeps the id, delete; the list carries the token key, never the token', async () => {
  const r = await relay();
  const sub = browserSubscription();
  const created = await http(`${r.url}/push/subscriptions`, {
    method: 'POST',
    headers: jsonHeaders(),
    body: JSON.stringify({ ...sub, filter: { type: 'attention.requested', agent: 'claude-code' } }),
  });
  assert.equal(created.status, 201, created.body);
  const id = (created.json as { id: string }).id;
  assert.match(id, /^[A-Za-z0-9_-]{16}$/);
  const again = await http(`${r.url}/push/subscriptions`, { method: 'POST', headers: jsonHeaders(), body: JSON.stringify(sub) });
  assert.equal((again.json as { id: string }).id, id, 'the same endpoint keeps its id');
  const list = await http(`${r.url}/push/subscriptions`, { headers: auth() });
  assert.equal(list.status, 200);
  const subs = (list.json as { subscriptions: Array<Record<string, unknown>> }).subscriptions;
  assert.equal(subs.length, 1);
  assert.equal(subs[0]!['endpoint'], sub['endpoint']);
  assert.deepEqual(subs[0]!['keys'], sub['keys']);
  assert.equal(subs[0]!['filter'], undefined, 're-subscribing without a filter replaced it');
  assert.ok(!list.body.includes(TOKEN), 'the token never appears in the list');
  assert.match(String(subs[0]!['token']), /^[0-9a-f]{32}$/);
  const del = await http(`${r.url}/push/subscriptions/${id}`, { method: 'DELETE', headers: auth() });
  assert.deepEqual(del.json, { id, deleted: true });
  const gone = await http(`${r.url}/push/subscriptions/${id}`, { method: 'DELETE', headers: auth() });
  assert.equal(gone.status, 404);
  assert.deepEqual((await http(`${r.url}/push/subscriptions`, { headers: auth() })).json, { subscriptions: [] });
});

test('malformed subscriptions are refused with invalid-subscription naming the rule; the relay keeps serving', async () => {
  const r = await relay();
  const good = browserSubscription();
  const cases: Array<[unknown, RegExp]> = [
    ['not an object', /JSON object/],
    [{ ...good, endpoint: 'http://push.example.test/x' }, /https:/],
    [{ ...good, endpoint: 'http://127.0.0.1:9/x' }, /https:/],
    [{ ...good, endpoint: 'https://user:pw@push.example.test/x' }, /credentials/],
    [{ ...good, endpoint: 'not a url' }, /not a URL/],
    [{ ...good, keys: { p256dh: 'AAAA', auth: (good['keys'] as { auth: string }).auth } }, /p256dh/],
    [{ ...good, keys: { p256dh: (good['keys'] as { p256dh: string }).p256dh, auth: 'x' } }, /auth/],
    [{ ...good, expirationTime: 'soon' }, /expirationTime/],
    [{ ...good, filter: { seq: 3 } }, /filter: invalid-filter/],
    [{ ...good, filter: { agent: 'claude*' } }, /filter: invalid-filter/],
  ];
  for (const [body, rule] of cases) {
    const res = await http(`${r.url}/push/subscriptions`, { method: 'POST', headers: jsonHeaders(), body: JSON.stringify(body) });
    assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.body}`);
    assert.equal((res.json as { error: string }).error, 'invalid-subscription');
    assert.match((res.json as { detail: string }).detail, rule);
  }
  const notJson = await http(`${r.url}/push/subscriptions`, { method: 'POST', headers: jsonHeaders(), body: '{' });
  assert.equal((notJson.json as { error: string }).error, 'invalid-subscription');
  const media = await http(`${r.url}/push/subscriptions`, { method: 'POST', headers: { ...auth(), 'content-type': 'text/plain' }, body: JSON.stringify(good) });
  assert.equal(media.status, 415);
  const big = await http(`${r.url}/push/subscriptions`, { method: 'POST', headers: jsonHeaders(), body: JSON.stringify({ ...good, pad: 'x'.repeat(20_000) }) });
  assert.equal(big.status, 413);
  const method = await http(`${r.url}/push/config`, { method: 'POST', headers: jsonHeaders(), body: '{}' });
  assert.equal(method.status, 405);
  // Still serving, and what was accepted before is kept.
  const ok = await http(`${r.url}/push/subscriptions`, { method: 'POST', headers: jsonHeaders(), body: JSON.stringify(good) });
  assert.equal(ok.status, 201);
  assert.equal(((await http(`${r.url}/push/subscriptions`, { headers: auth() })).json as { subscriptions: unknown[] }).subscriptions.length, 1);
});

test('http: endpoints only on loopback and only when allowed (a local push server)', async () => {
  const r = await relay({ allowHttpLoopback: true });
  const local = await http(`${r.url}/push/subscriptions`, {
    method: 'POST',
    headers: jsonHeaders(),
    body: JSON.stringify(browserSubscription('http://127.0.0.1:9/push')),
  });
  assert.equal(local.status, 201);
  const remote = await http(`${r.url}/push/subscriptions`, {
    method: 'POST',
    headers: jsonHeaders(),
    body: JSON.stringify(browserSubscription('http://192.0.2.1/push')),
  });
  assert.equal(remote.status, 400);
});

test('a relay without a token refuses push (no credential, no device list); a relay without push keys answers 404', async () => {
  const open = await relay({ token: '' });
  const res = await http(`${open.url}/push/config`);
  assert.equal(res.status, 403);
  assert.match((res.json as { detail: string }).detail, /without a token/);
  const none = await relay({ push: false });
  assert.equal((await http(`${none.url}/push/config`, { headers: auth() })).status, 404);
});

test('one token holds at most 32 subscriptions', async () => {
  const r = await relay();
  for (let i = 0; i < 32; i++) {
    const res = await http(`${r.url}/push/subscriptions`, { method: 'POST', headers: jsonHeaders(), body: JSON.stringify(browserSubscription()) });
    assert.equal(res.status, 201);
  }
  const over = await http(`${r.url}/push/subscriptions`, { method: 'POST', headers: jsonHeaders(), body: JSON.stringify(browserSubscription()) });
  assert.equal(over.status, 400);
  assert.equal((over.json as { error: string }).error, 'limit-exceeded');
});

test('subscriptions are durable: a relay restarted on the same store still has them', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'aep-push-'));
  dirs.push(dir);
  const storePath = join(dir, 'relay.sqlite');
  const first = await relay({ storePath });
  const sub = browserSubscription();
  const id = ((await http(`${first.url}/push/subscriptions`, { method: 'POST', headers: jsonHeaders(), body: JSON.stringify(sub) })).json as { id: string }).id;
  await first.close();
  const second = await relay({ storePath });
  const subs = ((await http(`${second.url}/push/subscriptions`, { headers: auth() })).json as { subscriptions: Array<{ id: string; endpoint: string }> })
    .subscriptions;
  assert.deepEqual(
    subs.map((s) => [s.id, s.endpoint]),
    [[id, sub['endpoint']]],
  );
});
