// Bounded memory under stalled readers (issue 12 item 5): `aep relay` as a real process, its
// retention filled, then 20 SSE and 25 WebSocket consumers that replay everything and never
// read, while twice the retention more is ingested and a fast consumer follows live. The relay's
// RSS is measured from /proc and reported (the bench, not this test, asserts speed); the only
// size assertion is a generous sanity bound. The fast consumer gets every notice Event and the
// last one (a stalled reader never blocks the others; info MAY be dropped for any consumer that
// falls behind, even for a moment, AEP-0003 §8).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import WebSocket from 'ws';
import { spawnAep } from '../../../test/support/cli.js';
import { ev, http, sleep, sse } from './helpers.js';

const MiB = 1024 * 1024;
const RETAIN = 32 * MiB;
const PAD = 'x'.repeat(16 * 1024);

function rss(pid: number): { rss: number; peak: number } {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(s)?.[1] ?? 0) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}
const mb = (n: number) => `${(n / MiB).toFixed(0)} MB`;

async function postBatch(url: string, events: Array<Record<string, unknown>>): Promise<void> {
  const r = await http(`${url}/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-ndjson', 'aep-version': '0.1' },
    body: events.map((e) => JSON.stringify(e)).join('\n') + '\n',
    timeoutMs: 60_000,
  });
  assert.equal(r.status, 202);
}

describe('stalled readers', () => {
  it('20 SSE + 25 WebSocket consumers that never read keep the relay near retention + a fixed overhead', async (t) => {
    const child = spawnAep(['relay', '--port', '0', '--memory', '--retain-bytes', String(RETAIN), '--buffer', '100000', '--quiet']);
    let out = '';
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`relay did not start: ${out}`)), 30_000);
      child.stdout?.on('data', (b: Buffer) => {
        out += b.toString('utf8');
        const m = /AEP relay listening on (http:\/\/\S+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
    });
    const pid = child.pid!;
    const sockets: Socket[] = [];
    const wss: WebSocket[] = [];
    try {
      await sleep(200);
      const start = rss(pid);
      // Fill the retention: 32 MiB of 16 KiB info Events over 8 sessions.
      let seq = 0;
      const batch = (n: number, sev: (i: number) => string) =>
        Array.from({ length: n }, (_, i) =>
          ev('progress.status', `stall-${seq % 8}`, seq++, { severity: sev(i), capture: 'redacted', data: { message: PAD } }),
        );
      for (let i = 0; i < RETAIN / PAD.length / 64; i++)
        await postBatch(
          url,
          batch(64, () => 'info'),
        );
      const filled = rss(pid);
      const { port } = new URL(url);
      // 20 SSE readers replaying everything, that never read (raw TCP, paused).
      for (let i = 0; i < 20; i++) {
        const s = connect(Number(port), '127.0.0.1');
        await new Promise<void>((r) => s.once('connect', () => r()));
        s.on('error', () => {});
        s.write(`GET /stream?from=all HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\n\r\n`);
        s.pause();
        sockets.push(s);
      }
      // 25 WebSocket readers replaying everything, that never read past the upgrade.
      for (let i = 0; i < 25; i++) {
        const w = new WebSocket(`${url.replace('http', 'ws')}/socket`);
        w.on('error', () => {});
        await new Promise<void>((r) => w.once('open', () => r()));
        w.send(JSON.stringify({ type: 'hello', versions: ['0.1'], role: 'consumer' }));
        w.send(JSON.stringify({ type: 'subscribe', id: 'stall', from: 'all' }));
        (w as unknown as { _socket: Socket })._socket.pause();
        wss.push(w);
      }
      // A fast consumer following live.
      const fast = sse(url, `filter=${encodeURIComponent(JSON.stringify({ type: 'progress.status' }))}`);
      assert.equal(await fast.status, 200);
      await sleep(300);
      const stalled = rss(pid);
      // Ingest twice the retention more: info, with a notice every 16 Events (and last).
      const notices: string[] = [];
      let total = 0;
      const rounds = (2 * RETAIN) / PAD.length / 32;
      for (let i = 0; i < rounds; i++) {
        const b = batch(32, (j) => (j % 16 === 0 || (i === rounds - 1 && j === 31) ? 'notice' : 'info'));
        for (const e of b) if (e['severity'] === 'notice') notices.push(e['id'] as string);
        total += b.length;
        await postBatch(url, b);
      }
      const last = notices[notices.length - 1]!;
      await fast.waitFor((m) => m.some((x) => x.data?.includes(last) === true), 120_000);
      const got = new Set(fast.events().map((e) => e['id']));
      assert.deepEqual(
        notices.filter((id) => !got.has(id)),
        [],
        'the fast consumer received every notice Event',
      );
      fast.close();
      const end = rss(pid);
      const h = (await http(`${url}/healthz`)).json as Record<string, number>;
      const report = `relay RSS: start ${mb(start.rss)}, retention filled ${mb(filled.rss)}, 45 stalled readers attached ${mb(stalled.rss)}, after ${mb(2 * RETAIN)} more ${mb(end.rss)}; peak ${mb(end.peak)} (retention ${mb(RETAIN)}); fast consumer got ${got.size}/${total}; dropped ${h['dropped']}, slow disconnects ${h['slowDisconnects']}, max queued ${mb(h['maxQueuedBytes'] ?? 0)}`;
      t.diagnostic(report);
      process.stderr.write(`${report}\n`);
      // Sanity only: far below what an unbounded queue per reader would take (45 x 96 MiB).
      assert.ok(end.peak < start.rss + 6 * RETAIN + 600 * MiB, report);
    } finally {
      for (const s of sockets) s.destroy();
      for (const w of wss) w.terminate();
      child.kill('SIGKILL');
    }
  });
});
