// Static serving, auth details, CORS, Host guard, options, graceful shutdown.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRelay, RelayOptionError, RELAY_DEFAULTS, defaultStorePath, type RelayHandle } from '@aep/relay';
import { WsClient, ev, http, post, sleep, sse } from './helpers.js';

const TOKEN = 'static-token-abc';

describe('static files (the web inbox)', () => {
  let relay: RelayHandle;
  let dir: string;
  before(async () => {
    const root = mkdtempSync(join(tmpdir(), 'aep-static-'));
    dir = join(root, 'www');
    mkdirSync(join(dir, 'assets'), { recursive: true });
    writeFileSync(join(root, 'secret.txt'), 'outside the root');
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>inbox</title>');
    writeFileSync(join(dir, 'assets', 'app.js'), 'console.log(1)');
    writeFileSync(join(dir, 'assets', 'app.css'), 'body{}');
    writeFileSync(join(dir, 'assets', 'logo.svg'), '<svg/>');
    writeFileSync(join(dir, 'assets', 'font.woff2'), Buffer.from([0x77, 0x4f, 0x46, 0x32]));
    writeFileSync(join(dir, 'assets', 'icon.png'), Buffer.from([0x89, 0x50]));
    writeFileSync(join(dir, 'manifest.json'), '{}');
    writeFileSync(join(dir, 'events'), 'must never shadow /events');
    mkdirSync(join(dir, 'stream'));
    relay = await startRelay({ port: 0, storePath: null, staticDir: dir, token: TOKEN });
  });
  after(async () => {
    await relay.close();
    rmSync(join(dir, '..'), { recursive: true, force: true });
  });

  it('serves index.html at / with CSP and nosniff, and assets with their content types', async () => {
    const r = await http(`${relay.url}/`);
    assert.equal(r.status, 200);
    assert.match(String(r.headers['content-type']), /^text\/html/);
    assert.equal(
      r.headers['content-security-policy'],
      "frame-ancestors 'none'; base-uri 'none'; object-src 'none'; default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'",
    );
    assert.equal(r.headers['x-content-type-options'], 'nosniff');
    assert.equal(r.headers['x-frame-options'], 'DENY');
    assert.equal(r.headers['referrer-policy'], 'no-referrer');
    assert.match(r.body, /inbox/);
    const types: Array<[string, RegExp]> = [
      ['/assets/app.js', /^text\/javascript/],
      ['/assets/app.css', /^text\/css/],
      ['/assets/logo.svg', /^image\/svg\+xml/],
      ['/assets/font.woff2', /^font\/woff2/],
      ['/assets/icon.png', /^image\/png/],
      ['/manifest.json', /^application\/json/],
      ['/index.html', /^text\/html/],
    ];
    for (const [p, t] of types) {
      const x = await http(`${relay.url}${p}`);
      assert.equal(x.status, 200, p);
      assert.match(String(x.headers['content-type']), t, p);
      assert.equal(x.headers['x-content-type-options'], 'nosniff');
    }
    const head = await http(`${relay.url}/assets/app.js`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.body, '');
  });

  it('never escapes the root and never shadows protocol paths', async () => {
    for (const p of ['/../secret.txt', '/%2e%2e/secret.txt', '/assets/..%2f..%2fsecret.txt', '/..%5csecret.txt', '/missing.js', '/assets/', '/%00']) {
      const r = await http(`${relay.url}${p}`);
      assert.equal(r.status, 404, p);
      assert.ok(!r.body.includes('outside the root'));
    }
    assert.equal((await http(`${relay.url}/events`)).status, 401, '/events stays the protocol endpoint');
    assert.equal((await http(`${relay.url}/stream`)).status, 401);
    const d = await http(`${relay.url}/events?access_token=${TOKEN}`);
    assert.ok(Array.isArray((d.json as Record<string, unknown>)['aep']));
  });
});

describe('auth, CORS, Host guard', () => {
  let relay: RelayHandle;
  before(async () => {
    relay = await startRelay({ port: 0, storePath: null, token: TOKEN });
  });
  after(async () => {
    await relay.close();
  });

  it('SSE with ?access_token= (EventSource) and answers over /socket?access_token=', async () => {
    const s = sse(relay.url, `access_token=${TOKEN}&filter=${encodeURIComponent(JSON.stringify({ session: 'at' }))}`);
    assert.equal(await s.status, 200);
    assert.equal((await post(relay.url, ev('session.started', 'at', 0), TOKEN)).status, 202);
    await s.waitFor((m) => m.some((x) => x.data));
    s.close();
    const ws = await WsClient.open(relay.url, TOKEN);
    assert.deepEqual((await ws.hello())['versions'], ['0.1']);
    ws.close();
    await assert.rejects(WsClient.open(relay.url, 'nope'), /401/);
  });

  it('CORS preflight is answered when a token guards the relay', async () => {
    const r = await http(`${relay.url}/events`, { method: 'OPTIONS', headers: { origin: 'http://example.test', 'access-control-request-method': 'POST' } });
    assert.equal(r.status, 204);
    assert.equal(r.headers['access-control-allow-origin'], '*');
    assert.match(String(r.headers['access-control-allow-headers']), /aep-version/);
  });

  it('healthz reports counters only to an authenticated caller', async () => {
    const r = await http(`${relay.url}/healthz`, { headers: { authorization: `Bearer ${TOKEN}` } });
    const j = r.json as Record<string, unknown>;
    assert.equal(j['ok'], true);
    for (const k of ['held', 'dropped', 'slowDisconnects', 'delivered', 'sessions']) assert.equal(typeof j[k], 'number', k);
  });

  it('a loopback relay refuses foreign Host names (DNS rebinding)', async () => {
    const r = await http(`${relay.url}/healthz`, { headers: { host: 'evil.example' } });
    assert.equal(r.status, 403);
    assert.equal((r.json as Record<string, unknown>)['error'], 'forbidden-host');
    assert.equal((await http(`${relay.url}/healthz`, { headers: { host: `localhost:${relay.port}` } })).status, 200);
  });

  it('without a token no CORS headers are sent (browsers cannot read a dev relay cross-origin)', async () => {
    const open = await startRelay({ port: 0, storePath: null });
    const r = await http(`${open.url}/events`, { headers: { origin: 'http://example.test' } });
    assert.equal(r.headers['access-control-allow-origin'], undefined);
    await open.close();
  });
});

describe('options and lifecycle', () => {
  it('rejects bad options naming them; documents defaults', async () => {
    await assert.rejects(
      startRelay({ port: 0, storePath: null, bufferDepth: 0 }),
      (e: unknown) => e instanceof RelayOptionError && e.code === 'AEP_RELAY_BAD_OPTION' && /bufferDepth/.test(e.message),
    );
    await assert.rejects(startRelay({ port: 70000, storePath: null }), /port/);
    await assert.rejects(startRelay({ port: 0, storePath: null, allowOrigins: ['evil.example'] }), /allowOrigins/);
    assert.equal(RELAY_DEFAULTS.port, 8787);
    assert.equal(RELAY_DEFAULTS.host, '127.0.0.1');
    assert.match(defaultStorePath({ XDG_DATA_HOME: '/data' }), /^\/data\/aep\/relay\.sqlite$/);
    assert.match(defaultStorePath({}), /\.local\/share\/aep\/relay\.sqlite$/);
  });

  it('graceful shutdown: WS gets closing with delivered positions then 1001; SSE ends', async () => {
    const relay = await startRelay({ port: 0, storePath: null });
    const ws = await WsClient.open(relay.url);
    await ws.hello();
    ws.send({ type: 'subscribe', id: 'g' });
    await ws.waitFor((f) => f['type'] === 'subscribed');
    const s = sse(relay.url, '');
    await s.status;
    await post(relay.url, [ev('session.started', 'gs', 0), ev('progress.status', 'gs', 1)]);
    await ws.waitFor((f) => f['seq'] === 1);
    await relay.close();
    const closing = await ws.waitFor((f) => f['type'] === 'closing');
    assert.deepEqual(closing['delivered'], [{ sub: 'g', session: 'gs', epoch: 0, seq: 1 }]);
    assert.equal(await ws.waitClosed(), 1001);
    await s.ended;
    await sleep(10);
    await relay.close(); // idempotent
  });
});
