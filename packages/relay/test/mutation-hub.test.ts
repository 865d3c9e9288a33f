// The fan-out hub at unit level (issue 20, the mutation run's relay hub target: hub.ts): the
// backpressure policy at each of its boundaries (soft mark, hard mark, exactly `notice`, the
// counters by value, one warning per consumer), live fan-out to several subscriptions of one
// consumer, the queue a replaying subscription keeps, subscription specs and their refusals, and
// the per-ceiling rendering cache. The consumer's socket is a sink whose queue the test sets (the
// real Hub, Outgoing and ReplayBuffer; integration over real sockets is in promises.test.ts and
// stalled-readers.test.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CaptureLevel } from '@aep/protocol';
import { ReplayBuffer, type Entry, type ReplayPart } from '../src/buffer.js';
import { compileSpec, Hub, Outgoing, Subscription, type ConsumerSink, type SubscriptionSpec } from '../src/hub.js';
import { eventText, live } from './support/hub.js';

const SOFT = 1000;
const HARD = 5000;

class Sink implements ConsumerSink {
  readonly kind: 'sse' | 'ws';
  closed = false;
  queued = 0;
  readonly got: Array<{ sub: string; text: string; ceiling: CaptureLevel | undefined }> = [];
  readonly markers: Array<[string, string, { epoch: number; seq: number }]> = [];
  done: string[] = [];
  slowCalls = 0;
  constructor(kind: 'sse' | 'ws' = 'sse') {
    this.kind = kind;
  }
  buffered(): number {
    return this.queued;
  }
  deliver(s: Subscription, o: Outgoing, c: CaptureLevel | undefined): void {
    this.got.push({ sub: s.id, text: o.render(c), ceiling: c });
  }
  marker(s: Subscription, session: string, earliest: { epoch: number; seq: number }): void {
    this.markers.push([s.id, session, earliest]);
  }
  replayDone(s: Subscription): void {
    this.done.push(s.id);
  }
  disconnectSlow(): void {
    this.slowCalls++;
    this.closed = true;
  }
}

const raw = eventText;
/** An Outgoing with an explicit severity rank, or -1 (unknown: read from the Event). */
const out = live;
const spec = (s: Partial<SubscriptionSpec> = {}): SubscriptionSpec => ({ match: null, ceiling: undefined, from: null, ...s });
function setup(kind: 'sse' | 'ws' = 'sse') {
  const logs: string[] = [];
  const hub = new Hub({ slowConsumerBytes: SOFT, maxConsumerBytes: HARD }, (l) => logs.push(l));
  const sink = new Sink(kind);
  const sub = new Subscription('s1', spec(), sink, true);
  hub.add(sub);
  return { hub, sink, sub, logs };
}
const seqs = (s: Sink) => s.got.map((g) => (JSON.parse(g.text) as { seq: number }).seq);

describe('live backpressure: each boundary', () => {
  it('at the soft mark everything is delivered; above it debug/info are dropped and counted, notice+ delivered', () => {
    const { hub, sink, logs } = setup();
    sink.queued = SOFT;
    hub.publish(out('s', 0, 0));
    hub.publish(out('s', 1, 1));
    assert.deepEqual(seqs(sink), [0, 1]);
    assert.equal(hub.stats.dropped, 0);
    sink.queued = SOFT + 1;
    hub.publish(out('s', 2, 0));
    hub.publish(out('s', 3, 1));
    hub.publish(out('s', 4, 2));
    hub.publish(out('s', 5, 3));
    hub.publish(out('s', 6, 4));
    assert.deepEqual(seqs(sink), [0, 1, 4, 5, 6]);
    assert.equal(hub.stats.dropped, 2);
    assert.equal(hub.stats.delivered, 5);
    assert.equal(hub.stats.slowDisconnects, 0);
    assert.equal(hub.stats.maxQueuedBytes, SOFT + 1);
    assert.deepEqual(logs, ['slow sse consumer: dropping debug/info Events (AEP-0003 §8.4); counted in /healthz'], 'warned once per consumer');
  });

  it('without a known rank the severity is read from the Event (debug, info and none dropped; notice, warning, error kept)', () => {
    const { hub, sink } = setup();
    sink.queued = SOFT + 1;
    const sev = ['debug', 'info', undefined, 'notice', 'warning', 'error', 'critical'];
    sev.forEach((s, i) => hub.publish(out('s', i, -1, s === undefined ? {} : { severity: s })));
    assert.deepEqual(seqs(sink), [3, 4, 5, 6]);
    assert.equal(hub.stats.dropped, 3);
  });

  it('notice+ at the hard mark is delivered; above it the consumer is disconnected (once), and gets nothing more', () => {
    const { hub, sink, logs } = setup('ws');
    sink.queued = HARD;
    hub.publish(out('s', 0, 2));
    assert.deepEqual(seqs(sink), [0]);
    sink.queued = HARD + 1;
    hub.publish(out('s', 1, 1));
    assert.equal(hub.stats.dropped, 1, 'info above the hard mark is dropped, not a reason to disconnect');
    assert.equal(sink.slowCalls, 0);
    hub.publish(out('s', 2, 2));
    assert.equal(sink.slowCalls, 1);
    assert.equal(hub.stats.slowDisconnects, 1);
    assert.equal(hub.stats.subscriptions, 0);
    assert.equal(hub.consumerCount, 0);
    hub.publish(out('s', 3, 3));
    assert.deepEqual(seqs(sink), [0]);
    assert.equal(hub.stats.slowDisconnects, 1);
    assert.deepEqual(logs, [
      'slow ws consumer: dropping debug/info Events (AEP-0003 §8.4); counted in /healthz',
      'disconnecting a slow ws consumer that cannot take notice+ Events (AEP-0003 §8.4)',
    ]);
    assert.equal(hub.stats.maxQueuedBytes, HARD + 1);
  });

  it('maxQueuedBytes is the highest queue seen, not the latest', () => {
    const { hub, sink } = setup();
    sink.queued = 700;
    hub.publish(out('s', 0, 2));
    sink.queued = 10;
    hub.publish(out('s', 1, 2));
    assert.equal(hub.stats.maxQueuedBytes, 700);
  });

  it('two replaying subscriptions of one consumer over the hard mark: disconnected once, counted once', () => {
    const hub = new Hub({ slowConsumerBytes: 100, maxConsumerBytes: 200 }, () => {});
    const sink = new Sink();
    const a = new Subscription('a', spec(), sink, true);
    const b = new Subscription('b', spec(), sink, true);
    hub.add(a);
    hub.add(b);
    a.replaying = true;
    b.replaying = true;
    sink.queued = 201;
    hub.publish(out('s', 0, 3));
    assert.equal(sink.slowCalls, 1);
    assert.equal(hub.stats.slowDisconnects, 1);
    assert.equal(hub.stats.subscriptions, 0);
  });

  it('a closed consumer is skipped; an Event that cannot be rendered is skipped, not fatal', () => {
    const { hub, sink } = setup();
    sink.closed = true;
    hub.publish(out('s', 0, 2));
    assert.equal(sink.got.length, 0);
    assert.equal(hub.stats.delivered, 0);
    sink.closed = false;
    const broken = new Outgoing('{not json', 'progress.status', 's', [0, 1, 0], true, 3, 2);
    const sub2 = new Subscription('s2', spec({ ceiling: 'metadata' }), sink, true);
    hub.remove([...(hub as unknown as { consumers: Map<ConsumerSink, Subscription[]> }).consumers.get(sink)!][0]!);
    hub.add(sub2);
    hub.publish(broken);
    assert.equal(sink.got.length, 0);
    assert.equal(hub.stats.delivered, 0);
    hub.publish(out('s', 2, 2));
    assert.equal(hub.stats.delivered, 1);
  });
});

describe('live fan-out', () => {
  it('several subscriptions of one consumer: one delivery, at the highest ceiling that matched (none = as received)', () => {
    const hub = new Hub({ slowConsumerBytes: SOFT, maxConsumerBytes: HARD }, () => {});
    const sink = new Sink();
    const a = new Subscription('a', spec({ ceiling: 'none' }), sink, true);
    const b = new Subscription('b', spec({ ceiling: 'metadata' }), sink, true);
    const c = new Subscription('c', spec({ ceiling: 'none', match: (e) => e['session'] === 'other' }), sink, true);
    hub.add(a);
    hub.add(b);
    hub.add(c);
    assert.equal(hub.stats.subscriptions, 3);
    assert.equal(hub.consumerCount, 1);
    const o = new Outgoing(raw('s', 4, { capture: 'full', data: { message: 'secret' } }), 'progress.status', 's', [0, 4, 0], true, 3, 1);
    hub.publish(o);
    assert.equal(sink.got.length, 1);
    assert.equal(sink.got[0]!.sub, 'a', 'delivered under the first matching subscription');
    assert.equal(sink.got[0]!.ceiling, 'metadata');
    assert.ok(!sink.got[0]!.text.includes('secret'));
    assert.deepEqual(a.delivered.get('s'), [0, 4, 0]);
    assert.deepEqual(b.delivered.get('s'), [0, 4, 0]);
    assert.equal(c.delivered.size, 0);
    const d = new Subscription('d', spec(), sink, true);
    hub.add(d);
    hub.publish(new Outgoing(raw('s', 5, { capture: 'full', data: { message: 'secret' } }), 'progress.status', 's', [0, 5, 0], true, 3, 1));
    assert.equal(sink.got[1]!.ceiling, undefined, 'a subscription without a ceiling is the highest');
    assert.ok(sink.got[1]!.text.includes('secret'));
    // The highest ceiling wins whatever the order the subscriptions were made in.
    const sink2 = new Sink();
    const hi = new Subscription('hi', spec({ ceiling: 'redacted' }), sink2, true);
    const lo = new Subscription('lo', spec({ ceiling: 'none' }), sink2, true);
    hub.add(hi);
    hub.add(lo);
    hub.publish(new Outgoing(raw('s', 7, { capture: 'full', data: { message: 'secret' } }), 'progress.status', 's', [0, 7, 0], true, 3, 1));
    assert.deepEqual(
      sink2.got.map((g) => [g.sub, g.ceiling]),
      [['hi', 'redacted']],
    );
    hub.remove(hi);
    hub.remove(lo);
    // A matcher that throws is no match.
    const e = new Subscription(
      'e',
      spec({
        match: () => {
          throw new Error('boom');
        },
      }),
      new Sink(),
      true,
    );
    hub.add(e);
    hub.publish(out('s', 6, 1));
    assert.equal((e.sink as Sink).got.length, 0);
  });

  it('seq-less or session-less Events are delivered but not noted as positions', () => {
    const { hub, sink, sub } = setup();
    hub.publish(new Outgoing(raw('s', 0), 'progress.status', 's', [0, 0, 1], false, 0, 1));
    hub.publish(new Outgoing(raw('s', 1), 'agent.heartbeat', null, [0, -1, 1], true, 0, 1));
    assert.equal(sink.got.length, 2);
    assert.equal(sub.delivered.size, 0);
  });

  it('add/remove/removeSink keep the subscription count exact', () => {
    const hub = new Hub({ slowConsumerBytes: SOFT, maxConsumerBytes: HARD }, () => {});
    const s1 = new Sink();
    const s2 = new Sink();
    const a = new Subscription('a', spec(), s1, true);
    const b = new Subscription('b', spec(), s1, true);
    const c = new Subscription('c', spec(), s2, true);
    hub.add(a);
    hub.add(b);
    hub.add(c);
    assert.equal(hub.stats.subscriptions, 3);
    assert.equal(hub.consumerCount, 2);
    hub.remove(a);
    hub.remove(a);
    assert.equal(hub.stats.subscriptions, 2);
    assert.equal(hub.consumerCount, 2);
    hub.remove(new Subscription('x', spec(), new Sink(), true));
    assert.equal(hub.stats.subscriptions, 2);
    hub.remove(b);
    assert.equal(hub.consumerCount, 1);
    hub.removeSink(s1);
    assert.equal(hub.stats.subscriptions, 1);
    hub.removeSink(s2);
    hub.removeSink(s2);
    assert.equal(hub.stats.subscriptions, 0);
    assert.equal(hub.consumerCount, 0);
  });
});

describe('the queue of a replaying subscription', () => {
  it('queues what arrives during the replay and delivers it after, in order; over the hard mark info is dropped, notice disconnects', async () => {
    const buf = new ReplayBuffer({ depth: 100, maxSessions: 10, totalBytes: 1 << 30 }, null);
    const hub = new Hub({ slowConsumerBytes: 1 << 20, maxConsumerBytes: 400 }, () => {});
    const sink = new Sink();
    const sub = new Subscription('r', spec({ from: 'all' }), sink, true);
    hub.add(sub);
    sub.replaying = true;
    const a = out('s', 0, 1);
    const b = out('s', 1, 1);
    hub.publish(a);
    hub.publish(b);
    assert.equal(sub.pending.length, 2);
    assert.equal(sub.pendingBytes, a.raw.length + 64 + b.raw.length + 64);
    assert.equal(sink.got.length, 0);
    // Over the hard mark (pending + socket): info dropped and counted, nothing queued.
    sink.queued = 400 - sub.pendingBytes + 1;
    hub.publish(out('s', 2, 1));
    assert.equal(hub.stats.dropped, 1);
    assert.equal(sub.pending.length, 2);
    sink.queued = 0;
    await hub.replay(
      sub,
      buf.snapshotAll(),
      () => Promise.resolve(),
      (p, c, m) => buf.read(p, c, m),
    );
    assert.deepEqual(seqs(sink), [0, 1]);
    assert.equal(sub.replaying, false);
    assert.equal(sub.pendingBytes, 0);
    assert.deepEqual(sink.done, ['r']);
    // Exactly at the hard mark a notice is still queued; one byte over, the consumer is cut.
    const sub2 = new Subscription('r2', spec({ from: 'all' }), sink, true);
    hub.add(sub2);
    sub2.replaying = true;
    const c = out('s', 3, 2);
    sink.queued = 400 - (c.raw.length + 64);
    hub.publish(c);
    assert.equal(sub2.pending.length, 1, 'at the mark: queued');
    hub.publish(out('s', 4, 2));
    assert.equal(sub2.pending.length, 2, 'pending + socket exactly at the mark: still queued');
    assert.equal(sink.slowCalls, 0);
    sink.queued += 1;
    hub.publish(out('s', 5, 2));
    assert.equal(sink.slowCalls, 1);
    assert.equal(hub.stats.slowDisconnects, 1);
  });

  it('replay: markers first, then the held Events, then what arrived meanwhile; a cancelled or closed subscription stops', async () => {
    const buf = new ReplayBuffer({ depth: 3, maxSessions: 10, totalBytes: 1 << 30 }, null);
    const entry = (seq: number): Entry => {
      const r = raw('s', seq);
      return {
        rowid: seq + 1,
        source: 'aep://t',
        id: `r${seq}`,
        session: 's',
        pos: [0, seq, 0],
        positioned: true,
        type: 'progress.status',
        raw: r,
        bytes: r.length,
        rawRank: 0,
      };
    };
    for (let i = 0; i < 5; i++) buf.admit(entry(i));
    const hub = new Hub({ slowConsumerBytes: 1 << 20, maxConsumerBytes: 1 << 20 }, () => {});
    const sink = new Sink();
    const sub = new Subscription('m', spec({ from: [{ session: 's', epoch: 0, seq: 0 }] }), sink, true);
    const parts: ReplayPart[] = buf.snapshotFrom([{ session: 's', epoch: 0, seq: 0 }]);
    hub.add(sub);
    const p = hub.replay(
      sub,
      parts,
      () => Promise.resolve(),
      (x, c, m) => buf.read(x, c, m),
    );
    hub.publish(out('s', 9, 1));
    await p;
    assert.deepEqual(sink.markers, [['m', 's', { epoch: 0, seq: 2 }]]);
    assert.deepEqual(seqs(sink), [2, 3, 4, 9]);
    assert.equal(hub.stats.delivered, 4);
    assert.deepEqual(sub.delivered.get('s'), [0, 9, 0]);
    // Cancelled before it starts: nothing written, no replayDone.
    const sink2 = new Sink();
    const sub2 = new Subscription('c', spec({ from: 'all' }), sink2, false);
    sub2.cancelled = true;
    await hub.replay(
      sub2,
      buf.snapshotAll(),
      () => Promise.resolve(),
      (x, c, m) => buf.read(x, c, m),
    );
    assert.equal(sink2.got.length, 0);
    assert.deepEqual(sink2.done, []);
    // A matcher that throws skips the Event.
    const sink3 = new Sink();
    const sub3 = new Subscription(
      't',
      spec({
        from: 'all',
        match: (e) => {
          if (e['seq'] === 3) throw new Error('x');
          return true;
        },
      }),
      sink3,
      false,
    );
    await hub.replay(
      sub3,
      buf.snapshotAll(),
      () => Promise.resolve(),
      (x, c, m) => buf.read(x, c, m),
    );
    assert.deepEqual(seqs(sink3), [2, 4]);
    assert.deepEqual(sink3.done, ['t']);
  });
});

describe('subscription specs', () => {
  it('filter, capture and from: accepted forms', () => {
    const none = compileSpec(undefined, undefined, undefined, 10);
    assert.deepEqual(none, { ok: true, spec: { match: null, ceiling: undefined, from: null } });
    const empty = compileSpec({}, 'all', 'redacted', 10);
    assert.deepEqual(empty, { ok: true, spec: { match: null, ceiling: 'redacted', from: 'all' } });
    const f = compileSpec(
      { session: 's1' },
      [
        { session: 's1', seq: 3 },
        { session: 's2', epoch: 2, seq: 0 },
      ],
      'none',
      2,
    );
    assert.equal(f.ok, true);
    if (!f.ok) return;
    assert.equal(f.spec.match!({ session: 's1' }), true);
    assert.equal(f.spec.match!({ session: 's2' }), false);
    assert.deepEqual(f.spec.from, [
      { session: 's1', epoch: 0, seq: 3 },
      { session: 's2', epoch: 2, seq: 0 },
    ]);
    assert.equal(f.spec.ceiling, 'none');
    assert.deepEqual(compileSpec(undefined, [], undefined, 0), { ok: true, spec: { match: null, ceiling: undefined, from: [] } });
  });

  it('refusals name the rule', () => {
    const FILTER = 'filter must be a JSON object (AEP-0003 §6.1)';
    for (const bad of [null, [], 'x', 3]) assert.deepEqual(compileSpec(bad, undefined, undefined, 10), { ok: false, code: 'invalid-filter', detail: FILTER });
    const one = (k: string) =>
      `invalid-filter.unknown-key: invalid-filter.unknown-key: "${k}" is neither a filterable attribute nor a legal extension name at /${k}`;
    assert.deepEqual(compileSpec({ 'Bad-Key': 'x' }, undefined, undefined, 10), { ok: false, code: 'invalid-filter', detail: one('Bad-Key') });
    assert.deepEqual(compileSpec({ 'A-1': 1, 'B-2': 1, 'C-3': 1, 'D-4': 1 }, undefined, undefined, 10), {
      ok: false,
      code: 'invalid-filter',
      detail: ['A-1', 'B-2', 'C-3'].map(one).join('; '),
    });
    for (const c of ['secret', '', 'FULL', 2])
      assert.deepEqual(compileSpec(undefined, undefined, c, 10), {
        ok: false,
        code: 'invalid-filter',
        detail: 'capture must be one of none, metadata, redacted, full (AEP-0003 §6.4)',
      });
    for (const fr of ['some', {}, 5, null])
      assert.deepEqual(compileSpec(undefined, fr, undefined, 10), {
        ok: false,
        code: 'invalid-filter',
        detail: 'from must be an array of {session, epoch?, seq} or "all" (AEP-0003 §6.5, §7)',
      });
    assert.deepEqual(
      compileSpec(
        undefined,
        [
          { session: 'a', seq: 0 },
          { session: 'b', seq: 0 },
          { session: 'c', seq: 0 },
        ],
        undefined,
        2,
      ),
      { ok: false, code: 'limit-exceeded', detail: 'from has 3 positions; limit maxFromPositions is 2' },
    );
    const badFrom = [
      null,
      [],
      'x',
      { seq: 0 },
      { session: '', seq: 0 },
      { session: 5, seq: 0 },
      { session: 's' },
      { session: 's', seq: -1 },
      { session: 's', seq: 1.5 },
      { session: 's', seq: '1' },
      { session: 's', seq: 0, epoch: -1 },
      { session: 's', seq: 0, epoch: 0.5 },
      { session: 's', seq: 0, epoch: '0' },
    ];
    for (const p of badFrom) {
      assert.deepEqual(
        compileSpec(undefined, [{ session: 'ok', seq: 0 }, p], undefined, 10),
        { ok: false, code: 'invalid-filter', detail: 'from[1] must be {session: string, epoch?: integer >= 0, seq: integer >= 0} (AEP-0003 §7)' },
        JSON.stringify(p),
      );
    }
  });
});

describe('Outgoing: rendering per ceiling, built once', () => {
  it('raw bytes at or above the raw rank; gated below it, cached per ceiling; frames cached per binding and ceiling', () => {
    const text = raw('s', 1, { capture: 'full', data: { message: 'secret' } });
    const o = new Outgoing(text, 'progress.status', 's', [0, 1, 0], true, 3, 1);
    assert.equal(o.render(undefined), text);
    assert.equal(o.render('full'), text);
    const meta = o.render('metadata');
    assert.notEqual(meta, text);
    assert.ok(!meta.includes('secret'));
    assert.equal(o.render('metadata'), meta, 'same text again');
    let builds = 0;
    const f1 = o.frame('sse', 'metadata', (_o, t) => {
      builds++;
      return `data: ${t}\n\n`;
    });
    const f2 = o.frame('sse', 'metadata', (_o, t) => {
      builds++;
      return `X${t}`;
    });
    assert.equal(f1, f2);
    assert.equal(f1, `data: ${meta}\n\n`);
    const f3 = o.frame('ws', 'metadata', (_o, t) => {
      builds++;
      return t;
    });
    const f4 = o.frame('sse', undefined, (_o, t) => {
      builds++;
      return t;
    });
    assert.equal(f3, meta);
    assert.equal(f4, text);
    assert.equal(builds, 3);
    // Each of the three (two kept in fields, the third past them) is built once, found again after.
    const again = (b: 'sse' | 'ws', c: 'metadata' | undefined): string =>
      o.frame(b, c, () => {
        builds++;
        return 'rebuilt';
      });
    assert.equal(again('sse', undefined), f4);
    assert.equal(again('ws', 'metadata'), f3);
    assert.equal(again('sse', 'metadata'), f1);
    assert.equal(builds, 3);
    // An Event whose gating changes nothing is sent as its raw bytes (not re-serialized).
    const plain =
      '{"aep":"0.1",  "id":"p1","type":"progress.status","time":"2026-01-01T00:00:00Z","source":"aep://t","agent":"a","session":"s","seq":1,"capture":"metadata"}';
    const q = new Outgoing(plain, 'progress.status', 's', [0, 1, 0], true, 3, 1);
    assert.equal(q.render('metadata'), plain);
    assert.deepEqual(q.event, JSON.parse(plain));
    const entry: Entry = {
      rowid: 1,
      source: 'aep://t',
      id: 'p1',
      session: 's',
      pos: [0, 1, 0],
      positioned: true,
      type: 'progress.status',
      raw: plain,
      bytes: plain.length,
      rawRank: 1,
    };
    const fe = Outgoing.fromEntry(entry);
    assert.deepEqual(
      [fe.raw, fe.type, fe.session, fe.pos, fe.positioned, fe.rawRank, fe.severityRank],
      [plain, 'progress.status', 's', [0, 1, 0], true, 1, -1],
    );
  });
});
