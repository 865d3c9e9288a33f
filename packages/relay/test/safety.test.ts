// Safe defaults (issue 12 item 6; contracts C5, C6, C9): browser origins on the WebSocket,
// non-loopback binding without a token, store permissions, store path errors, 413 without a
// reset, exact integers, security headers on every response, the store lock, the drain.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { RelayOptionError, RelayStartError, startRelay } from '@aep/relay';
import { runAep, spawnAep } from '../../../test/support/cli.js';
import { WsClient, ev, http, post, sleep, ulid } from './helpers.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'aep-safety-'));
  dirs.push(d);
  return d;
}
const mode = (p: string) => statSync(p).mode & 0o777;

/** Upgrade with an Origin; resolves the HTTP status of a refusal, or 101. */
function upgrade(url: string, headers: Record<string, string>): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${url.replace('http', 'ws')}/socket`, { headers });
    ws.on('upgrade', (res) => {
      resolve({ status: 101, body: '', headers: res.headers });
      ws.terminate();
    });
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => {
        body += c.toString('utf8');
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    ws.on('error', () => {});
  });
}

describe('browser origins on the WebSocket', () => {
  it("a foreign Origin is refused 403 forbidden-origin; the relay's own origin, --allow-origin and no Origin pass", async () => {
    for (const token of [undefined, 'origin-token-0123456789']) {
      const relay = await startRelay({ port: 0, storePath: null, allowOrigins: ['http://localhost:5173'], ...(token ? { token } : {}) });
      const auth: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
      for (const origin of ['http://evil.example', 'null', `http://127.0.0.1:${relay.port + 1}`, `https://evil.example:${relay.port}`]) {
        const r = await upgrade(relay.url, { ...auth, origin });
        assert.equal(r.status, 403, `${origin} (token ${String(token)})`);
        assert.equal((JSON.parse(r.body) as Record<string, unknown>)['error'], 'forbidden-origin');
      }
      for (const origin of [`http://127.0.0.1:${relay.port}`, 'http://localhost:5173']) {
        assert.equal((await upgrade(relay.url, { ...auth, origin })).status, 101, origin);
      }
      const plain = await WsClient.open(relay.url, token);
      plain.close();
      await relay.close();
    }
    // Any origin only when asked for explicitly.
    const any = await startRelay({ port: 0, storePath: null, allowOrigins: ['*'] });
    assert.equal((await upgrade(any.url, { origin: 'http://evil.example' })).status, 101);
    await any.close();
  });
});

describe('binding beyond loopback', () => {
  it('a non-loopback host without a token refuses to start unless insecureNoAuth; with a token it starts', async () => {
    await assert.rejects(
      startRelay({ port: 0, storePath: null, host: '0.0.0.0' }),
      (e: unknown) => e instanceof RelayOptionError && /not a loopback address and no token/.test(e.message) && /--insecure-no-auth/.test(e.message),
    );
    const a = await startRelay({ port: 0, storePath: null, host: '0.0.0.0', insecureNoAuth: true });
    await a.close();
    const b = await startRelay({ port: 0, storePath: null, host: '0.0.0.0', token: 'bind-token-0123456789' });
    await b.close();
    const c = await startRelay({ port: 0, storePath: null, host: '127.0.0.2' });
    await c.close();
    const r = await runAep(['relay', '--port', '0', '--memory', '--host', '0.0.0.0']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /AEP_RELAY_BAD_OPTION: .*--insecure-no-auth/);
  });
});

describe('the store on disk', () => {
  it('directories it creates are 0700, the database, WAL, shared memory and lock 0600', async () => {
    const root = tmp();
    const path = join(root, 'a', 'b', 'relay.sqlite');
    const relay = await startRelay({ port: 0, storePath: path });
    assert.equal((await post(relay.url, ev('session.started', 'perm', 0))).status, 202);
    assert.equal(mode(join(root, 'a')), 0o700);
    assert.equal(mode(join(root, 'a', 'b')), 0o700);
    for (const f of ['relay.sqlite', 'relay.sqlite-wal', 'relay.sqlite-shm', 'relay.sqlite.lock']) assert.equal(mode(join(root, 'a', 'b', f)), 0o600, f);
    await relay.close();
    assert.equal(existsSync(`${path}.lock`), false, 'the lock is released');
  });

  it('an existing store written 0644 is tightened; the default store directory is made 0700', async () => {
    const root = tmp();
    const dir = join(root, 'aep');
    mkdirSync(dir, { mode: 0o755 });
    writeFileSync(join(dir, 'relay.sqlite'), '', { mode: 0o644 });
    const saved = process.env['XDG_DATA_HOME'];
    process.env['XDG_DATA_HOME'] = root;
    try {
      const relay = await startRelay({ port: 0 });
      assert.equal(relay.storePath, join(dir, 'relay.sqlite'));
      assert.equal(mode(dir), 0o700);
      assert.equal(mode(join(dir, 'relay.sqlite')), 0o600);
      await relay.close();
    } finally {
      if (saved === undefined) delete process.env['XDG_DATA_HOME'];
      else process.env['XDG_DATA_HOME'] = saved;
    }
  });

  it('store path errors fail at once with AEP_RELAY_STORE_UNAVAILABLE naming the path (never spin)', async () => {
    const root = tmp();
    writeFileSync(join(root, 'file'), 'x');
    mkdirSync(join(root, 'dir.sqlite'));
    for (const p of ['/proc/nonexistent/x.sqlite', join(root, 'file', 'x.sqlite'), join(root, 'dir.sqlite')]) {
      const guard = new Promise((_, reject) => setTimeout(() => reject(new Error(`startRelay(${p}) did not fail`)), 10_000).unref());
      await assert.rejects(Promise.race([startRelay({ port: 0, storePath: p }), guard]), (e: unknown) => {
        assert.ok(e instanceof RelayStartError, String(e));
        assert.equal(e.code, 'AEP_RELAY_STORE_UNAVAILABLE');
        assert.ok(e.message.includes(p), e.message);
        return true;
      });
    }
    const r = await runAep(['relay', '--port', '0', '--store', '/proc/nonexistent/x.sqlite'], undefined, { timeoutMs: 20_000 });
    assert.equal(r.code, 5);
    assert.match(
      r.stderr,
      /AEP_CLI_RELAY_START_FAILED: relay could not start: store \/proc\/nonexistent\/x\.sqlite: cannot create directory \/proc\/nonexistent/,
    );
  });

  it('a second relay on the same store names the first (pid, URL) and what to do; exit 5 from the CLI', async () => {
    const path = join(tmp(), 'relay.sqlite');
    const first = spawnAep(['relay', '--port', '0', '--store', path, '--quiet']);
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      const t = setTimeout(() => reject(new Error(out)), 30_000);
      first.stdout?.on('data', (b: Buffer) => {
        out += b;
        const m = /listening on (\S+)/.exec(out);
        if (m) {
          clearTimeout(t);
          resolve(m[1]!);
        }
      });
    });
    try {
      const r = await runAep(['relay', '--port', '0', '--store', path]);
      assert.equal(r.code, 5);
      assert.match(
        r.stderr,
        new RegExp(
          `AEP_CLI_RELAY_START_FAILED: another relay \\(pid ${first.pid}, ${url.replace(/[.]/g, '\\.')}\\) is using the store ${path.replace(/[.]/g, '\\.')}; stop it, or pass --store PATH for another store, or --memory`,
        ),
      );
      await assert.rejects(
        startRelay({ port: 0, storePath: path }),
        (e: unknown) => e instanceof RelayStartError && e.code === 'AEP_RELAY_STORE_LOCKED' && e.holder?.pid === first.pid && e.holder?.url === url,
      );
    } finally {
      await new Promise<void>((resolve) => {
        first.once('exit', () => resolve());
        first.kill('SIGKILL');
      });
    }
    // The holder was killed: its lock is stale and taken over.
    const again = await startRelay({ port: 0, storePath: path });
    await again.close();
  });
});

describe('oversize bodies and numbers', () => {
  it('a 17 MiB POST is answered 413 every time, never a connection reset (declared length and chunked)', async () => {
    const relay = await startRelay({ port: 0, storePath: null });
    const big = Buffer.alloc(17 * 1024 * 1024, 0x61);
    const send = (chunked: boolean) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const headers: Record<string, string | number> = { 'content-type': 'application/json', 'aep-version': '0.1' };
        if (!chunked) headers['content-length'] = big.length;
        const req = request(`${relay.url}/events`, { method: 'POST', headers }, (res) => {
          let body = '';
          res.on('data', (c: Buffer) => {
            body += c;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          res.on('error', reject);
        });
        req.on('error', reject);
        if (chunked) {
          for (let i = 0; i < 17; i++) req.write(big.subarray(i * 1024 * 1024, (i + 1) * 1024 * 1024));
          req.end();
        } else req.end(big);
      });
    for (let i = 0; i < 6; i++) {
      const r = await send(i % 2 === 1);
      assert.equal(r.status, 413);
      assert.equal((JSON.parse(r.body) as Record<string, unknown>)['error'], 'payload-too-large');
    }
    assert.equal((await post(relay.url, ev('session.started', 'after-413', 0))).status, 202);
    await relay.close();
  });

  it('seq, epoch and integer extensions beyond 2^53-1 are refused invalid-event naming the rule; 2^53-1 is exact and resumable', async () => {
    const relay = await startRelay({ port: 0, storePath: null });
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ epoch: 1e300 }, /^envelope\.epoch at \/epoch: epoch must be an exact integer/],
      [{ seq: 2 ** 53 }, /^envelope\.seq at \/seq: seq must be an exact integer/],
      [{ counter: 2 ** 60 }, /^envelope\.ext-value at \/counter:/],
    ];
    for (const [extra, re] of cases) {
      const r = await post(relay.url, ev('progress.status', `num-${ulid()}`, 0, extra));
      assert.equal(r.status, 400, JSON.stringify(extra));
      assert.equal((r.json as Record<string, unknown>)['error'], 'invalid-event');
      assert.match(String((r.json as Record<string, unknown>)['detail']), re);
    }
    const ws = await WsClient.open(relay.url);
    await ws.hello();
    const bad = ev('progress.status', 'num-ws', 0, { epoch: 1e300 });
    ws.send(bad);
    const err = await ws.waitFor((f) => f['cause'] === bad['id']);
    assert.equal(err['code'], 'invalid-event');
    assert.match(String(err['detail']), /envelope\.epoch/);
    ws.close();
    const S = `num-max-${ulid()}`;
    const max = Number.MAX_SAFE_INTEGER;
    assert.equal((await post(relay.url, [ev('progress.status', S, max - 1, { epoch: max }), ev('progress.status', S, max, { epoch: max })])).status, 202);
    const r = await http(`${relay.url}/stream?live=0`, { headers: { 'last-event-id': `${S}:${max}:${max - 1}` } });
    assert.equal(r.status, 200);
    assert.deepEqual(
      r.body.split('\n').filter((l) => l.startsWith('id: ')),
      [`id: ${S}:${max}:${max}`],
    );
    await relay.close();
  });
});

describe('security headers on every response (contract C9)', () => {
  it('API, errors, SSE, preflight, WebSocket upgrade and refusals all carry them', async () => {
    const root = tmp();
    writeFileSync(join(root, 'index.html'), '<!doctype html>');
    const relay = await startRelay({ port: 0, storePath: null, token: 'hdr-token-0123456789', staticDir: root });
    const want = (h: Record<string, unknown>, what: string) => {
      assert.match(String(h['content-security-policy']), /^frame-ancestors 'none'; base-uri 'none'; object-src 'none'/, what);
      assert.equal(h['x-frame-options'], 'DENY', what);
      assert.equal(h['x-content-type-options'], 'nosniff', what);
      assert.equal(h['referrer-policy'], 'no-referrer', what);
    };
    const auth = { authorization: 'Bearer hdr-token-0123456789' };
    want((await http(`${relay.url}/events`, { headers: auth })).headers, 'discovery');
    want((await http(`${relay.url}/events`)).headers, '401');
    want((await http(`${relay.url}/nope`)).headers, '404');
    want((await http(`${relay.url}/healthz`)).headers, 'healthz');
    want((await http(`${relay.url}/`)).headers, 'static');
    want((await http(`${relay.url}/events`, { method: 'OPTIONS' })).headers, 'preflight');
    want((await http(`${relay.url}/events`, { headers: { host: 'evil.example' } })).headers, 'forbidden-host');
    want((await http(`${relay.url}/stream?live=0`, { headers: auth })).headers, 'SSE');
    assert.equal(
      (await http(`${relay.url}/events`, { headers: auth })).headers['content-security-policy'],
      "frame-ancestors 'none'; base-uri 'none'; object-src 'none'",
    );
    want((await upgrade(relay.url, {})).headers, 'upgrade refused 401');
    want((await upgrade(`${relay.url}`, { authorization: 'Bearer hdr-token-0123456789' })).headers, '101');
    await relay.close();
  });
});

describe('draining on close (contract C5)', () => {
  it('close({drainMs}) refuses new connections, keeps ingesting and commits what connected emitters send, ends early when they leave', async () => {
    const path = join(tmp(), 'relay.sqlite');
    const TOKEN = 'drain-token-0123456789';
    const relay = await startRelay({ port: 0, storePath: path, token: TOKEN });
    const S = `drain-${ulid()}`;
    const em = await WsClient.open(relay.url, TOKEN);
    em.send({ type: 'hello', versions: ['0.1'], role: 'emitter', identity: { agent: 'aep-live-check' } });
    await em.waitFor((f) => f['type'] === 'hello');
    em.send(ev('session.started', S, 0));
    await sleep(50);
    const closed = relay.close({ drainMs: 20_000 });
    await sleep(50);
    // New connections are refused; the connected emitter still delivers its last Events.
    await assert.rejects(WsClient.open(relay.url, TOKEN));
    const last = [
      ev('attention.resolved', S, 1, { subject: 'q', data: { resolution: 'dismissed' } }),
      ev('session.ended', S, 2, { data: { reason: 'normal' } }),
    ];
    for (const e of last) em.send(e);
    await sleep(100);
    em.close(); // the wait ends early: no emitter left
    await closed;
    const again = await startRelay({ port: 0, storePath: path, token: TOKEN });
    const r = await http(`${again.url}/stream?live=0&filter=${encodeURIComponent(JSON.stringify({ session: S }))}`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    assert.deepEqual(
      r.body
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => (JSON.parse(l.slice(6)) as { seq: number }).seq),
      [0, 1, 2],
    );
    await again.close();
  });

  it('aep relay on SIGTERM lets a connected emitter finish within --drain, commits, exits 0', async () => {
    const path = join(tmp(), 'relay.sqlite');
    const TOKEN = 'drain-cli-token-0123456789';
    const child = spawnAep(['relay', '--port', '0', '--store', path, '--token', TOKEN, '--drain', '20000']);
    let err = '';
    child.stderr?.on('data', (b: Buffer) => {
      err += b;
    });
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      const t = setTimeout(() => reject(new Error(out + err)), 30_000);
      child.stdout?.on('data', (b: Buffer) => {
        out += b;
        const m = /listening on (\S+)/.exec(out);
        if (m) {
          clearTimeout(t);
          resolve(m[1]!);
        }
      });
    });
    const S = `drain-cli-${ulid()}`;
    const em = await WsClient.open(url, TOKEN);
    em.send({ type: 'hello', versions: ['0.1'], role: 'emitter', identity: { agent: 'aep-live-check' } });
    await em.waitFor((f) => f['type'] === 'hello');
    em.send(ev('session.started', S, 0));
    await sleep(100);
    const exited = new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    child.kill('SIGTERM');
    await sleep(200);
    em.send(ev('session.ended', S, 1, { data: { reason: 'interrupted' } }));
    await sleep(100);
    em.close();
    assert.equal(await exited, 0);
    assert.match(err, /SIGTERM: draining for up to 20000 ms/);
    assert.ok(!err.includes(TOKEN));
    const again = await startRelay({ port: 0, storePath: path, token: TOKEN });
    const r = await http(`${again.url}/stream?live=0&filter=${encodeURIComponent(JSON.stringify({ session: S }))}`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    assert.equal(r.body.split('\n').filter((l) => l.startsWith('data: ')).length, 2, 'the Event sent during the drain was committed');
    await again.close();
  });
});
