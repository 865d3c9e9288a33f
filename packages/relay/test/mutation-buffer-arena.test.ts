// The replay buffer's off-heap arena (issue 19's memory bound, pinned for issue 20's mutation run
// of buffer.ts): raw Event bytes live in 1 MiB slabs; an Event over 256 KiB gets a slab of its
// own; a slab nothing lives in any more is released; slabs made sparse by evictions are compacted
// once enough was written since the last compaction, so the memory held stays within ~1.15x of
// the bytes held (+4 MiB). Every figure below is exact (arenaStats), computed from those rules,
// and every held Event's bytes are read back intact after each step.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ReplayBuffer, type Entry } from '../src/buffer.js';

const SLAB = 1 << 20;
const BIG = SLAB >> 2;
let row = 1;
/** An Event of exactly `bytes` bytes in `session`. */
function ev(session: string, bytes: number): Entry {
  const id = `a${row}`;
  const head = `{"id":"${id}","p":"`;
  const raw = `${head}${String.fromCharCode(97 + (row % 26)).repeat(bytes - head.length - 2)}"}`;
  assert.equal(raw.length, bytes);
  return { rowid: row++, source: 'src', id, session, pos: [0, row, 0], positioned: true, type: 'progress.status', raw, bytes, rawRank: 1 };
}
/** Every held Event's bytes, read back from the arena, against what was admitted. */
function intact(b: ReplayBuffer, sent: Map<string, string>): number {
  let n = 0;
  for (const part of b.snapshotAll())
    for (const got of b.read(part, null, Infinity).entries) {
      assert.equal(got.raw, sent.get(got.id), `bytes of ${got.id}`);
      const copy = Buffer.alloc(got.bytes);
      assert.equal(got.copyRaw?.(copy, 0), got.bytes);
      assert.equal(copy.toString('utf8'), sent.get(got.id));
      n++;
    }
  assert.equal(n, b.heldEvents);
  return n;
}
function admit(b: ReplayBuffer, sent: Map<string, string>, e: Entry): void {
  assert.equal(b.admit(e), 'admitted');
  sent.set(e.id, e.raw);
}
const E100K = 100_000; // 10 per slab
/**
 * Slabs of ten 100 kB Events, slab k holding `aPerSlab[k]` of session A first and the rest of B
 * (so B is written last); then an Event of C evicts A (two sessions at most).
 */
function evictA(aPerSlab: readonly number[]): { b: ReplayBuffer; sent: Map<string, string> } {
  const b = new ReplayBuffer({ depth: 1000, maxSessions: 2, totalBytes: 1 << 30 }, null);
  const sent = new Map<string, string>();
  for (const a of aPerSlab) for (let i = 0; i < 10; i++) admit(b, sent, ev(i < a ? 'A' : 'B', E100K));
  admit(b, sent, ev('C', E100K));
  return { b, sent };
}

describe('ReplayBuffer arena', () => {
  it('starts with one slab; fills it exactly; an Event of exactly 256 KiB shares it, one byte more gets a slab of its own, released with it', () => {
    const b = new ReplayBuffer({ depth: 1000, maxSessions: 10, totalBytes: 1 << 30 }, null);
    const sent = new Map<string, string>();
    assert.deepEqual(b.arenaStats, { allocated: SLAB, live: 0, slabs: 1, compactions: 0 });
    admit(b, sent, ev('a', BIG));
    admit(b, sent, ev('a', BIG));
    admit(b, sent, ev('a', BIG));
    admit(b, sent, ev('a', BIG)); // 4 x 256 KiB = exactly one slab
    assert.deepEqual(b.arenaStats, { allocated: SLAB, live: SLAB, slabs: 1, compactions: 0 }, 'an exact fit stays in the slab');
    admit(b, sent, ev('b', BIG + 1));
    assert.deepEqual(b.arenaStats, { allocated: SLAB + BIG + 1, live: SLAB + BIG + 1, slabs: 2, compactions: 0 }, 'a big Event: a slab of exactly its size');
    admit(b, sent, ev('a', 100));
    assert.deepEqual(b.arenaStats, { allocated: 2 * SLAB + BIG + 1, live: SLAB + BIG + 101, slabs: 3, compactions: 0 }, 'the full slab is left for a new one');
    intact(b, sent);
  });

  it('a slab is released when nothing lives in it: at once when it is not the current one, when it is replaced when it is', () => {
    // Session limit 1: writing another session evicts the previous one whole.
    const b = new ReplayBuffer({ depth: 1000, maxSessions: 1, totalBytes: 1 << 30 }, null);
    const sent = new Map<string, string>();
    const big = ev('x', BIG + 10);
    admit(b, sent, big);
    admit(b, sent, ev('x', 1000));
    assert.deepEqual(b.arenaStats, { allocated: SLAB + BIG + 10, live: BIG + 1010, slabs: 2, compactions: 0 });
    admit(b, sent, ev('y', 1000)); // evicts x: its big slab goes; the current slab stays (y lives in it)
    assert.deepEqual(b.arenaStats, { allocated: SLAB, live: 1000, slabs: 1, compactions: 0 });
    admit(b, sent, ev('z', 200_000)); // evicts y: the current slab is empty but still current
    assert.deepEqual(b.arenaStats, { allocated: SLAB, live: 200_000, slabs: 1, compactions: 0 });
    for (let i = 0; i < 4; i++) admit(b, sent, ev('z', 200_000)); // 1,002,000 of the slab used
    admit(b, sent, ev('w', BIG + 1)); // a slab of its own; evicts z: the current slab is empty, still current
    assert.deepEqual(b.arenaStats, { allocated: SLAB + BIG + 1, live: BIG + 1, slabs: 2, compactions: 0 });
    admit(b, sent, ev('v', 100_000)); // does not fit: a new slab, the empty one is dropped as it is replaced; w's goes with w
    assert.deepEqual(b.arenaStats, { allocated: SLAB, live: 100_000, slabs: 1, compactions: 0 });
    assert.equal(intact(b, sent), 1);
  });

  it('an evicted Event is released once: spilling it afterwards changes nothing', () => {
    const b = new ReplayBuffer({ depth: 1, maxSessions: 10, totalBytes: 1 << 30 }, null);
    const sent = new Map<string, string>();
    admit(b, sent, ev('s', 5000));
    const first = b.lastAdmitted!;
    admit(b, sent, ev('s', 7000)); // depth 1: the first is evicted
    assert.equal(b.arenaStats.live, 7000);
    b.spill(first);
    assert.equal(b.arenaStats.live, 7000, 'no second release');
    b.spill(b.lastAdmitted!);
    assert.equal(b.arenaStats.live, 0, 'a held one is released by the spill');
    b.spill(b.lastAdmitted!);
    assert.equal(b.arenaStats.live, 0, 'and only once');
  });

  it('slabs made sparse by an eviction are compacted into fresh ones; the next compaction waits for max(4 MiB, live/16) more bytes written', () => {
    const b = new ReplayBuffer({ depth: 1000, maxSessions: 2, totalBytes: 1 << 30 }, null);
    const sent = new Map<string, string>();
    const E = 100_000; // 10 per slab (11 would not fit)
    for (let i = 0; i < 120; i++) admit(b, sent, ev(i % 2 === 0 ? 'A' : 'B', E));
    assert.deepEqual(b.arenaStats, { allocated: 12 * SLAB, live: 120 * E, slabs: 12, compactions: 0 }, 'no compaction while nothing is sparse');
    // Session C evicts A (least recently written): every slab keeps 5 of its 10 Events.
    // Allocated 13 slabs > 1.15 x 6.1 MB + 4 MiB: the sparse slabs are compacted, sparsest first,
    // until what stays allocated is within 1.05 x 6.1 MB + 2 MiB (8,502,152 bytes): each moved
    // slab gives back 548,576 bytes, so 10 of the 12 (13 MiB - 10 x 548,576 = 8,145,728). Their
    // 50 Events of B move: 9 fill the current slab (C's), 40 fill four more, 1 starts a fifth.
    admit(b, sent, ev('C', E));
    assert.deepEqual(b.arenaStats, { allocated: 8 * SLAB, live: 61 * E, slabs: 8, compactions: 1 });
    assert.equal(intact(b, sent), 61);
    // D evicts B: five slabs empty (released at once); left: C's slab (1 Event) and D's.
    // Sparse again, but only 0.1 MB was written since the compaction: none before 4 MiB more.
    admit(b, sent, ev('D', E));
    assert.deepEqual(b.arenaStats, { allocated: 2 * SLAB, live: 2 * E, slabs: 2, compactions: 1 });
    for (let i = 0; i < 40; i++) admit(b, sent, ev('D', E)); // 4.1 MB more: 5 slabs, nothing sparse but C's
    const s = b.arenaStats;
    assert.equal(s.live, 42 * E);
    assert.equal(s.compactions, 1, 'the slab of C alone (0.1 of 1 MiB live) is not worth a compaction: allocated stays within 1.15x live + 4 MiB');
    assert.equal(intact(b, sent), 42);
  });

  it('compaction moves the sparsest slabs first and stops once within 1.05x the bytes held + 2 MiB (issue 19)', () => {
    // Slabs 1-5 (written first): 2 of A and 8 of B each; slabs 6-10: 8 of A and 2 of B.
    // C evicts A: slabs 1-5 hold 80 %, slabs 6-10 20 % (both under 85 %: candidates). Allocated
    // 11 MiB > 1.15 x 5.1 MB + 4 MiB. Goal 1.05 x 5.1 MB + 2 MiB = 7,452,152: moving the five
    // sparsest gives back 5 x 848,576 (11 MiB - that = 7,291,456), so the dense five stay. Their
    // 10 Events of B move: 9 fill C's slab, 1 starts another. Taken in the order they were
    // written instead, or every candidate, all 50 of B would move and 6 slabs be left.
    const { b, sent } = evictA([...Array<number>(5).fill(2), ...Array<number>(5).fill(8)]);
    assert.deepEqual(b.arenaStats, { allocated: 7 * SLAB, live: 51 * E100K, slabs: 7, compactions: 1 });
    assert.equal(intact(b, sent), 51);
  });

  it('a slab at 85 % live or more is never moved, even when the goal is not reached without it', () => {
    // Slabs 1-20: 1 of A and 9 of B each; slabs 21-26: 8 of A and 2 of B.
    // C evicts A: 20 slabs at 90 %, 6 at 20 %. Allocated 27 MiB > 1.15 x 19.3 MB + 4 MiB. Goal
    // 1.05 x 19.3 MB + 2 MiB = 22,362,152; after the six sparse ones 23,220,096 are left, but the
    // 90 % slabs are not candidates: their Events stay where they are. The 12 Events of B moved:
    // 9 fill C's slab, 3 start another (20 + 2 slabs).
    const { b, sent } = evictA([...Array<number>(20).fill(1), ...Array<number>(6).fill(8)]);
    assert.deepEqual(b.arenaStats, { allocated: 22 * SLAB, live: 193 * E100K, slabs: 22, compactions: 1 });
    assert.equal(intact(b, sent), 193);
  });

  it('compaction is amortized: after one, it waits until max(4 MiB, live/16) more bytes were written, then runs again', () => {
    const b = new ReplayBuffer({ depth: 1000, maxSessions: 2, totalBytes: 1 << 30 }, null);
    const sent = new Map<string, string>();
    const E = 100_000;
    for (let i = 0; i < 120; i++) admit(b, sent, ev(i % 2 === 0 ? 'A' : 'B', E));
    admit(b, sent, ev('C', E)); // compaction 1 (as above): 7 slabs, B's 60 + C's 1
    assert.equal(b.arenaStats.compactions, 1);
    // Interleave B and C so that evicting one of them leaves every slab half full again.
    for (let i = 0; i < 80; i++) admit(b, sent, ev(i % 2 === 0 ? 'B' : 'C', E));
    // 8 MB written since compaction 1 (>= 4 MiB): the next sparse state compacts.
    const before = b.arenaStats;
    assert.equal(before.compactions, 1, 'nothing sparse yet: no compaction');
    admit(b, sent, ev('D', E)); // evicts B (least recently written: the last write was C)
    const after = b.arenaStats;
    assert.equal(after.compactions, 2);
    assert.equal(after.live, (41 + 1) * E);
    assert.ok(after.allocated <= after.live * 1.15 + 4 * SLAB, `${after.allocated} allocated for ${after.live} live`);
    assert.equal(intact(b, sent), 42);
  });
  it('after a compaction, a sparse arena waits for exactly 4 MiB more written before the next one', () => {
    const b = new ReplayBuffer({ depth: 1000, maxSessions: 3, totalBytes: 1 << 30 }, null);
    const sent = new Map<string, string>();
    const E = 100_000;
    // A, B and C interleaved: every slab holds a third of each.
    for (let i = 0; i < 180; i++) admit(b, sent, ev('ABC'[i % 3]!, E));
    admit(b, sent, ev('D', E)); // evicts A: every slab two thirds full -> compaction 1
    assert.equal(b.arenaStats.compactions, 1);
    admit(b, sent, ev('E', E)); // evicts B: the slabs are half full and worth compacting, but only 0.1 MB was written since
    const sparse = b.arenaStats;
    assert.equal(sparse.compactions, 1);
    assert.ok(sparse.allocated > sparse.live * 1.15 + 4 * SLAB, `${sparse.allocated} allocated for ${sparse.live} live: sparse enough`);
    // 4 MiB after compaction 1 = 100,000 (E's first) + 40 x 100,000 + 94,304.
    for (let i = 0; i < 40; i++) admit(b, sent, ev('E', E));
    assert.equal(b.arenaStats.compactions, 1, '4,100,000 bytes since: not yet');
    admit(b, sent, ev('E', 4 * SLAB - 41 * E));
    assert.equal(b.arenaStats.compactions, 2, 'exactly 4 MiB since: compaction 2');
    assert.equal(intact(b, sent), 60 + 1 + 42);
  });

  it("released 1 MiB slabs are kept for reuse (at most 8, never a big Event's), and slab indexes are reused", () => {
    const b = new ReplayBuffer({ depth: 1000, maxSessions: 1, totalBytes: 1 << 30 }, null);
    const sent = new Map<string, string>();
    const H = 250_000; // four per slab
    for (let i = 0; i < 80; i++) admit(b, sent, ev('A', H)); // 20 slabs
    admit(b, sent, ev('A', BIG + 1)); // a slab of its own
    assert.deepEqual(b.arenaSlabs, { pooled: 0, indexes: 21 });
    admit(b, sent, ev('B', 100)); // fits in the 20th slab; evicts A: the 19 others and the big one are released
    assert.deepEqual(b.arenaStats, { allocated: SLAB, live: 100, slabs: 1, compactions: 0 });
    assert.deepEqual(b.arenaSlabs, { pooled: 8, indexes: 21 });
    for (let i = 0; i < 6; i++) admit(b, sent, ev('B', H)); // 2 more slabs, from the pool, at freed indexes
    assert.deepEqual(b.arenaSlabs, { pooled: 6, indexes: 21 });
    assert.deepEqual(b.arenaStats, { allocated: 3 * SLAB, live: 100 + 6 * H, slabs: 3, compactions: 0 });
    assert.equal(intact(b, sent), 7);
  });
  it('sparse slabs are left alone while the arena stays within 1.15x the bytes held + 4 MiB', () => {
    const b = new ReplayBuffer({ depth: 1000, maxSessions: 2, totalBytes: 1 << 30 }, null);
    const sent = new Map<string, string>();
    const E = 100_000; // 10 per slab
    // 14 slabs: the first 10 hold 6 of B and 4 of A each, the last 4 only B (written last).
    for (let i = 0; i < 140; i++) admit(b, sent, ev(i < 100 && [2, 5, 8, 9].includes(i % 10) ? 'A' : 'B', E));
    assert.deepEqual(b.arenaStats, { allocated: 14 * SLAB, live: 140 * E, slabs: 14, compactions: 0 });
    admit(b, sent, ev('C', E)); // a 15th slab; evicts A: 10 slabs at 60 %
    // 15 MiB allocated for 101 x 100,000 live: 15,728,640 <= 1.15 x 10,100,000 + 4 MiB = 15,809,304.
    assert.deepEqual(b.arenaStats, { allocated: 15 * SLAB, live: 101 * E, slabs: 15, compactions: 0 });
    admit(b, sent, ev('C', E)); // evicts nothing: still no compaction
    assert.equal(b.arenaStats.compactions, 0);
    assert.equal(intact(b, sent), 102);
  });
});
