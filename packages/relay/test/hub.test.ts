// The fan-out loop's backpressure, at unit level (the real Hub and ReplayBuffer; the consumer's
// socket is a sink whose queue the test controls): checked before every Event in replay, a
// stalled replay pins nothing the buffer evicts and is disconnected rather than given a gap,
// and it never holds up another consumer (issue 12 item 5, AEP-0003 §8).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CaptureLevel } from '@aep/protocol';
import { ReplayBuffer, type Entry } from '../src/buffer.js';
import { Hub, Outgoing, Subscription, type ConsumerSink } from '../src/hub.js';

const SLOW = 1000;
const MAX = 5000;

class TestSink implements ConsumerSink {
  readonly kind = 'sse' as const;
  closed = false;
  queued = 0;
  readonly got: string[] = [];
  slowDisconnected = false;
  private waiters: Array<() => void> = [];
  buffered(): number {
    return this.queued;
  }
  deliver(_s: Subscription, o: Outgoing, c: CaptureLevel | undefined): void {
    this.got.push(o.render(c));
    this.queued += o.raw.length;
  }
  marker(): void {}
  replayDone(): void {}
  disconnectSlow(): void {
    this.closed = true;
    this.slowDisconnected = true;
    this.drain();
  }
  drained(): Promise<void> {
    return this.queued === 0 || this.closed ? Promise.resolve() : new Promise((r) => this.waiters.push(r));
  }
  drain(): void {
    this.queued = 0;
    for (const w of this.waiters.splice(0)) w();
  }
}

let row = 1;
function entry(session: string, seq: number, size = 300, severity = 'info'): Entry {
  const raw = JSON.stringify({
    aep: '0.1',
    id: `e${row}`,
    type: 'progress.status',
    time: '2026-01-01T00:00:00Z',
    source: 'aep://t',
    agent: 'a',
    session,
    seq,
    severity,
    pad: 'x'.repeat(size),
  });
  return {
    rowid: row++,
    source: 'aep://t',
    id: `e${row}`,
    session,
    pos: [0, seq, 0],
    positioned: true,
    type: 'progress.status',
    raw,
    bytes: raw.length,
    rawRank: 3,
  };
}
const seqOf = (t: string) => (JSON.parse(t) as { seq: number }).seq;
const tick = () => new Promise<void>((r) => setImmediate(r));

describe('hub replay backpressure', () => {
  it('stops writing above the soft mark after one Event, and resumes exactly when drained', async () => {
    const buf = new ReplayBuffer({ depth: 1000, maxSessions: 10, totalBytes: 1 << 30 }, null);
    for (let i = 0; i < 20; i++) buf.admit(entry('s', i));
    const hub = new Hub({ slowConsumerBytes: SLOW, maxConsumerBytes: MAX }, () => {});
    const sink = new TestSink();
    const sub = new Subscription('r', { match: null, ceiling: undefined, from: 'all' }, sink, true);
    const done = hub.replay(
      sub,
      buf.snapshotAll(),
      () => sink.drained(),
      (p, c, m) => buf.read(p, c, m),
    );
    await tick();
    // ~430-byte Events, soft mark 1000: three written (the third crosses it), then nothing.
    assert.deepEqual(sink.got.map(seqOf), [0, 1, 2]);
    sink.drain();
    await tick();
    assert.deepEqual(sink.got.map(seqOf), [0, 1, 2, 3, 4, 5]);
    for (let i = 0; i < 10; i++) {
      sink.drain();
      await tick();
    }
    await done;
    assert.deepEqual(
      sink.got.map(seqOf),
      Array.from({ length: 20 }, (_, i) => i),
    );
    assert.equal(sink.slowDisconnected, false);
  });

  it('a stalled replay whose remaining Events are evicted meanwhile is disconnected, never given a gap', async () => {
    const buf = new ReplayBuffer({ depth: 10, maxSessions: 10, totalBytes: 1 << 30 }, null);
    for (let i = 0; i < 10; i++) buf.admit(entry('s', i));
    const hub = new Hub({ slowConsumerBytes: SLOW, maxConsumerBytes: MAX }, () => {});
    const sink = new TestSink();
    const sub = new Subscription('r', { match: null, ceiling: undefined, from: 'all' }, sink, false);
    const done = hub.replay(
      sub,
      buf.snapshotAll(),
      () => sink.drained(),
      (p, c, m) => buf.read(p, c, m),
    );
    await tick();
    assert.deepEqual(sink.got.map(seqOf), [0, 1, 2]);
    for (let i = 10; i < 20; i++) buf.admit(entry('s', i)); // evicts 0..9: 3..9 were still owed
    sink.drain();
    await done;
    assert.equal(sink.slowDisconnected, true);
    assert.deepEqual(sink.got.map(seqOf), [0, 1, 2], 'nothing after the gap');
    assert.equal(hub.stats.slowDisconnects, 1);
  });

  it('a replayed Event whose stored bytes are gone (evicted before the store read) disconnects, never a gap (issue 19)', async () => {
    const buf = new ReplayBuffer({ depth: 100, maxSessions: 10, totalBytes: 1 << 30 }, null);
    for (let i = 0; i < 10; i++) buf.admit(entry('s', i, 10));
    const hub = new Hub({ slowConsumerBytes: 1 << 20, maxConsumerBytes: 1 << 21 }, () => {});
    const sink = new TestSink();
    const sub = new Subscription('r', { match: null, ceiling: undefined, from: 'all' }, sink, false);
    // The store answers for the first four rows, then finds the fifth deleted meanwhile.
    const fetch = async (es: readonly Entry[]) => es.map((e, k) => (k < 4 ? e.raw : null));
    await hub.replay(
      sub,
      buf.snapshotAll(),
      () => sink.drained(),
      (p, c, m) => buf.read(p, c, m),
      fetch,
    );
    assert.equal(sink.slowDisconnected, true);
    assert.deepEqual(sink.got.map(seqOf), [0, 1, 2, 3], 'delivered up to the missing Event, nothing after it');
  });

  it('a replay resumed after evictions that did not touch what it still owed goes on without a gap', async () => {
    const buf = new ReplayBuffer({ depth: 10, maxSessions: 10, totalBytes: 1 << 30 }, null);
    for (let i = 0; i < 10; i++) buf.admit(entry('s', i));
    buf.admit(entry('t', 0));
    const hub = new Hub({ slowConsumerBytes: SLOW, maxConsumerBytes: MAX }, () => {});
    const sink = new TestSink();
    const sub = new Subscription('r', { match: null, ceiling: undefined, from: [{ session: 't', epoch: 0, seq: 0 }] }, sink, false);
    const parts = buf.snapshotFrom([{ session: 's', epoch: 0, seq: 6 }]);
    const done = hub.replay(
      sub,
      parts,
      () => sink.drained(),
      (p, c, m) => buf.read(p, c, m),
    );
    await tick();
    assert.deepEqual(sink.got.map(seqOf), [7, 8, 9]);
    await done;
    assert.equal(sink.slowDisconnected, false);
  });

  it('a stalled replay never holds up live delivery to another consumer', async () => {
    const buf = new ReplayBuffer({ depth: 1000, maxSessions: 10, totalBytes: 1 << 30 }, null);
    for (let i = 0; i < 50; i++) buf.admit(entry('s', i));
    const hub = new Hub({ slowConsumerBytes: SLOW, maxConsumerBytes: MAX }, () => {});
    const stalled = new TestSink();
    const fast = new TestSink();
    const a = new Subscription('a', { match: null, ceiling: undefined, from: 'all' }, stalled, true);
    const b = new Subscription('b', { match: null, ceiling: undefined, from: null }, fast, true);
    hub.add(a);
    hub.add(b);
    void hub.replay(
      a,
      buf.snapshotAll(),
      () => stalled.drained(),
      (p, c, m) => buf.read(p, c, m),
    );
    await tick();
    for (let i = 50; i < 60; i++) {
      const e = entry('s', i, 400, i % 2 ? 'notice' : 'info');
      buf.admit(e);
      hub.publish(new Outgoing(e.raw, e.type, e.session, e.pos, e.positioned, e.rawRank, i % 2 ? 2 : 1));
      fast.drain();
    }
    assert.deepEqual(
      fast.got.map(seqOf),
      Array.from({ length: 10 }, (_, i) => 50 + i),
    );
    assert.equal(stalled.got.length, 3, 'the stalled replay wrote nothing more');
    // Its live queue is bounded: info dropped, then a notice over the hard mark disconnects it.
    for (let i = 60; i < 100; i++) {
      const e = entry('s', i, 400, 'notice');
      hub.publish(new Outgoing(e.raw, e.type, e.session, e.pos, e.positioned, e.rawRank, 2));
    }
    assert.equal(stalled.slowDisconnected, true);
  });
});
