// Bad input on every entry point gets a coded answer, and the relay keeps serving (docs/conventions.md §6).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { request } from 'node:http';
import { startRelay, type RelayHandle } from '@aep/relay';
import { WsClient, ev, http, post, sleep } from './helpers.js';

const H = { 'content-type': 'application/json', 'aep-version': '0.1' };
const ND = { 'content-type': 'application/x-ndjson', 'aep-version': '0.1' };

describe('bad input', () => {
  let relay: RelayHandle;
  let base: string;
  before(async () => {
    relay = await startRelay({
      port: 0,
      storePath: null,
      maxBodyBytes: 64 * 1024,
      maxBatchEvents: 50,
      headersTimeoutMs: 2000,
      requestTimeoutMs: 3000,
      maxFromPositions: 4,
    });
    base = relay.url;
  });
  after(async () => {
    await relay.close();
  });

  async function stillServing(): Promise<void> {
    assert.equal((await post(base, ev('session.started', `alive-${Date.now()}-${Math.random()}`, 0))).status, 202);
  }

  it('malformed JSON -> 400 invalid-event', async () => {
    const r = await http(`${base}/events`, { method: 'POST', headers: H, body: '{"aep":"0.1",' });
    assert.equal(r.status, 400);
    assert.equal((r.json as Record<string, unknown>)['error'], 'invalid-event');
    assert.match(String((r.json as Record<string, unknown>)['detail']), /not valid JSON/);
    const n = await http(`${base}/events`, { method: 'POST', headers: ND, body: '{}\nnot json\n' });
    assert.equal(n.status, 400);
    assert.equal((n.json as Record<string, unknown>)['line'], 0);
    const arr = await http(`${base}/events`, { method: 'POST', headers: H, body: '[1,2]' });
    assert.equal(arr.status, 400);
    const empty = await http(`${base}/events`, { method: 'POST', headers: ND, body: '\n\n' });
    assert.equal(empty.status, 400);
    await stillServing();
  });

  it('wrong content type -> 415; missing AEP-Version -> 426; wrong method -> 405; unknown path -> 404', async () => {
    const r = await http(`${base}/events`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', 'aep-version': '0.1' },
      body: JSON.stringify(ev('session.started', 'ct', 0)),
    });
    assert.equal(r.status, 415);
    assert.equal((r.json as Record<string, unknown>)['error'], 'unsupported-media-type');
    const cs = await http(`${base}/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8', 'aep-version': '0.1' },
      body: JSON.stringify(ev('session.started', 'ct', 0)),
    });
    assert.equal(cs.status, 202, 'charset parameter ignored');
    const nv = await http(`${base}/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(ev('session.started', 'nv', 0)),
    });
    assert.equal(nv.status, 426);
    assert.deepEqual((nv.json as Record<string, unknown>)['versions'], ['0.1']);
    assert.equal((await http(`${base}/events`, { method: 'DELETE' })).status, 405);
    assert.equal((await http(`${base}/nope`)).status, 404);
    assert.equal((await http(`${base}/socket`)).status, 426);
    await stillServing();
  });

  it('oversize bodies -> 413 (declared and streamed) and batches over the count cap -> 413', async () => {
    const big = 'x'.repeat(70 * 1024);
    const r = await http(`${base}/events`, { method: 'POST', headers: H, body: JSON.stringify(ev('session.started', 'big', 0, { data: { big } })) });
    assert.equal(r.status, 413);
    assert.equal((r.json as Record<string, unknown>)['error'], 'payload-too-large');
    // Chunked (no Content-Length): cut off while streaming.
    const streamed = await new Promise<number>((resolve, reject) => {
      const req = request(`${base}/events`, { method: 'POST', headers: { ...H, 'transfer-encoding': 'chunked' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      for (let i = 0; i < 10; i++) req.write('x'.repeat(10 * 1024));
      req.end();
    });
    assert.equal(streamed, 413);
    const many = Array.from({ length: 51 }, (_, i) => ev('progress.status', 'many', i));
    const m = await post(base, many);
    assert.equal(m.status, 413);
    await stillServing();
  });

  it('a batch with one invalid Event is refused whole, naming the line; nothing is ingested', async () => {
    const S = `batch-${Date.now()}`;
    const good = [ev('session.started', S, 0), ev('progress.status', S, 1)];
    const bad = { ...ev('progress.status', S, 2), seq: -1 };
    const r = await post(base, [...good, bad, ev('progress.status', S, 3)]);
    assert.equal(r.status, 400);
    const body = r.json as Record<string, unknown>;
    assert.equal(body['error'], 'invalid-event');
    assert.equal(body['line'], 2);
    assert.ok(Array.isArray(body['issues']) && (body['issues'] as Array<Record<string, unknown>>).every((i) => typeof i['rule'] === 'string'));
    const withCmd = await post(base, [
      ...good,
      { aep: '0.1', id: 'c1', type: 'control.pause', time: new Date().toISOString(), source: 'aep://x', agent: 'x', session: S },
    ]);
    assert.equal(withCmd.status, 403);
    assert.equal((withCmd.json as Record<string, unknown>)['line'], 2);
    const all = await http(`${base}/stream?live=0&filter=${encodeURIComponent(JSON.stringify({ session: S }))}`);
    assert.equal(all.status, 200);
    assert.ok(!all.body.includes('data:'), 'nothing of the refused batches was stored');
    await stillServing();
  });

  it('bad SSE parameters -> 400 with closed-set codes before any stream', async () => {
    const cases: Array<[string, string]> = [
      ['filter=%7Bnot', 'invalid-filter'],
      [`filter=${encodeURIComponent('{"seq":5}')}`, 'invalid-filter'],
      [`filter=${encodeURIComponent('{"agent":"claude*"}')}`, 'invalid-filter'],
      ['capture=everything', 'invalid-filter'],
      [`from=${encodeURIComponent('{}')}`, 'invalid-filter'],
      [`from=${encodeURIComponent('[{"session":"a","seq":-1}]')}`, 'invalid-filter'],
      [`from=${encodeURIComponent(JSON.stringify(Array.from({ length: 5 }, (_, i) => ({ session: `s${i}`, seq: 0 }))))}`, 'limit-exceeded'],
    ];
    for (const [q, code] of cases) {
      const r = await http(`${base}/stream?${q}`);
      assert.equal(r.status, 400, q);
      assert.equal((r.json as Record<string, unknown>)['error'], code, q);
    }
    const lei = await http(`${base}/stream`, { headers: { 'last-event-id': 'garbage' } });
    assert.equal(lei.status, 400);
  });

  it('garbage WebSocket frames get coded errors; the connection and the relay keep serving', async () => {
    const c = await WsClient.open(base);
    await c.hello();
    c.send('this is not json');
    const e1 = await c.waitFor((f) => f['type'] === 'error' && f['code'] === 'invalid-frame');
    assert.match(String(e1['detail']), /JSON object/);
    c.send('[1,2,3]');
    c.send('{"no":"type"}');
    c.send(JSON.stringify({ aep: '0.1', id: 'bad-1', type: 'session.started', time: 'x', source: 'aep://x', agent: 'a', session: 's' }));
    const e2 = await c.waitFor((f) => f['type'] === 'error' && f['cause'] === 'bad-1');
    assert.equal(e2['code'], 'invalid-event');
    c.send({ type: 'subscribe', id: 'ok' });
    await c.waitFor((f) => f['type'] === 'subscribed' && f['id'] === 'ok');
    c.send({ type: 'ping', t: 42 });
    assert.equal((await c.waitFor((f) => f['type'] === 'pong'))['t'], 42);
    assert.equal(c.frames.filter((f) => f['code'] === 'invalid-frame').length, 3);
    assert.equal(c.closed, false);
    // Binary frames are reserved: error, then close 1003.
    c.ws.send(Buffer.from([1, 2, 3]), { binary: true });
    assert.equal(await c.waitClosed(), 1003);
    // Garbage before hello: hello-required, then close.
    const d = await WsClient.open(base);
    d.send('garbage');
    assert.equal((await d.waitFor((f) => f['type'] === 'error'))['code'], 'hello-required');
    await d.waitClosed();
    // Oversize message: closed 1009 by the payload limit.
    const o = await WsClient.open(base);
    await o.hello();
    o.send('x'.repeat(70 * 1024));
    assert.equal(await o.waitClosed(), 1009);
    await stillServing();
  });

  it('an unparsable request target gets 400 on HTTP and on the WebSocket upgrade', async () => {
    const { port } = new URL(base);
    const raw = (text: string) =>
      new Promise<string>((resolve) => {
        const sock = connect(Number(port), '127.0.0.1');
        let got = '';
        sock.setEncoding('utf8');
        sock.on('data', (d: string) => {
          got += d;
        });
        sock.on('close', () => resolve(got));
        sock.on('error', () => resolve(got));
        sock.write(text);
        setTimeout(() => sock.destroy(), 2000);
      });
    assert.match(await raw(`GET http://[ HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`), /^HTTP\/1\.1 400/);
    assert.match(
      await raw(
        `GET http://[ HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`,
      ),
      /^HTTP\/1\.1 400/,
    );
    await stillServing();
  });

  it('a connection sending one byte a second (slowloris) is answered 408 and cut; others are served', async () => {
    const { port } = new URL(base);
    const sock = connect(Number(port), '127.0.0.1');
    let got = '';
    let closed = false;
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => {
      got += d;
    });
    sock.on('close', () => {
      closed = true;
    });
    sock.on('error', () => {});
    await new Promise<void>((r) => sock.once('connect', () => r()));
    const text = 'GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ';
    const t0 = Date.now();
    for (let i = 0; !closed && Date.now() - t0 < 8000; i++) {
      sock.write(text[i % text.length]!);
      await stillServing();
      await sleep(1000);
    }
    assert.ok(closed, 'slow connection was cut');
    assert.match(got, /^HTTP\/1\.1 408/);
    await stillServing();
  });
});
