// Fast tests without a relay: epoch allocation, the attention fold, and the SSE reader against a
// minimal scripted HTTP server (to feed it exact bytes: comments, duplicates, refusals).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AttentionFold, ClientError, subscribe } from '@aep/client';
import type { WireEvent } from '@aep/client';
import { allocateEpoch } from '../src/epoch.js';

test('durable epochs increase by one per start; a corrupt state file falls back to the clock seed', () => {
  const dir = mkdtempSync(join(tmpdir(), 'aep-epoch-'));
  try {
    assert.equal(allocateEpoch('a/b', dir), 0);
    assert.equal(allocateEpoch('a/b', dir), 1);
    assert.equal(allocateEpoch('other', dir), 0);
    assert.deepEqual(readdirSync(dir).sort(), ['epoch-a_b.json', 'epoch-other.json']);
    writeFileSync(join(dir, 'epoch-a_b.json'), '{not json');
    const before = Date.now();
    assert.ok(allocateEpoch('a/b', dir) >= before);
    assert.ok(allocateEpoch('x', undefined) >= before);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

const ev = (over: Partial<WireEvent>): WireEvent => ({
  aep: '0.1',
  id: 'x',
  type: 'attention.requested',
  time: '2026-01-01T00:00:00Z',
  source: 'aep://h/agent/a',
  agent: 'a',
  session: 's',
  ...over,
});

test('the attention fold opens, marks answered, closes, and sorts oldest first', () => {
  const f = new AttentionFold();
  assert.equal(f.push(ev({ id: 'r2', time: '2026-01-01T00:00:02Z', data: { kind: 'form' } })), 'opened');
  assert.equal(f.push(ev({ id: 'r1', time: '2026-01-01T00:00:01Z', session: 't' })), 'opened');
  assert.equal(f.push(ev({ id: 'r1', time: '2026-01-01T00:00:01Z', session: 't' })), undefined, 'redelivery');
  assert.deepEqual(
    f.pending().map((p) => p.id),
    ['r1', 'r2'],
  );
  assert.equal(f.push(ev({ id: 'a', type: 'attention.answered', subject: 'r2' })), 'answered');
  assert.equal(f.get('r2')?.answered, true);
  assert.equal(f.push(ev({ id: 'z', type: 'attention.resolved', subject: 'r2', session: 'other' })), undefined, 'another session');
  assert.equal(f.push(ev({ id: 'z', type: 'attention.resolved', subject: 'r2' })), 'closed');
  assert.equal(f.push(ev({ id: 't', type: 'attention.timeout', subject: 'r3' })), undefined);
  assert.equal(f.push(ev({ id: 'r3' })), undefined, 'a terminal seen first keeps it closed');
  assert.deepEqual(
    f.pending().map((p) => p.id),
    ['r1'],
  );
});

function sseServer(handler: (url: URL, write: (s: string) => void, end: (status?: number, body?: string) => void) => void) {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    let started = false;
    handler(
      url,
      (s) => {
        if (!started) {
          res.writeHead(200, { 'Content-Type': 'text/event-stream' });
          started = true;
        }
        res.write(s);
      },
      (status, body) => {
        if (!started && status) {
          res.writeHead(status, { 'Content-Type': 'application/json' });
          res.end(body);
          return;
        }
        res.end();
      },
    );
  });
  return new Promise<{ url: string; close: () => Promise<void>; requests: URL[] }>((resolve) => {
    const requests: URL[] = [];
    server.on('request', (req) => requests.push(new URL(req.url ?? '/', 'http://x')));
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        requests,
        close: () =>
          new Promise((r) => {
            server.closeAllConnections();
            server.close(() => r());
          }),
      }),
    );
  });
}

const line = (e: WireEvent) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\nid: ${e.session}:0:${e.seq}\n\n`;

test('SSE reader: dedupes on (source, id), reports replay-exhausted, ignores comments, ends a replay-only read', async () => {
  const a = ev({ id: 'e1', type: 'progress.status', seq: 4 });
  const b = ev({ id: 'e2', type: 'progress.status', seq: 5 });
  const sameIdOtherSource = ev({ id: 'e1', type: 'progress.status', seq: 6, source: 'aep://h/agent/b' });
  const srv = await sseServer((_u, write, end) => {
    write(': replay-exhausted s 0:4\n\n');
    write(line(a) + ': ping\n\n' + line(a));
    write(line(b).slice(0, 20));
    setTimeout(() => {
      write(line(b).slice(20) + line(sameIdOtherSource));
      end();
    }, 20);
  });
  try {
    const got: string[] = [];
    const exhausted: unknown[] = [];
    const sub = subscribe(
      {
        url: srv.url,
        token: 'tok',
        filter: { session: 's' },
        ceiling: 'metadata',
        from: 'all',
        live: false,
        onReplayExhausted: (s, e) => exhausted.push([s, e]),
      },
      (e) => got.push(`${e.source}|${e.id}`),
    );
    await sub.done;
    assert.deepEqual(got, ['aep://h/agent/a|e1', 'aep://h/agent/a|e2', 'aep://h/agent/b|e1']);
    assert.deepEqual(exhausted, [['s', { epoch: 0, seq: 4 }]]);
    assert.deepEqual(sub.positions(), [{ session: 's', epoch: 0, seq: 6 }]);
    const q = srv.requests[0];
    assert.equal(q?.searchParams.get('from'), 'all');
    assert.equal(q?.searchParams.get('live'), '0');
    assert.equal(q?.searchParams.get('capture'), 'metadata');
    assert.deepEqual(JSON.parse(q?.searchParams.get('filter') ?? ''), { session: 's' });
    assert.equal(q?.searchParams.get('access_token'), null, 'the token travels in the header only');
  } finally {
    await srv.close();
  }
});

test('SSE reader: a live stream that drops resumes from the last positions; a 400 is fatal (no retry loop)', async () => {
  let n = 0;
  const srv = await sseServer((u, write, end) => {
    n++;
    if (u.searchParams.get('filter') === '{"bad":1}') return end(400, '{"error":"invalid-filter"}');
    if (n === 1) {
      write(line(ev({ id: 'e1', type: 'progress.status', seq: 1 })));
      setTimeout(() => end(), 10);
      return;
    }
    write(line(ev({ id: 'e1', type: 'progress.status', seq: 1 })) + line(ev({ id: 'e2', type: 'progress.status', seq: 2 })));
  });
  try {
    const got: string[] = [];
    const sub = subscribe({ url: srv.url, reconnect: { initialMs: 10, maxMs: 20 } }, (e) => got.push(e.id));
    const start = Date.now();
    while (got.length < 2 && Date.now() - start < 5_000) await new Promise((r) => setTimeout(r, 10));
    sub.close();
    await sub.done;
    assert.deepEqual(got, ['e1', 'e2']);
    assert.deepEqual(JSON.parse(srv.requests[1]?.searchParams.get('from') ?? 'null'), [{ session: 's', epoch: 0, seq: 1 }]);

    const bad = subscribe({ url: srv.url, filter: { bad: 1 } }, () => {});
    await assert.rejects(bad.done, (err: unknown) => err instanceof ClientError && err.code === 'AEP_CLIENT_HTTP' && /400/.test(err.message));
    await assert.rejects(bad.ready);
  } finally {
    await srv.close();
  }
});
