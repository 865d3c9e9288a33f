// Durable store: what was answered 202 survives restarts and SIGKILL; replay across a restart
// is in (epoch, seq) order with the raw bytes; retention (and its markers) persists too.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { RelayStartError, startRelay } from '@aep/relay';
import { spawnAep } from '../../../test/support/cli.js';
import { WsClient, ev, http, post, ulid } from './helpers.js';

/**
 * `aep relay` as a subprocess. (Like test/support's startRelayProcess, whose 30 s start timer is
 * not cleared and keeps a test file alive; reported.)
 */
async function relayProcess(args: string[]): Promise<{ url: string; child: ChildProcess }> {
  const child = spawnAep(['relay', '--port', '0', ...args]);
  const url = await new Promise<string>((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`relay did not start: ${buf}`));
    }, 30_000);
    child.stdout?.on('data', (b: Buffer) => {
      buf += b.toString('utf8');
      const m = /^AEP relay listening on (http:\/\/\S+)\n/.exec(buf);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.stderr?.on('data', (b: Buffer) => {
      buf += b.toString('utf8');
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`relay exited early (${code}): ${buf}`));
    });
  });
  return { url, child };
}

const dirs: string[] = [];
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'aep-relay-'));
  dirs.push(d);
  return d;
}
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function dataLines(body: string): string[] {
  return body
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => l.slice(6));
}

describe('durable store', () => {
  it('replays across a restart in (epoch, seq) order with the raw bytes, then keeps going', async () => {
    const path = join(tmp(), 'relay.sqlite');
    const S = `dur-${ulid()}`;
    // Out-of-order arrival and an epoch bump: the replay orders by (epoch, seq).
    const lines = [
      JSON.stringify(ev('session.started', S, 0)),
      `{"aep":"0.1","id":"${ulid()}","type":"progress.status","time":"2026-01-01T00:00:00Z","source":"aep://x","agent":"a","session":"${S}","seq":2,  "epoch":0}`,
      JSON.stringify(ev('progress.status', S, 1)),
      JSON.stringify(ev('progress.status', S, 0, { epoch: 1 })),
    ];
    const r1 = await startRelay({ port: 0, storePath: path });
    const res = await http(`${r1.url}/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson', 'aep-version': '0.1' },
      body: lines.join('\r\n'),
    });
    assert.equal(res.status, 202);
    await r1.close();

    const r2 = await startRelay({ port: 0, storePath: path });
    const from = encodeURIComponent(JSON.stringify([{ session: S, epoch: 0, seq: 0 }]));
    const b = await http(`${r2.url}/stream?live=0&from=${from}`);
    assert.deepEqual(dataLines(b.body), [lines[2], lines[1], lines[3]]);
    // Dedupe survives the restart: re-posting a stored Event does not store it twice.
    assert.equal(
      (await http(`${r2.url}/events`, { method: 'POST', headers: { 'content-type': 'application/json', 'aep-version': '0.1' }, body: lines[0] })).status,
      202,
    );
    const e4 = JSON.stringify(ev('progress.status', S, 1, { epoch: 1 }));
    assert.equal(
      (await http(`${r2.url}/events`, { method: 'POST', headers: { 'content-type': 'application/json', 'aep-version': '0.1' }, body: e4 })).status,
      202,
    );
    const all = await http(`${r2.url}/stream?live=0&filter=${encodeURIComponent(JSON.stringify({ session: S }))}`);
    assert.deepEqual(dataLines(all.body), [lines[0], lines[2], lines[1], lines[3], e4]);
    // WS resume across the restart, too.
    const ws = await WsClient.open(r2.url);
    await ws.hello();
    ws.send({ type: 'subscribe', id: 'r', from: [{ session: S, epoch: 1, seq: 0 }] });
    await ws.waitFor((f) => f['id'] === JSON.parse(e4)['id']);
    assert.deepEqual(
      ws.texts.filter((t) => t.includes('"aep"')),
      [e4],
    );
    ws.close();
    await r2.close();
  });

  it('non-ASCII raw bytes (2-, 3- and 4-byte UTF-8, escapes kept as sent) survive a restart byte for byte', async () => {
    // The writer binds each raw Event as UTF-8 bytes stored as TEXT: mixed batches must not shift.
    // (`capture: redacted`: a `message` is free text, re-gated away at the default `metadata`.)
    const path = join(tmp(), 'relay.sqlite');
    const S = `utf-${ulid()}`;
    const lines = [
      `{"aep":"0.1","id":"${ulid()}","type":"progress.status","time":"2026-01-01T00:00:00Z","source":"aep://x/é","agent":"a","session":"${S}","seq":0,"epoch":0,"capture":"redacted","data":{"message":"café 漢字 🎉"}}`,
      `{"aep":"0.1","id":"${ulid()}","type":"progress.status","time":"2026-01-01T00:00:00Z","source":"aep://x","agent":"a","session":"${S}","seq":1,"epoch":0,"capture":"redacted","data":{"message":"\\u00e9 plain"}}`,
      `{"aep":"0.1","id":"${ulid()}","type":"progress.status","time":"2026-01-01T00:00:00Z","source":"aep://x","agent":"a","session":"${S}","seq":2,"epoch":0,"capture":"redacted","data":{"message":"ü${'ß'.repeat(300)}"}}`,
    ];
    const r1 = await startRelay({ port: 0, storePath: path });
    const res = await http(`${r1.url}/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson', 'aep-version': '0.1' },
      body: lines.join('\n'),
    });
    assert.equal(res.status, 202);
    await r1.close();
    const r2 = await startRelay({ port: 0, storePath: path });
    const all = await http(`${r2.url}/stream?live=0&filter=${encodeURIComponent(JSON.stringify({ session: S }))}`);
    assert.deepEqual(dataLines(all.body), lines);
    await r2.close();
  });

  it('evictions and their replay-exhausted marker persist across a restart', async () => {
    const path = join(tmp(), 'relay.sqlite');
    const S = `evp-${ulid()}`;
    const r1 = await startRelay({ port: 0, storePath: path, bufferDepth: 5 });
    assert.equal(
      (
        await post(
          r1.url,
          Array.from({ length: 9 }, (_, i) => ev('progress.status', S, i)),
        )
      ).status,
      202,
    );
    await r1.close();
    const r2 = await startRelay({ port: 0, storePath: path, bufferDepth: 5 });
    const from = encodeURIComponent(JSON.stringify([{ session: S, epoch: 0, seq: 0 }]));
    const b = await http(`${r2.url}/stream?live=0&from=${from}`);
    assert.match(b.body, new RegExp(`^: replay-exhausted ${S} 0:4\\n\\n`));
    assert.deepEqual(
      dataLines(b.body).map((l) => (JSON.parse(l) as { seq: number }).seq),
      [4, 5, 6, 7, 8],
    );
    assert.equal(r2.stats().held, 5);
    await r2.close();
    // A smaller depth on the next start trims the store to it.
    const r3 = await startRelay({ port: 0, storePath: path, bufferDepth: 2 });
    const b3 = await http(`${r3.url}/stream?live=0&from=${from}`);
    assert.match(b3.body, new RegExp(`^: replay-exhausted ${S} 0:7\\n\\n`));
    assert.equal(dataLines(b3.body).length, 2);
    await r3.close();
  });

  it('a second relay on the same store refuses to start (one writer per store)', async () => {
    const path = join(tmp(), 'relay.sqlite');
    const r1 = await startRelay({ port: 0, storePath: path });
    await assert.rejects(startRelay({ port: 0, storePath: path }), (e: unknown) => {
      assert.ok(e instanceof RelayStartError);
      assert.equal(e.code, 'AEP_RELAY_STORE_LOCKED');
      assert.equal(e.holder?.pid, process.pid);
      assert.equal(e.holder?.url, r1.url);
      assert.match(e.message, /--store PATH .* or --memory/);
      return true;
    });
    assert.equal((await post(r1.url, ev('session.started', 'lock', 0))).status, 202);
    await r1.close();
    const r2 = await startRelay({ port: 0, storePath: path });
    assert.equal(r2.stats().held, 1);
    await r2.close();
  });

  it('SIGKILL during a 100k-Event ingest loses no Event that was answered 202', async () => {
    const path = join(tmp(), 'relay.sqlite');
    const proc = await relayProcess(['--store', path, '--quiet']);
    const acked: string[] = [];
    const sessions = 20;
    const perBatch = 500;
    const total = 100_000;
    const seqs = new Array<number>(sessions).fill(0);
    let killed = false;
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < total && !killed) {
        const lines: string[] = [];
        const ids: string[] = [];
        for (let i = 0; i < perBatch; i++) {
          const s = (next + i) % sessions;
          const e = ev('progress.status', `kill-${s}`, seqs[s]!++, { data: { n: next + i } });
          lines.push(JSON.stringify(e));
          ids.push(e['id'] as string);
        }
        next += perBatch;
        let r;
        try {
          r = await http(`${proc.url}/events`, {
            method: 'POST',
            headers: { 'content-type': 'application/x-ndjson', 'aep-version': '0.1' },
            body: lines.join('\n') + '\n',
          });
        } catch {
          return;
        } // the relay died under us: not acknowledged
        if (r.status === 202) acked.push(...ids);
        if (!killed && acked.length >= total / 2) {
          killed = true;
          proc.child.kill('SIGKILL');
        }
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
    await new Promise<void>((resolve) => {
      if (proc.child.exitCode !== null || proc.child.signalCode !== null) resolve();
      else proc.child.once('exit', () => resolve());
    });
    assert.equal(proc.child.signalCode, 'SIGKILL');
    assert.ok(acked.length >= total / 2 && acked.length < total, `acked ${acked.length}`);

    const r2 = await startRelay({ port: 0, storePath: path });
    const body = (await http(`${r2.url}/stream?live=0&from=all`, { timeoutMs: 60_000 })).body;
    const got = new Set<string>();
    const lastSeq = new Map<string, number>();
    for (const l of dataLines(body)) {
      const e = JSON.parse(l) as { id: string; session: string; seq: number };
      got.add(e.id);
      const prev = lastSeq.get(e.session) ?? -1;
      assert.ok(e.seq > prev, 'replay ascends per session');
      lastSeq.set(e.session, e.seq);
    }
    const missing = acked.filter((id) => !got.has(id));
    assert.equal(missing.length, 0, `${missing.length} acknowledged Events lost`);
    await r2.close();
  });
});
