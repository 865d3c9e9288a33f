// The replay buffer at unit level (issue 20, the mutation run's relay store target: buffer.ts is
// the index the SQLite store mirrors): what the store is told (inserts, removals, eviction marks,
// forgotten tombstones) by value, positions of seq-less Events, least-recently-written session
// eviction and its tombstones (bounded), the byte cap's eviction order, out-of-order arrival,
// snapshots and the gap a slow reader is told about. buffer.property.test.ts checks resume
// against a model; these pin the rest.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ReplayBuffer, cmpPos, type BufferSink, type Entry, type Pos } from '../src/buffer.js';

class Rec implements BufferSink {
  readonly ops: string[] = [];
  insert(e: Entry): void {
    this.ops.push(`+${e.id}`);
  }
  remove(e: Entry): void {
    this.ops.push(`-${e.id}`);
  }
  evicted(session: string, pos: Pos | null): void {
    this.ops.push(pos ? `!${session}@${pos.join('.')}` : `~${session}`);
  }
}
let row = 1;
function e(
  session: string | null,
  seq: number,
  id = `e${row}`,
  opts: { sub?: number; epoch?: number; positioned?: boolean; bytes?: number; source?: string } = {},
): Entry {
  const base = `{"id":"${id}","s":"${session}","seq":${seq}}`;
  // `bytes`: the raw text padded to exactly that many bytes (the buffer counts the bytes it holds).
  const raw = opts.bytes === undefined ? base : `${base.slice(0, -1)},"p":"${'x'.repeat(opts.bytes - base.length - 7)}"}`;
  return {
    rowid: row++,
    source: opts.source ?? 'src',
    id,
    session,
    pos: [opts.epoch ?? 0, seq, opts.sub ?? 0],
    positioned: opts.positioned ?? true,
    type: 'progress.status',
    raw,
    bytes: raw.length,
    rawRank: 1,
  };
}
const ids = (xs: Entry[]) => xs.map((x) => x.id);
const big = { depth: 1000, maxSessions: 100, totalBytes: 1 << 30 };

describe('ReplayBuffer: what the store is told', () => {
  it('inserts, depth evictions (remove + the eviction mark), never for a duplicate, nothing when loading', () => {
    const sink = new Rec();
    const b = new ReplayBuffer({ depth: 2, maxSessions: 10, totalBytes: 1 << 30 }, sink);
    b.admit(e('s', 0, 'a'));
    b.admit(e('s', 1, 'b'));
    b.admit(e('s', 2, 'c'));
    assert.equal(b.admit(e('s', 2, 'c')), 'duplicate');
    b.admit(e('s', 3, 'd'), false);
    assert.deepEqual(sink.ops, ['+a', '+b', '+c', '-a', '!s@0.0.0', '-b', '!s@0.1.0']);
    assert.deepEqual(b.stats, { evicted: 2, sessionsEvicted: 0, duplicates: 1 });
    assert.equal(b.heldEvents, 2);
    assert.equal(b.sessionCount, 1);
    assert.equal(b.has('src', 'c'), true);
    assert.equal(b.has('src', 'a'), false);
    assert.equal(b.has('other', 'c'), false);
  });

  it('an eviction mark only moves up (an out-of-order lower Event evicted later does not lower it)', () => {
    const sink = new Rec();
    const b = new ReplayBuffer({ depth: 2, maxSessions: 10, totalBytes: 1 << 30 }, sink);
    b.admit(e('s', 5, 'a'));
    b.admit(e('s', 6, 'b'));
    b.admit(e('s', 7, 'c')); // evicts 5
    b.admit(e('s', 1, 'low')); // below everything: held first, evicted at once
    assert.deepEqual(
      sink.ops.filter((x) => x.startsWith('!')),
      ['!s@0.5.0'],
    );
    assert.deepEqual(sink.ops.slice(-2), ['+low', '-low']);
  });

  it('the least recently written session is evicted past the session cap; its tombstone keeps the marker', () => {
    const sink = new Rec();
    const b = new ReplayBuffer({ depth: 2, maxSessions: 2, totalBytes: 1 << 30 }, sink);
    b.admit(e('s1', 0, 'a'));
    b.admit(e('s2', 0, 'b'));
    b.admit(e('s1', 1, 'c')); // s1 written last
    b.admit(e('s3', 0, 'd'));
    assert.equal(b.sessionCount, 2);
    assert.equal(b.stats.sessionsEvicted, 1);
    assert.deepEqual(sink.ops.slice(-3), ['+d', '-b', '!s2@0.0.0']);
    const [part] = b.snapshotFrom([{ session: 's2', epoch: 0, seq: 0 }]);
    assert.deepEqual(part, { session: 's2', after: [0, 0, 0], until: null, evictedAtStart: [0, 0, 0] });
    const [before] = b.snapshotFrom([{ session: 's2', epoch: 0, seq: -1 } as never]);
    assert.deepEqual(before!.exhausted, { epoch: 0, seq: 1 }, 'nothing held: the marker names the next position');
    assert.deepEqual(b.snapshotFrom([{ session: 'never', epoch: 0, seq: 0 }]), []);
    // The session comes back: it starts from its tombstone (seq-less position after it) and resumes with a marker.
    assert.deepEqual(b.nextUnpositioned('s2'), [0, 0, 1]);
    b.admit(e('s2', 5, 'f'));
    const [back] = b.snapshotFrom([{ session: 's2', epoch: 0, seq: -1 } as never]);
    assert.deepEqual(back!.exhausted, { epoch: 0, seq: 5 });
  });

  it('tombstones are bounded at four times the session cap; the oldest is forgotten in the store', () => {
    const sink = new Rec();
    const b = new ReplayBuffer({ depth: 1, maxSessions: 1, totalBytes: 1 << 30 }, sink);
    for (let i = 0; i < 7; i++) {
      b.admit(e(`t${i}`, 0, `x${i}`));
      b.admit(e(`t${i}`, 1, `y${i}`));
    }
    // t0..t5 evicted as sessions (t6 held): tombstones t0..t5, cap 4 -> t0 and t1 forgotten.
    assert.deepEqual(
      sink.ops.filter((x) => x.startsWith('~')),
      ['~t0', '~t1'],
    );
    assert.deepEqual(b.snapshotFrom([{ session: 't1', epoch: 0, seq: 0 }]), []);
    assert.equal(b.snapshotFrom([{ session: 't2', epoch: 0, seq: 0 }]).length, 1);
  });

  it('restoreEvicted: a held session gets its mark, another one a tombstone', () => {
    const b = new ReplayBuffer(big, null);
    b.admit(e('h', 10, 'h10'));
    b.restoreEvicted('h', [0, 9, 0]);
    b.restoreEvicted('gone', [2, 4, 0]);
    assert.deepEqual(b.snapshotFrom([{ session: 'h', epoch: 0, seq: 3 }])[0]!.exhausted, { epoch: 0, seq: 10 });
    assert.deepEqual(b.snapshotFrom([{ session: 'h', epoch: 0, seq: 9 }])[0]!.exhausted, undefined);
    assert.deepEqual(b.snapshotFrom([{ session: 'gone', epoch: 1, seq: 0 }])[0]!.exhausted, { epoch: 2, seq: 5 });
    assert.deepEqual(b.snapshotFrom([{ session: 'gone', epoch: 2, seq: 4 }])[0]!.exhausted, undefined);
    assert.deepEqual(b.nextUnpositioned('gone'), [2, 4, 1]);
  });
});

describe('ReplayBuffer: positions, order, caps', () => {
  it('seq-less positions follow the last held Event of their session (or agent bucket)', () => {
    const b = new ReplayBuffer(big, null);
    assert.deepEqual(b.nextUnpositioned('s'), [0, -1, 1]);
    assert.deepEqual(b.nextUnpositioned(null), [0, -1, 1]);
    b.admit(e('s', 4, 'p', { epoch: 2 }));
    assert.deepEqual(b.nextUnpositioned('s'), [2, 4, 1]);
    b.admit(e('s', 4, 'q', { epoch: 2, sub: 1, positioned: false }));
    assert.deepEqual(b.nextUnpositioned('s'), [2, 4, 2]);
    b.admit(e(null, -1, 'g', { sub: 1, positioned: false }));
    assert.deepEqual(b.nextUnpositioned(null), [0, -1, 2]);
    assert.equal(b.lastPositioned('s')!.id, 'p', 'the seq-less one is skipped');
    assert.equal(b.lastPositioned('nope'), undefined);
  });

  it('lastPositioned looks back at most 64 Events', () => {
    const b = new ReplayBuffer(big, null);
    b.admit(e('s', 0, 'first'));
    for (let i = 1; i <= 63; i++) b.admit(e('s', 0, `u${i}`, { sub: i, positioned: false }));
    assert.equal(b.lastPositioned('s')!.id, 'first');
    b.admit(e('s', 0, 'u64', { sub: 64, positioned: false }));
    assert.equal(b.lastPositioned('s'), undefined);
  });

  it('out-of-order arrival is held in position order; equal positions keep arrival order', () => {
    const b = new ReplayBuffer(big, null);
    for (const [seq, id] of [
      [5, 'a'],
      [3, 'b'],
      [4, 'c'],
      [3, 'd'],
      [9, 'e'],
      [0, 'f'],
      [4, 'g'],
    ] as const)
      b.admit(e('s', seq, id));
    const [part] = b.snapshotAll();
    assert.deepEqual(ids(b.read(part!, null, 100).entries), ['f', 'b', 'd', 'c', 'g', 'a', 'e']);
    assert.deepEqual(ids(b.read(part!, [0, 3, 0], 100).entries), ['c', 'g', 'a', 'e'], 'strictly after the cursor');
    assert.deepEqual(ids(b.read(part!, null, 2).entries), ['f', 'b'], 'at most max');
    assert.ok(cmpPos([1, 0, 0], [0, 9, 9]) > 0 && cmpPos([0, 1, 0], [0, 0, 9]) > 0 && cmpPos([0, 0, 1], [0, 0, 0]) > 0 && cmpPos([0, 0, 0], [0, 0, 0]) === 0);
  });

  it('the byte cap evicts the oldest of the least recently written session first, agent-scoped last, never the only Event', () => {
    const sink = new Rec();
    const b = new ReplayBuffer({ depth: 100, maxSessions: 10, totalBytes: 3000 }, sink);
    b.admit(e(null, -1, 'g1', { sub: 1, positioned: false, bytes: 1000 }));
    b.admit(e('old', 0, 'o1', { bytes: 500 }));
    b.admit(e('old', 1, 'o2', { bytes: 500 }));
    b.admit(e('new', 0, 'n1', { bytes: 1000 }));
    assert.equal(b.heldBytes, 3000);
    b.admit(e('new', 1, 'n2', { bytes: 600 })); // 3600: o1 then o2 (old emptied and dropped as a session)
    assert.deepEqual(
      sink.ops.filter((x) => x.startsWith('-')),
      ['-o1', '-o2'],
    );
    assert.equal(b.sessionCount, 1);
    assert.equal(b.stats.sessionsEvicted, 1);
    assert.equal(b.heldBytes, 2600);
    b.admit(e('new', 2, 'n3', { bytes: 1000 })); // 3600: the agent-scoped one goes before the writing session's own
    assert.deepEqual(
      sink.ops.filter((x) => x.startsWith('-')),
      ['-o1', '-o2', '-g1'],
    );
    b.admit(e('new', 3, 'n4', { bytes: 1000 })); // 3600: its own oldest
    assert.deepEqual(sink.ops.filter((x) => x.startsWith('-')).slice(-1), ['-n1']);
    const huge = new ReplayBuffer({ depth: 100, maxSessions: 10, totalBytes: 10 }, null);
    huge.admit(e('h', 0, 'h0', { bytes: 50 }));
    assert.equal(huge.heldEvents, 1, 'a single Event larger than the cap stays');
    huge.admit(e('h', 1, 'h1', { bytes: 50 }));
    assert.deepEqual(ids(huge.read(huge.snapshotAll()[0]!, null, 10).entries), ['h1']);
    assert.equal(huge.heldBytes, 50);
  });

  it('long runs compact the session array and keep everything right (3000 Events, depth 10)', () => {
    const b = new ReplayBuffer({ depth: 10, maxSessions: 10, totalBytes: 1 << 30 }, null);
    for (let i = 0; i < 3000; i++) b.admit(e('s', i, `k${i}`));
    assert.equal(b.heldEvents, 10);
    assert.equal(b.stats.evicted, 2990);
    assert.deepEqual(
      ids(b.read(b.snapshotAll()[0]!, null, 100).entries),
      Array.from({ length: 10 }, (_, i) => `k${2990 + i}`),
    );
    assert.equal(b.has('src', 'k2989'), false);
    assert.equal(b.has('src', 'k2990'), true);
    b.admit(e('s', 1500, 'mid'));
    assert.equal(b.has('src', 'mid'), false, 'below the held window: evicted at once');
  });
});

describe('ReplayBuffer: dedupe index and admitRaw', () => {
  it('one id from three sources, evicted one by one, unindexes exactly the evicted one', () => {
    const b = new ReplayBuffer({ depth: 3, maxSessions: 10, totalBytes: 1 << 30 }, null);
    b.admit(e('s', 0, 'X', { source: 'a' }));
    b.admit(e('s', 1, 'X', { source: 'b' }));
    b.admit(e('s', 2, 'X', { source: 'c' }));
    assert.equal(b.heldEvents, 3);
    b.admit(e('s', 3, 'Y'));
    assert.deepEqual(
      ['a', 'b', 'c'].map((s) => b.has(s, 'X')),
      [false, true, true],
    );
    b.admit(e('s', 4, 'Z'));
    assert.deepEqual(
      ['a', 'b', 'c'].map((s) => b.has(s, 'X')),
      [false, false, true],
    );
    b.admit(e('s', 5, 'W'));
    assert.deepEqual(
      ['a', 'b', 'c'].map((s) => b.has(s, 'X')),
      [false, false, false],
    );
    assert.equal(b.heldEvents, 3);
    assert.equal(b.admit(e('s', 6, 'X', { source: 'a' })), 'admitted');
  });

  it('admitRaw (the ingest path) takes a row id only for a new (source, id), and tells the sink the received bytes', () => {
    const sink = new Rec();
    const b = new ReplayBuffer(big, sink);
    let next = 100;
    const admit = (id: string, source: string, seq: number) => {
      const raw = Buffer.from(`xx{"id":"${id}","src":"${source}"}yy`);
      return b.admitRaw(() => next++, source, id, 's', [0, seq, 0], true, 'progress.status', 1, raw, raw.length - 4, undefined, 2);
    };
    assert.equal(admit('X', 'a', 0), 'admitted');
    assert.equal(admit('X', 'a', 1), 'duplicate');
    assert.equal(admit('X', 'b', 2), 'admitted');
    assert.equal(admit('X', 'c', 3), 'admitted');
    assert.equal(admit('X', 'b', 4), 'duplicate');
    assert.equal(next, 103);
    assert.equal(b.stats.duplicates, 2);
    assert.equal(b.heldEvents, 3);
    assert.deepEqual(sink.ops, ['+X', '+X', '+X']);
    const held = b.read(b.snapshotAll()[0]!, null, 10).entries;
    assert.deepEqual(
      held.map((x) => [x.rowid, x.source, x.raw]),
      [
        [100, 'a', '{"id":"X","src":"a"}'],
        [101, 'b', '{"id":"X","src":"b"}'],
        [102, 'c', '{"id":"X","src":"c"}'],
      ],
    );
  });
});

describe('ReplayBuffer: snapshots and reads', () => {
  it('snapshotAll: the agent bucket first, then sessions least recently written first', () => {
    const b = new ReplayBuffer(big, null);
    b.admit(e('s1', 0, 'a'));
    b.admit(e('s2', 0, 'b'));
    b.admit(e(null, -1, 'g', { sub: 1, positioned: false }));
    b.admit(e('s1', 1, 'c'));
    const parts = b.snapshotAll();
    assert.deepEqual(
      parts.map((p) => [p.session, p.after, p.until, p.evictedAtStart]),
      [
        [null, null, [0, -1, 1], null],
        ['s2', null, [0, 0, 0], null],
        ['s1', null, [0, 1, 0], null],
      ],
    );
    assert.deepEqual(new ReplayBuffer(big, null).snapshotAll(), []);
    assert.deepEqual(ids(b.read(parts[2]!, null, 10).entries), ['a', 'c']);
    assert.deepEqual(ids(b.read(parts[0]!, null, 10).entries), ['g']);
  });

  it("read stops at the snapshot's newest position; Events admitted after it wait for live delivery", () => {
    const b = new ReplayBuffer(big, null);
    b.admit(e('s', 0, 'a'));
    b.admit(e('s', 1, 'b'));
    const [part] = b.snapshotFrom([{ session: 's', epoch: 0, seq: 0 }]);
    b.admit(e('s', 2, 'later'));
    assert.deepEqual(ids(b.read(part!, null, 10).entries), ['b']);
    assert.deepEqual(b.read(part!, [0, 1, 0], 10), { entries: [], gap: false });
  });

  it('a gap: what the reader still had to receive was evicted since the snapshot (never silently skipped)', () => {
    const b = new ReplayBuffer({ depth: 3, maxSessions: 10, totalBytes: 1 << 30 }, null);
    for (let i = 0; i < 3; i++) b.admit(e('s', i, `a${i}`));
    const [part] = b.snapshotAll();
    assert.deepEqual(b.read(part!, null, 1), { entries: [b.read(part!, null, 1).entries[0]!], gap: false });
    b.admit(e('s', 3, 'a3')); // evicts a0: the reader's cursor is before it
    assert.equal(b.read(part!, null, 10).gap, true);
    assert.equal(b.read(part!, [0, 0, 0], 10).gap, false, 'a cursor at the evicted one: nothing owed was lost');
    assert.deepEqual(ids(b.read(part!, [0, 0, 0], 10).entries), ['a1', 'a2']);
    // The agent bucket has its own high-water mark.
    const g = new ReplayBuffer({ depth: 1, maxSessions: 10, totalBytes: 1 << 30 }, null);
    g.admit(e(null, -1, 'g1', { sub: 1, positioned: false }));
    const [gp] = g.snapshotAll();
    g.admit(e(null, -1, 'g2', { sub: 2, positioned: false }));
    assert.equal(g.read(gp!, null, 10).gap, true);
    const [gp2] = g.snapshotAll();
    assert.deepEqual(g.read(gp2!, null, 10), { entries: [g.read(gp2!, null, 10).entries[0]!], gap: false });
    assert.equal(g.read(gp2!, null, 10).entries[0]!.id, 'g2');
    // A session evicted whole after the snapshot: its tombstone says gap.
    const t = new ReplayBuffer({ depth: 5, maxSessions: 1, totalBytes: 1 << 30 }, null);
    t.admit(e('x', 0, 'x0'));
    const [tp] = t.snapshotAll();
    t.admit(e('y', 0, 'y0'));
    assert.equal(t.read(tp!, null, 10).gap, true);
  });
});

describe('ReplayBuffer: survivors of the mutation run', () => {
  it("session evictions never move the agent bucket's mark (no false gap for agent-scoped readers)", () => {
    const b = new ReplayBuffer({ depth: 1, maxSessions: 10, totalBytes: 1 << 30 }, null);
    b.admit(e(null, -1, 'g1', { sub: 1, positioned: false }));
    const [agent] = b.snapshotAll();
    b.admit(e('s', 0, 's0'));
    b.admit(e('s', 1, 's1')); // evicts s0
    assert.deepEqual(b.read(agent!, null, 10), { entries: [b.read(agent!, null, 10).entries[0]!], gap: false });
  });

  it('two Events at one position: the eviction mark is written once', () => {
    const sink = new Rec();
    const b = new ReplayBuffer({ depth: 1, maxSessions: 10, totalBytes: 1 << 30 }, sink);
    b.admit(e('s', 0, 'a'));
    b.admit(e('s', 0, 'b'));
    b.admit(e('s', 1, 'c'));
    assert.deepEqual(
      sink.ops.filter((x) => x.startsWith('!')),
      ['!s@0.0.0'],
    );
  });

  it('the byte cap evicts one Event at a time from the least recently written session, not the whole session', () => {
    const b = new ReplayBuffer({ depth: 100, maxSessions: 10, totalBytes: 3000 }, null);
    for (let i = 0; i < 3; i++) b.admit(e('old', i, `o${i}`, { bytes: 500 }));
    b.admit(e('new', 0, 'n0', { bytes: 1500 }));
    b.admit(e('new', 1, 'n1', { bytes: 100 })); // 3100: o0 goes, o1 and o2 stay
    assert.equal(b.sessionCount, 2);
    assert.equal(b.heldBytes, 2600);
    assert.deepEqual(
      ids(
        b.read(
          b.snapshotAll().find((p) => p.session === 'old')!,
          null,
          10,
        ).entries,
      ),
      ['o1', 'o2'],
    );
  });

  it('lastPositioned never reads below the held window (evicted slots), even when all held Events are seq-less', () => {
    const b = new ReplayBuffer({ depth: 2, maxSessions: 10, totalBytes: 1 << 30 }, null);
    b.admit(e('s', 0, 'p'));
    b.admit(e('s', 0, 'u1', { sub: 1, positioned: false }));
    b.admit(e('s', 0, 'u2', { sub: 2, positioned: false })); // evicts p
    assert.equal(b.lastPositioned('s'), undefined);
  });
});
