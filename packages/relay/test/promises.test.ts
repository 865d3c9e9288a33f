// Tests at the boundaries of every guarantee (issue 20): no 202 before the store commit (a
// store that fails or holds its commit, through the store's commit seam), `notice` at the
// backpressure soft limit is never dropped, near-miss tokens are refused everywhere, and the
// /healthz counters are what happened.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { startRelay } from '@aep/relay';
import { WsClient, cmd, ev, http, post, sleep, sse, ulid, type HttpResult } from './helpers.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function storePath(): string {
  const d = mkdtempSync(join(tmpdir(), 'aep-promises-'));
  dirs.push(d);
  return join(d, 'relay.sqlite');
}
const dataLines = (body: string) =>
  body
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => l.slice(6));

describe('202 only after the durable commit', () => {
  it('a held commit holds the 202; the answer comes once the commit returns, and the Event is on disk', async () => {
    const path = storePath();
    let release: () => void = () => {};
    let hold = false;
    const relay = await startRelay({
      port: 0,
      storePath: path,
      storeCommitHook: () =>
        hold
          ? new Promise<void>((r) => {
              release = r;
            })
          : undefined,
    });
    hold = true;
    const e = ev('session.started', `held-${ulid()}`, 0);
    let answered: HttpResult | null = null;
    const pending = post(relay.url, e).then((r) => {
      answered = r;
      return r;
    });
    await sleep(300);
    assert.equal(answered, null, 'no answer while the commit is held');
    hold = false;
    release();
    const r = await pending;
    assert.equal(r.status, 202);
    await relay.close();
    const again = await startRelay({ port: 0, storePath: path });
    assert.deepEqual(dataLines((await http(`${again.url}/stream?live=0`)).body), [JSON.stringify(e)]);
    await again.close();
  });

  it('a failing commit answers 503 store-unavailable (never 202); a retry with the same ids is stored once', async () => {
    const path = storePath();
    let fail = false;
    const relay = await startRelay({
      port: 0,
      storePath: path,
      storeCommitHook: () => {
        if (fail) throw new Error('disk full (test)');
      },
    });
    fail = true;
    const S = `fail-${ulid()}`;
    const batch = [ev('session.started', S, 0), ev('progress.status', S, 1)];
    const r = await post(relay.url, batch);
    assert.equal(r.status, 503);
    assert.deepEqual(r.json, { error: 'store-unavailable', detail: 'the durable store could not commit; retry with the same Event ids' });
    assert.ok(relay.stats().storeFailures >= 1);
    const tok = await http(`${relay.url}/healthz`);
    assert.equal(tok.status, 200);
    fail = false;
    assert.equal((await post(relay.url, batch)).status, 202);
    await relay.close();
    const again = await startRelay({ port: 0, storePath: path });
    assert.deepEqual(
      dataLines((await http(`${again.url}/stream?live=0`)).body),
      batch.map((x) => JSON.stringify(x)),
    );
    await again.close();
  });

  it('token management waits for the commit too: a failing commit answers 503, no token is shown', async () => {
    let fail = false;
    const relay = await startRelay({
      port: 0,
      storePath: storePath(),
      token: 'commit-owner-0123456789',
      storeCommitHook: () => {
        if (fail) throw new Error('disk full (test)');
      },
    });
    fail = true;
    const r = await http(`${relay.url}/tokens`, {
      method: 'POST',
      headers: { authorization: 'Bearer commit-owner-0123456789', 'content-type': 'application/json' },
      body: JSON.stringify({ scopes: ['read'] }),
    });
    assert.equal(r.status, 503);
    assert.ok(!r.body.includes('aep_'));
    fail = false;
    await relay.close();
  });
});

describe('backpressure at the soft limit', () => {
  it('notice Events above the soft limit are delivered, never dropped (dropped stays 0); info is dropped and counted', async () => {
    const relay = await startRelay({
      port: 0,
      storePath: null,
      slowConsumerBytes: 64 * 1024,
      maxConsumerBytes: 256 * 1024 * 1024,
      totalBytes: 512 * 1024 * 1024,
      bufferDepth: 100_000,
    });
    const { port } = new URL(relay.url);
    const S = `soft-${ulid()}`;
    const sock = connect(Number(port), '127.0.0.1');
    await new Promise<void>((r) => sock.once('connect', () => r()));
    sock.write(`GET /stream?filter=${encodeURIComponent(JSON.stringify({ session: S }))} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    sock.pause();
    await sleep(100);
    const pad = 'n'.repeat(32 * 1024);
    const notices: string[] = [];
    const infos: string[] = [];
    let seq = 0;
    // One batch goes out in one tick (the socket is corked for it), so within each batch the
    // consumer's queue passes the 64 KiB soft limit after two notices, whatever the kernel holds:
    // the notices after that are above the limit and must still be delivered; the info must not.
    for (let i = 0; i < 10; i++) {
      const b = Array.from({ length: 4 }, () => ev('progress.status', S, seq++, { severity: 'notice', capture: 'redacted', data: { message: pad } }));
      const info = ev('progress.status', S, seq++, { severity: 'info', capture: 'redacted', data: { message: pad } });
      for (const e of b) notices.push(e['id'] as string);
      infos.push(info['id'] as string);
      assert.equal((await post(relay.url, [...b, info])).status, 202);
    }
    assert.ok(relay.stats().maxQueuedBytes > 64 * 1024, `above the soft limit: ${relay.stats().maxQueuedBytes}`);
    assert.equal(relay.stats().dropped, infos.length, 'exactly the info Events were dropped, no notice');
    assert.equal(relay.stats().slowDisconnects, 0);
    const lastNotice = ev('progress.status', S, seq++, { severity: 'notice', data: {} });
    notices.push(lastNotice['id'] as string);
    assert.equal((await post(relay.url, lastNotice)).status, 202);
    assert.equal(relay.stats().dropped, infos.length);
    // The consumer reads again: every notice arrives, in order; the info does not.
    let text = '';
    await new Promise<void>((resolve) => {
      sock.setEncoding('utf8');
      sock.on('data', (c: string) => {
        text += c;
        if (text.includes(String(lastNotice['id']))) resolve();
      });
      sock.resume();
    });
    sock.destroy();
    const ids = [...text.matchAll(/^data: .*?"id":"([^"]+)"/gm)].map((m) => m[1]);
    assert.deepEqual(ids, notices);
    for (const id of infos) assert.ok(!text.includes(id));
    await relay.close();
  });
});

describe('tokens that are almost right', () => {
  it('the token minus or plus one character, one character, and same-length wrong are refused over header, query and socket', async () => {
    const OWNER = 'owner-Tok3n-0123456789abcdef';
    const relay = await startRelay({ port: 0, storePath: null, token: OWNER });
    const made = await http(`${relay.url}/tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${OWNER}`, 'content-type': 'application/json' },
      body: JSON.stringify({ scopes: ['read:full', 'emit'] }),
    });
    const scoped = (made.json as { token: string }).token;
    const flip = (c: string) => (c === 'a' ? 'b' : 'a');
    for (const real of [OWNER, scoped]) {
      const near = [
        real.slice(0, -1),
        real.slice(1),
        real + 'x',
        'x' + real,
        real[0]!,
        real.slice(-1),
        real.slice(0, -1) + flip(real.slice(-1)),
        flip(real[0]!) + real.slice(1),
        real.toUpperCase() === real ? real.toLowerCase() : real.toUpperCase(),
      ];
      assert.equal((await http(`${relay.url}/events`, { headers: { authorization: `Bearer ${real}` } })).status, 200);
      for (const t of near) {
        assert.equal((await http(`${relay.url}/events`, { headers: { authorization: `Bearer ${t}` } })).status, 401, `header ${t.length} chars`);
        assert.equal((await http(`${relay.url}/stream?live=0&access_token=${encodeURIComponent(t)}`)).status, 401, `query ${t.length}`);
        assert.equal((await post(relay.url, ev('session.started', 'near', 0), t)).status, 401, `POST ${t.length}`);
        await assert.rejects(WsClient.open(relay.url, t), /401/, `socket query ${t.length}`);
        await assert.rejects(
          new Promise((resolve, reject) => {
            const w = new WebSocket(`${relay.url.replace('http', 'ws')}/socket`, { headers: { authorization: `Bearer ${t}` } });
            w.on('open', () => {
              w.terminate();
              resolve(null);
            });
            w.on('error', reject);
          }),
          /401/,
          `socket header ${t.length}`,
        );
      }
      const h = await http(`${relay.url}/healthz`, { headers: { authorization: `Bearer ${real.slice(0, -1)}` } });
      assert.deepEqual(h.json, { ok: true }, 'no counters for a near miss');
    }
    await relay.close();
  });
});

describe('/healthz counters by value', () => {
  it('each counter says what happened', async () => {
    const TOKEN = 'healthz-token-0123456789';
    const relay = await startRelay({ port: 0, storePath: null, token: TOKEN, bufferDepth: 3 });
    const S = `hz-${ulid()}`;
    const watch = sse(relay.url, `filter=${encodeURIComponent(JSON.stringify({ session: S }))}`, { token: TOKEN });
    await watch.status;
    const a = ev('session.started', S, 0);
    const b = ev('progress.status', S, 1);
    const c = ev('progress.status', S, 2);
    const lie = ev('progress.status', S, 3, { data: { message: 'free text at metadata' } });
    assert.equal((await post(relay.url, [a, b, c], TOKEN)).status, 202);
    assert.equal((await post(relay.url, a, TOKEN)).status, 202); // a retransmission: deduped, fanned out again
    assert.equal((await post(relay.url, lie, TOKEN)).status, 202); // re-gated; evicts a (depth 3)
    await watch.waitFor((m) => m.filter((x) => x.data).length >= 5);
    const ws = await WsClient.open(relay.url, TOKEN);
    await ws.hello();
    const refused = cmd('control.pause', S);
    ws.send(refused);
    await ws.waitFor((f) => f['cause'] === refused['id']);
    const heldBytes =
      [b, c].map((x) => Buffer.byteLength(JSON.stringify(x))).reduce((x, y) => x + y, 0) + Buffer.byteLength(JSON.stringify({ ...lie, data: {} }));
    const h = (await http(`${relay.url}/healthz`, { headers: { authorization: `Bearer ${TOKEN}` } })).json as Record<string, number>;
    const { maxQueuedBytes, ...rest } = h;
    assert.equal(typeof maxQueuedBytes, 'number');
    assert.deepEqual(rest, {
      ok: true,
      ingested: 5,
      regated: 1,
      duplicates: 1,
      held: 3,
      heldBytes,
      sessions: 1,
      evicted: 1,
      sessionsEvicted: 0,
      consumers: 1,
      subscriptions: 1,
      delivered: 5,
      dropped: 0,
      slowDisconnects: 0,
      sockets: 1,
      commandsForwarded: 0,
      commandsRefused: 1,
      storeCommits: 0,
      storeFailures: 0,
      heldInMemoryBytes: heldBytes,
    });
    watch.close();
    ws.close();
    await relay.close();
  });
});
