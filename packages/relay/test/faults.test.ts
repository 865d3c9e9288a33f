// Faults: consumers killed and resumed mid-stream; stalled consumers (AEP-0003 §7, §8.4).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { request } from 'node:http';
import { startRelay } from '@aep/relay';
import WebSocket from 'ws';
import { ev, http, post, sleep } from './helpers.js';

describe('faults', () => {
  it('a consumer killed and resumed 100 times mid-stream gets every Event exactly once after dedupe', async () => {
    const relay = await startRelay({ port: 0, storePath: null });
    const base = relay.url;
    const sessions = ['kr-a', 'kr-b', 'kr-c'];
    const posted: string[] = [];
    const seqs = new Map(sessions.map((s) => [s, 0]));
    // seq 0 of each session first, so every resume can name every session.
    const firsts = sessions.map((s) => ev('session.started', s, 0));
    assert.equal((await post(base, firsts)).status, 202);
    for (const f of firsts) posted.push(f['id'] as string);
    for (const s of sessions) seqs.set(s, 1);
    let producing = true;
    const producer = (async () => {
      for (let round = 0; round < 150; round++) {
        const batch = Array.from({ length: 20 }, (_, i) => {
          const s = sessions[(round + i) % sessions.length]!;
          const seq = seqs.get(s)!;
          seqs.set(s, seq + 1);
          return ev('progress.status', s, seq, { severity: i % 3 === 0 ? 'notice' : 'info' });
        });
        assert.equal((await post(base, batch)).status, 202);
        for (const e of batch) posted.push(e['id'] as string);
        await sleep(3);
      }
      producing = false;
    })();

    const seen = new Map<string, number>(); // id -> deliveries
    const pos = new Map<string, number>(sessions.map((s) => [s, -1]));
    const fromParam = () => sessions.map((s) => ({ session: s, epoch: 0, seq: Math.max(pos.get(s)!, 0) }));
    const onEvent = (e: { id: string; session: string; seq: number }, connSeen: Map<string, number>) => {
      seen.set(e.id, (seen.get(e.id) ?? 0) + 1);
      const prev = connSeen.get(e.session) ?? -1;
      assert.ok(e.seq > prev, `ascending within a connection (${e.session} ${prev} -> ${e.seq})`);
      connSeen.set(e.session, e.seq);
      if (e.seq > pos.get(e.session)!) pos.set(e.session, e.seq);
    };
    const sseCycle = (stopAfter: number, maxMs: number) =>
      new Promise<void>((resolve) => {
        const connSeen = new Map<string, number>();
        const unseenFirst = sessions.some((s) => pos.get(s)! < 0);
        const q = unseenFirst ? 'from=all' : `from=${encodeURIComponent(JSON.stringify(fromParam()))}`;
        let n = 0;
        let buf = '';
        const req = request(`${base}/stream?${q}`, (res) => {
          res.setEncoding('utf8');
          res.on('data', (c: string) => {
            buf += c;
            let i: number;
            while ((i = buf.indexOf('\n\n')) >= 0) {
              const block = buf.slice(0, i);
              buf = buf.slice(i + 2);
              const d = /^data: (.*)$/m.exec(block);
              if (d) {
                onEvent(JSON.parse(d[1]!) as { id: string; session: string; seq: number }, connSeen);
                n++;
              }
              if (n >= stopAfter) {
                req.destroy();
                resolve();
                return;
              }
            }
          });
        });
        req.on('error', () => resolve());
        req.end();
        setTimeout(() => {
          req.destroy();
          resolve();
        }, maxMs);
      });
    const wsCycle = (stopAfter: number, maxMs: number) =>
      new Promise<void>((resolve) => {
        const connSeen = new Map<string, number>();
        const ws = new WebSocket(`${base.replace('http', 'ws')}/socket`);
        let n = 0;
        ws.on('error', () => resolve());
        ws.on('open', () => {
          ws.send(JSON.stringify({ type: 'hello', versions: ['0.1'], role: 'consumer' }));
          const unseen = sessions.some((s) => pos.get(s)! < 0);
          ws.send(JSON.stringify({ type: 'subscribe', id: 'k', from: unseen ? 'all' : fromParam() }));
        });
        ws.on('message', (d: Buffer) => {
          const f = JSON.parse(d.toString('utf8')) as { id: string; session: string; seq: number; aep?: string };
          if (f.aep === undefined) return;
          onEvent(f, connSeen);
          n++;
          if (n >= stopAfter) {
            ws.terminate();
            resolve();
          }
        });
        setTimeout(() => {
          ws.terminate();
          resolve();
        }, maxMs);
      });

    for (let cycle = 0; cycle < 100; cycle++) {
      const stopAfter = 1 + ((cycle * 37) % 40);
      await (cycle % 2 === 0 ? sseCycle(stopAfter, 200) : wsCycle(stopAfter, 200));
    }
    await producer;
    assert.equal(producing, false);
    // Final catch-up connection, bounded.
    for (let i = 0; i < 20 && seen.size < posted.length; i++) await sseCycle(100_000, 300);
    const missing = posted.filter((id) => !seen.has(id));
    assert.equal(missing.length, 0, `${missing.length} Events never delivered`);
    assert.equal(seen.size, posted.length, 'nothing extra');
    await relay.close();
  });

  it('a stalled consumer does not grow the relay memory without bound', async () => {
    const relay = await startRelay({ port: 0, storePath: null, slowConsumerBytes: 64 * 1024, maxConsumerBytes: 256 * 1024, totalBytes: 2 * 1024 * 1024 });
    const base = relay.url;
    const { port } = new URL(base);
    // SSE consumer that never reads: raw TCP, paused.
    const sock = connect(Number(port), '127.0.0.1');
    await new Promise<void>((r) => sock.once('connect', () => r()));
    sock.write(`GET /stream HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\n\r\n`);
    sock.pause();
    // WS consumer that never reads.
    const ws = new WebSocket(`${base.replace('http', 'ws')}/socket`);
    await new Promise<void>((r) => ws.once('open', () => r()));
    ws.send(JSON.stringify({ type: 'hello', versions: ['0.1'], role: 'consumer' }));
    ws.send(JSON.stringify({ type: 'subscribe', id: 'stall' }));
    await sleep(100);
    (ws as unknown as { _socket: { pause(): void } })._socket.pause();
    await sleep(50);
    const pad = 'x'.repeat(2000);
    // ~40 MB of info Events: dropped for the stalled consumers, never queued without bound.
    for (let b = 0; b < 100; b++) {
      const batch = Array.from({ length: 200 }, (_, i) =>
        ev('progress.status', `stall-${b % 5}`, b * 200 + i, { severity: 'info', capture: 'redacted', data: { message: pad } }),
      );
      assert.equal((await post(base, batch)).status, 202);
    }
    let s = relay.stats();
    assert.ok(s.dropped > 0, 'debug/info dropped and counted');
    assert.ok(s.maxQueuedBytes <= 256 * 1024 + 8 * 1024, `queue bounded: ${s.maxQueuedBytes}`);
    assert.ok(s.heldBytes <= 2 * 1024 * 1024, 'retention bounded');
    // notice+ is never dropped silently: the stalled consumers are disconnected instead.
    for (let b = 0; b < 20; b++) {
      await post(
        base,
        Array.from({ length: 100 }, (_, i) =>
          ev('progress.status', 'stall-n', b * 100 + i, { severity: 'warning', capture: 'redacted', data: { message: pad } }),
        ),
      );
    }
    s = relay.stats();
    assert.ok(s.slowDisconnects >= 2, `slow consumers disconnected: ${s.slowDisconnects}`);
    assert.equal(s.consumers, 0);
    const h = await http(`${base}/healthz`);
    assert.equal((h.json as Record<string, unknown>)['slowDisconnects'], s.slowDisconnects);
    assert.ok(((h.json as Record<string, unknown>)['dropped'] as number) > 0);
    sock.destroy();
    ws.terminate();
    await relay.close();
  });
});
