// The hub's replay-then-live promises at unit level (issue 20, mutation run of hub.ts; the first
// half is mutation-hub.test.ts): a replay reads the bytes a durable relay keeps in its store and
// queues what arrives meanwhile, delivered after, in order, once; above the soft mark it writes
// nothing more until the consumer drains (held Events and the queue alike); Events evicted while
// it waited, or whose bytes are gone, disconnect the consumer (it resumes exactly, never a silent
// gap, AEP-0003 §8.4); a consumer that leaves or unsubscribes stops its replay; markers come
// first in their session's part; a long replay yields to the event loop; the queue of delivered
// Events does not grow without bound and its accounted bytes stay exact. The real Hub,
// Subscription and ReplayBuffer (public methods only); the socket is support/hub.ts's HubSink.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ReplayBuffer, type Entry, type ReplayPart } from '../src/buffer.js';
import { compileSpec, Hub, Outgoing, Subscription, type RawFetcher, type ReplayReader } from '../src/hub.js';
import { entry, HubSink, live, queuedSize, spec, turn } from './support/hub.js';

const SOFT = 1000;
const HARD = 1 << 20;
const newBuffer = (depth = 100) => new ReplayBuffer({ depth, maxSessions: 10, totalBytes: 1 << 30 }, null);
const reader =
  (buf: ReplayBuffer): ReplayReader =>
  (p, c, m) =>
    buf.read(p, c, m);
function fill(buf: ReplayBuffer, session: string, from: number, to: number): Entry[] {
  const out: Entry[] = [];
  for (let i = from; i < to; i++) {
    const e = entry(session, i);
    assert.equal(buf.admit(e), 'admitted');
    out.push(e);
  }
  return out;
}
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);
function setup(soft = SOFT, hard = HARD) {
  const logs: string[] = [];
  const hub = new Hub({ slowConsumerBytes: soft, maxConsumerBytes: hard }, (l) => logs.push(l));
  return { hub, logs };
}

describe('replay, then what arrived meanwhile, then live', () => {
  it('a durable relay: bytes read back from the store; Events published during the read are queued and follow, in order, once', async () => {
    const buf = newBuffer();
    const store = new Map<number, string>();
    for (const e of fill(buf, 's', 0, 5)) store.set(e.rowid, e.raw);
    // The store committed them: their bytes leave memory; replay must read them back.
    for (const e of buf.read(buf.snapshotAll()[0]!, null, 100).entries) buf.spill(e);
    let release!: () => void;
    const committed = new Promise<void>((r) => (release = r));
    let fetches = 0;
    const fetch: RawFetcher = async (entries) => {
      fetches++;
      await committed;
      return entries.map((e) => store.get(e.rowid) ?? null);
    };
    const { hub } = setup();
    const sink = new HubSink();
    const sub = new Subscription('r', spec({ from: 'all' }), sink, true);
    hub.add(sub);
    const p = hub.replay(sub, buf.snapshotAll(), sink.drained, reader(buf), fetch);
    await turn();
    assert.equal(fetches, 1);
    hub.publish(live('s', 5, 1));
    hub.publish(live('s', 6, 2));
    assert.deepEqual(sink.seqs(), [], 'nothing live before the replay');
    assert.equal(sub.pending.length, 2);
    release();
    await p;
    hub.publish(live('s', 7, 1));
    assert.deepEqual(sink.seqs(), range(0, 8));
    assert.deepEqual(sink.done, ['r']);
    assert.equal(sub.replaying, false);
    assert.deepEqual(sub.pending, [], 'nothing kept once the replay is done');
    assert.equal(sub.pendingBytes, 0);
    assert.equal(hub.stats.delivered, 8);
    assert.deepEqual(sub.delivered.get('s'), [0, 7, 0]);
  });

  it('a synchronous fetcher (every entry in memory) is used as well: its bytes, not the entry’s', async () => {
    const buf = newBuffer();
    fill(buf, 's', 0, 3);
    const { hub } = setup();
    const sink = new HubSink();
    const sub = new Subscription('f', spec({ from: 'all' }), sink, false);
    hub.add(sub);
    // The bytes the store holds for each row (the same Event; here marked so the test can tell).
    const fetch: RawFetcher = (entries) => entries.map((e) => e.raw.replace('"agent":"a"', '"agent":"from-store"'));
    await hub.replay(sub, buf.snapshotAll(), sink.drained, reader(buf), fetch);
    assert.deepEqual(
      sink.events().map((e) => [e['seq'], e['agent']]),
      range(0, 3).map((i) => [i, 'from-store']),
    );
  });

  it('markers come first in their session’s part, one per exhausted part; replay-all and agent parts carry none', async () => {
    const buf = newBuffer(3);
    fill(buf, 'a', 0, 5); // 0, 1 evicted
    fill(buf, 'b', 0, 4); // 0 evicted
    const { hub } = setup();
    const sink = new HubSink();
    const from = [
      { session: 'a', epoch: 0, seq: 0 },
      { session: 'b', epoch: 0, seq: 2 },
    ];
    const sub = new Subscription('m', spec({ from }), sink, false);
    await hub.replay(sub, buf.snapshotFrom(from), sink.drained, reader(buf));
    assert.deepEqual(
      sink.written.map((w) =>
        w.kind === 'marker' ? `marker ${w.session} ${w.earliest.epoch}:${w.earliest.seq}` : `${JSON.parse(w.text).session}:${JSON.parse(w.text).seq}`,
      ),
      ['marker a 0:2', 'a:2', 'a:3', 'a:4', 'b:3'],
    );
    // Everything held, after evictions: no marker (nothing was asked for that is gone).
    const all = new HubSink();
    await hub.replay(new Subscription('all', spec({ from: 'all' }), all, false), buf.snapshotAll(), all.drained, reader(buf));
    assert.deepEqual(
      all.written.map((w) => w.kind),
      ['event', 'event', 'event', 'event', 'event', 'event'],
    );
    // A part without a session (agent-scoped Events) never gets a marker: a marker names a session.
    const agent = new HubSink();
    const part: ReplayPart = { session: null, after: null, until: null, evictedAtStart: null, exhausted: { epoch: 0, seq: 1 } };
    await hub.replay(new Subscription('ag', spec({ from: 'all' }), agent, false), [part], agent.drained, () => ({ entries: [], gap: false }));
    assert.deepEqual(agent.written, []);
    assert.deepEqual(agent.done, ['ag']);
  });

  it('a long replay yields to the event loop every 2,048 Events; what is published then follows the held Events', async () => {
    const buf = newBuffer(10_000);
    fill(buf, 'y', 0, 5000);
    const { hub } = setup();
    const sink = new HubSink();
    const sub = new Subscription('y', spec({ from: 'all' }), sink, true);
    hub.add(sub);
    let atYield = -1;
    setImmediate(() => {
      atYield = sink.written.length;
      hub.publish(live('y', 5000, 1));
    });
    await hub.replay(sub, buf.snapshotAll(), sink.drained, reader(buf));
    assert.equal(atYield, 2048, 'other work ran after exactly one batch of 2,048 Events');
    assert.deepEqual(sink.seqs(), range(0, 5001));
  });
});

describe('replay backpressure: nothing more is written above the soft mark until the consumer drains', () => {
  it('held Events and the queue alike wait; every Event arrives once, in order, none written above the mark', async () => {
    const buf = newBuffer();
    fill(buf, 's', 0, 12);
    const { hub } = setup();
    const sink = new HubSink('sse', true);
    const sub = new Subscription('b', spec({ from: 'all' }), sink, true);
    hub.add(sub);
    let finished = false;
    let queueWaits = 0;
    const drained = () => {
      if (sink.written.length >= 12) queueWaits++;
      return sink.drained();
    };
    const p = hub.replay(sub, buf.snapshotAll(), drained, reader(buf)).then(() => (finished = true));
    // The first pause: over the soft mark, waiting; nothing is written while the consumer does not read.
    await turn();
    const first = sink.written.length;
    assert.ok(first > 0 && first < 12, `paused after ${first}`);
    assert.ok(sink.queued > SOFT);
    assert.equal(sink.drains, 1);
    // Events ingested while it waits are queued (a text is about 130 bytes: 24 of them pass the mark twice).
    for (let i = 12; i < 36; i++) hub.publish(live('s', i, i % 2 === 0 ? 1 : 2));
    await turn();
    assert.equal(sink.written.length, first, 'no write while above the soft mark');
    let reads = 0;
    while (!finished) {
      sink.read();
      reads++;
      await turn();
      assert.ok(reads < 100, 'the replay makes progress on every read');
    }
    await p;
    assert.deepEqual(sink.seqs(), range(0, 36));
    assert.ok(sink.maxBeforeWrite <= SOFT, `written at ${sink.maxBeforeWrite} queued bytes, above the soft mark ${SOFT}`);
    assert.ok(queueWaits >= 1, 'the queue waited for the consumer as well');
    assert.equal(hub.stats.dropped, 0, 'a replaying subscription below the hard mark drops nothing');
    assert.deepEqual(sink.done, ['b']);
  });

  it('exactly at the soft mark the replay and the queue go on without waiting', async () => {
    const buf = newBuffer();
    fill(buf, 's', 0, 3);
    const store = new Map(buf.read(buf.snapshotAll()[0]!, null, 10).entries.map((e) => [e.rowid, e.raw]));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { hub } = setup();
    const sink = new HubSink();
    sink.queued = SOFT;
    const sub = new Subscription('x', spec({ from: 'all' }), sink, true);
    hub.add(sub);
    const p = hub.replay(sub, buf.snapshotAll(), sink.drained, reader(buf), async (es) => {
      await gate;
      return es.map((e) => store.get(e.rowid) ?? null);
    });
    hub.publish(live('s', 3, 1));
    release();
    await p;
    assert.deepEqual(sink.seqs(), [0, 1, 2, 3]);
    assert.equal(sink.drains, 0);
  });

  it('the highest socket queue seen while replaying is reported (maxQueuedBytes), not the latest', async () => {
    const buf = newBuffer();
    fill(buf, 's', 0, 3);
    const { hub } = setup();
    const sink = new HubSink();
    const queues = [700, 10, 20];
    sink.queued = 300;
    sink.onDeliver = () => (sink.queued = queues.shift() ?? 0);
    await hub.replay(new Subscription('q', spec({ from: 'all' }), sink, false), buf.snapshotAll(), sink.drained, reader(buf));
    assert.equal(sink.written.length, 3);
    assert.equal(hub.stats.maxQueuedBytes, 700);
  });
});

describe('replay never leaves a silent gap (AEP-0003 §8.4)', () => {
  it('Events evicted while the replay waited for the consumer: disconnected, nothing after the gap written', async () => {
    const buf = newBuffer(4);
    fill(buf, 's', 0, 4);
    const { hub, logs } = setup(300);
    const sink = new HubSink('ws', true);
    const sub = new Subscription('g', spec({ from: 'all' }), sink, true);
    hub.add(sub);
    const p = hub.replay(sub, buf.snapshotAll(), sink.drained, reader(buf));
    await turn();
    const before = sink.seqs();
    assert.ok(before.length >= 1 && before.length < 4, `paused after ${before.length}`);
    fill(buf, 's', 4, 8); // evicts 0..3
    sink.read();
    await p;
    assert.deepEqual(sink.seqs(), before, 'nothing written after the gap');
    assert.equal(sink.slowCalls, 1);
    assert.equal(hub.stats.slowDisconnects, 1);
    assert.equal(hub.stats.subscriptions, 0);
    assert.deepEqual(sink.done, [], 'the replay did not end as if complete');
    assert.deepEqual(logs, ['disconnecting a slow ws consumer that cannot take notice+ Events (AEP-0003 §8.4)']);
  });

  for (const [what, answer] of [
    ['null (the row was evicted before it could be read)', (raws: string[]) => [raws[0]!, raws[1]!, null, raws[3]!]],
    ['short (the fetcher answered fewer rows than asked)', (raws: string[]) => raws.slice(0, 2)],
  ] as const) {
    it(`an entry whose bytes come back ${what}: disconnected after the Events before it`, async () => {
      const buf = newBuffer();
      fill(buf, 's', 0, 4);
      const { hub } = setup();
      const sink = new HubSink();
      const sub = new Subscription('n', spec({ from: 'all' }), sink, true);
      hub.add(sub);
      await hub.replay(sub, buf.snapshotAll(), sink.drained, reader(buf), (es) => answer(es.map((e) => e.raw)));
      assert.deepEqual(sink.seqs(), [0, 1]);
      assert.equal(sink.slowCalls, 1);
      assert.deepEqual(sink.done, []);
    });
  }

  it('an Event whose bytes cannot be rendered for the ceiling is skipped; the replay goes on', async () => {
    const buf = newBuffer();
    for (let i = 0; i < 3; i++) buf.admit(entry('s', i, 3, { capture: 'full', data: { message: 'secret' } }));
    const { hub } = setup();
    const sink = new HubSink();
    const sub = new Subscription('c', spec({ from: 'all', ceiling: 'metadata' }), sink, false);
    await hub.replay(sub, buf.snapshotAll(), sink.drained, reader(buf), (es) => es.map((e, k) => (k === 1 ? '{not json' : e.raw)));
    assert.deepEqual(sink.seqs(), [0, 2]);
    assert.ok(sink.written.every((w) => w.kind === 'event' && !w.text.includes('secret')));
    assert.equal(hub.stats.delivered, 2);
    assert.deepEqual(sink.done, ['c']);
  });
});

describe('a consumer that leaves or unsubscribes stops its replay', () => {
  it('the connection closes mid-replay: nothing more written, no end of replay', async () => {
    const buf = newBuffer();
    fill(buf, 's', 0, 6);
    const { hub } = setup();
    const sink = new HubSink();
    sink.onDeliver = () => {
      if (sink.written.length === 2) sink.closed = true;
    };
    await hub.replay(new Subscription('c', spec({ from: 'all' }), sink, true), buf.snapshotAll(), sink.drained, reader(buf));
    assert.deepEqual(sink.seqs(), [0, 1]);
    assert.deepEqual(sink.done, []);
  });

  it('unsubscribed before its replay starts: no marker, nothing written', async () => {
    const buf = newBuffer(2);
    fill(buf, 's', 0, 5);
    const { hub } = setup();
    const sink = new HubSink();
    const from = [{ session: 's', epoch: 0, seq: 0 }];
    const sub = new Subscription('u', spec({ from }), sink, true);
    sub.cancelled = true;
    await hub.replay(sub, buf.snapshotFrom(from), sink.drained, reader(buf));
    assert.deepEqual(sink.written, []);
    assert.deepEqual(sink.done, []);
  });

  it('unsubscribed while the queue is flushed: the rest of the queue is not written', async () => {
    const buf = newBuffer();
    fill(buf, 's', 0, 2);
    const raws = new Map(buf.read(buf.snapshotAll()[0]!, null, 10).entries.map((e) => [e.rowid, e.raw]));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { hub } = setup();
    const sink = new HubSink();
    const sub = new Subscription('u', spec({ from: 'all' }), sink, true);
    hub.add(sub);
    const p = hub.replay(sub, buf.snapshotAll(), sink.drained, reader(buf), async (es) => {
      await gate;
      return es.map((e) => raws.get(e.rowid) ?? null);
    });
    for (let i = 2; i < 6; i++) hub.publish(live('s', i, 1));
    sink.onDeliver = (o) => {
      if (o.pos[1] === 3) sub.cancelled = true;
    };
    release();
    await p;
    assert.deepEqual(sink.seqs(), [0, 1, 2, 3]);
    assert.deepEqual(sink.done, []);
  });
});

describe('the queue of a replaying subscription, flushed', () => {
  it('3,000 queued Events: delivered in order; the delivered part is let go as it goes; accounted bytes exact throughout', async () => {
    const buf = newBuffer();
    fill(buf, 'q', 0, 1);
    const first = buf.read(buf.snapshotAll()[0]!, null, 1).entries[0]!.raw;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { hub } = setup(SOFT, 1 << 30);
    const sink = new HubSink();
    const sub = new Subscription('q', spec({ from: 'all' }), sink, true);
    hub.add(sub);
    const p = hub.replay(sub, buf.snapshotAll(), sink.drained, reader(buf), async (es) => {
      await gate;
      return es.map(() => first);
    });
    const N = 3000;
    for (let i = 1; i <= N; i++) hub.publish(live('q', i, 1));
    assert.equal(sub.pending.length, N);
    const problems: string[] = [];
    sink.onDeliver = () => {
      if (!sub.replaying || sink.written.length === 1) return;
      let bytes = 0;
      for (let k = sub.pendingHead; k < sub.pending.length; k++) bytes += queuedSize(sub.pending[k]!);
      if (sub.pendingBytes !== bytes) problems.push(`${sink.written.length}: pendingBytes ${sub.pendingBytes}, queued ${bytes}`);
      // Delivered slots still held: at most 1,024, or no more than the Events still to deliver.
      const undelivered = sub.pending.length - sub.pendingHead;
      if (sub.pendingHead > Math.max(1024, undelivered + 1) + 1)
        problems.push(`${sink.written.length}: ${sub.pendingHead} delivered slots held for ${undelivered}`);
    };
    release();
    await p;
    assert.deepEqual(problems.slice(0, 5), []);
    assert.deepEqual(sink.seqs(), range(0, N + 1));
    assert.deepEqual(sub.pending, []);
    assert.equal(sub.pendingBytes, 0);
  });
});

describe('Outgoing and subscription specs: what the first file left open', () => {
  it('frames are cached per binding and ceiling: two ceilings on one binding get their own frame', () => {
    const o = new Outgoing(
      JSON.stringify({
        aep: '0.1',
        id: 'f1',
        type: 'progress.status',
        time: '2026-01-01T00:00:00Z',
        source: 'aep://t',
        agent: 'a',
        session: 's',
        seq: 1,
        capture: 'full',
        data: { message: 'secret', path: '/home/someone/x' },
      }),
      'progress.status',
      's',
      [0, 1, 0],
      true,
      3,
      1,
    );
    const none = o.frame('sse', 'none', (_o, t) => t);
    const meta = o.frame('sse', 'metadata', (_o, t) => t);
    const full = o.frame('sse', 'full', (_o, t) => t);
    assert.equal(none, o.render('none'));
    assert.equal(meta, o.render('metadata'));
    assert.equal(full, o.render('full'));
    assert.notEqual(none, meta);
    assert.ok(full.includes('secret') && !meta.includes('secret'));
  });

  it('the parsed Event handed in is the one used (not parsed again), and a parse is kept', () => {
    const text = JSON.stringify({ aep: '0.1', id: 'p', session: 's', seq: 1 });
    const parsed = JSON.parse(text) as Record<string, unknown>;
    const o = new Outgoing(text, 'progress.status', 's', [0, 1, 0], true, 0, 1, parsed);
    assert.equal(o.event, parsed);
    const q = new Outgoing(text, 'progress.status', 's', [0, 1, 0], true, 0, 1);
    assert.equal(q.event, q.event);
  });

  it('from: a position must be a plain object, whatever else it carries', () => {
    const detail = 'from[0] must be {session: string, epoch?: integer >= 0, seq: integer >= 0} (AEP-0003 §7)';
    const arrayWithKeys = Object.assign([], { session: 's', seq: 0 });
    for (const p of [undefined, arrayWithKeys, () => 0, true])
      assert.deepEqual(compileSpec(undefined, [p], undefined, 10), { ok: false, code: 'invalid-filter', detail }, String(p));
  });
});

describe('live fan-out to a consumer disconnected by that very Event', () => {
  it('a notice that overflows one replaying subscription’s queue disconnects the consumer: its live subscription gets nothing more, nothing counted as delivered', () => {
    const { hub } = setup(1000, 300);
    const sink = new HubSink('ws');
    const replaying = new Subscription('replaying', spec({ from: 'all' }), sink, true);
    const following = new Subscription('live', spec(), sink, true);
    hub.add(replaying);
    hub.add(following);
    replaying.replaying = true;
    const first = live('s', 0, 1, { data: { message: 'x'.repeat(100) } });
    hub.publish(first); // queued for the replay (about 300 bytes accounted), and delivered live
    assert.equal(replaying.pending.length, 1);
    assert.deepEqual(sink.seqs(), [0]);
    hub.publish(live('s', 1, 2)); // over the hard mark for the replaying one: notice => disconnect
    assert.equal(sink.slowCalls, 1);
    assert.deepEqual(sink.seqs(), [0], 'nothing written to a consumer the hub disconnected');
    assert.equal(hub.stats.delivered, 1);
    assert.equal(hub.stats.slowDisconnects, 1);
    assert.equal(hub.stats.subscriptions, 0);
    assert.deepEqual(following.delivered.get('s'), [0, 0, 0], 'positions noted only for what was written');
  });
});
