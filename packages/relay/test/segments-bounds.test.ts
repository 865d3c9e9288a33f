// Bounded memory and amortised work of the store's segment index and write queue (segments.ts,
// issue 20's mutation run, survivors of run B): the index forgets the empty segments at its front
// and cuts that forgotten prefix only when it is longer than 1,024 entries and than the rest, so
// its arrays stay within the segments held plus max(1,024, those) while each cut copies fewer
// entries than it frees; a kill flips a bit of the segment's one bitmap (no copy per kill); the
// bitmap written covers every Event of a segment that grew after its first kill; the queue's byte
// buffers grow only when the bytes do not fit, and then at least double. The answers (`has`, the flushed operations, the queued
// bytes) are checked alongside.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { OpQueue, SegmentIndex } from '../src/segments.js';
import { storeEntry as entry } from './support/store.js';

/** The operations a flush queued, as [op, first] pairs, with the bitmap bytes of 7/9. */
function ops(q: OpQueue): Array<[number, number, number[]?]> {
  const out: Array<[number, number, number[]?]> = [];
  let o = 0;
  let si = 0;
  for (let i = 0; i < q.nums.length; i += 2) {
    const k = q.nums[i]!;
    if (k === 7 || k === 9) {
      const len = q.lens[si++]!;
      out.push([k, q.nums[i + 1]!, [...q.buf.subarray(o, o + len)]]);
      o += len;
    } else out.push([k, q.nums[i + 1]!]);
  }
  return out;
}
function flushed(s: SegmentIndex): Array<[number, number, number[]?]> {
  const q = new OpQueue();
  s.flush(q);
  return ops(q);
}

/**
 * A relay's steady state: a window of `window` live segments (1 to 3 Events each); each step
 * stores one more segment and evicts the oldest (FIFO, as the replay buffer evicts), then
 * flushes. Checks, after every flush, that the dropped front segments are forgotten, that a cut
 * of the forgotten prefix happens only when it frees more than 1,024 entries and more than it
 * copies, and the bound that follows. Returns the number of cuts.
 */
function slide(window: number, steps: number): number {
  const s = new SegmentIndex();
  const segs: Array<[first: number, n: number]> = [];
  let r = 1;
  const store = (): void => {
    const n = 1 + (segs.length % 3);
    segs.push([r, n]);
    for (let j = 0; j < n; j++) s.add(r++, j > 0);
  };
  for (let i = 0; i < window; i++) store();
  assert.deepEqual(flushed(s), []);
  let oldest = 0;
  let cuts = 0;
  for (let step = 0; step < steps; step++) {
    store();
    const [first, n] = segs[oldest++]!;
    for (let j = 0; j < n; j++) s.kill(first + j);
    const before = s.arrays;
    assert.deepEqual(flushed(s), [[8, first]]);
    const after = s.arrays;
    const forgotten = before.forgotten + 1; // the front segment just dropped
    if (after.forgotten === forgotten) assert.equal(after.length, before.length, `step ${step}: no cut, nothing moved`);
    else {
      cuts++;
      assert.equal(after.forgotten, 0, `step ${step}: a cut removes the whole forgotten prefix`);
      assert.equal(after.length, before.length - forgotten, `step ${step}: a cut keeps exactly the segments not forgotten`);
      assert.ok(forgotten > 1024, `step ${step}: a cut frees more than 1,024 entries (freed ${forgotten})`);
      assert.ok(forgotten > after.length, `step ${step}: a cut copies fewer entries (${after.length}) than it frees (${forgotten})`);
    }
    const held = after.length - after.forgotten;
    assert.equal(held, window, 'the held span is the live window: every empty segment at the front is forgotten');
    assert.ok(after.forgotten <= Math.max(1024, held), `step ${step}: forgotten ${after.forgotten} of ${after.length}`);
  }
  // The answers, around the window's edge and inside it.
  for (let i = oldest - 3; i < segs.length; i++) {
    const [first, n] = segs[i]!;
    for (let j = 0; j < n; j++) assert.equal(s.has(first + j), i >= oldest, `row ${first + j}`);
  }
  assert.equal(s.has(r), false, 'the row after the newest segment');
  assert.equal(s.size, window);
  return cuts;
}

describe('segments: the index stays bounded while segments come and go', () => {
  it('a small window: the forgotten prefix never exceeds 1,024 entries, cut once per 1,025 forgotten', () => {
    assert.equal(slide(5, 5000), 4);
  });

  it('a window of 1,500 segments: the prefix is cut only once it is longer than the window (a cut copies less than it frees)', () => {
    assert.equal(slide(1500, 5000), 3);
  });

  it('everything evicted at once: the arrays shrink to the newest segment, and the index starts over from there', () => {
    const s = new SegmentIndex();
    let r = 1;
    for (let i = 0; i < 3000; i++) for (let j = 0; j < 2; j++) s.add(r++, j > 0);
    for (let x = 1; x < r; x++) s.kill(x);
    const drops = flushed(s);
    assert.equal(drops.length, 3000);
    assert.ok(drops.every(([k]) => k === 8));
    const a = s.arrays;
    assert.ok(a.length - a.forgotten <= 1 && a.forgotten <= 1024, `forgotten ${a.forgotten} of ${a.length}`);
    assert.equal(s.size, 0);
    s.add(r, false);
    s.add(r + 1, true);
    assert.equal(s.size, 1);
    assert.deepEqual(
      [r - 1, r, r + 1, r + 2].map((x) => s.has(x)),
      [false, true, true, false],
    );
    s.kill(r);
    assert.deepEqual(flushed(s), [[7, r, [1]]]);
  });
});

describe('segments: dead bitmaps', () => {
  it("an eviction flips a bit in the segment's one bitmap: kills in a segment of 1,024 Events do not copy it", () => {
    const s = new SegmentIndex();
    for (let r = 1; r <= 1024; r++) s.add(r, r > 1);
    s.kill(1);
    const b = s.bitmap(1);
    assert.ok(b !== null && b.length === 128, 'sized for the segment: 1,024 bits');
    for (const r of [2, 9, 1024, 500]) {
      s.kill(r);
      assert.equal(s.bitmap(1), b, `kill of row ${r}: the same bitmap`);
    }
    assert.deepEqual([b[0], b[1], b[62], b[127]], [0b11, 1, 0b1000, 0x80]);
    const [[k, first, bits]] = flushed(s) as [[number, number, number[]]];
    assert.deepEqual([k, first, bits.length], [7, 1, 128]);
    s.kill(3);
    assert.equal(s.bitmap(1), b, 'after a flush too');
  });

  it('the bitmap written covers every Event of a segment that grew after its first kill (ceil(count / 8) bytes)', () => {
    // A segment still filling in the queue: row 1 evicted while it had 10 Events, then 190 more.
    const s = new SegmentIndex();
    for (let r = 1; r <= 10; r++) s.add(r, r > 1);
    s.kill(1);
    for (let r = 11; r <= 200; r++) s.add(r, true);
    const want = new Array<number>(25).fill(0);
    want[0] = 1;
    assert.deepEqual(flushed(s), [[7, 1, want]]);
    assert.deepEqual(
      [1, 2, 200, 201].map((r) => s.has(r)),
      [false, true, true, false],
    );
    s.kill(200);
    want[24] = 0x80;
    assert.deepEqual(flushed(s), [[7, 1, want]]);
  });
});

describe('segments: the write queue grows its buffers geometrically', () => {
  it('Event bytes and strings: each new buffer is at least twice the one before (amortised O(1) copying per byte), and nothing is lost', () => {
    const q = new OpQueue();
    const raws: string[] = [];
    let rb = q.rbuf;
    let sb = q.buf;
    let rGrowths = 0;
    let sGrowths = 0;
    for (let r = 1; r <= 600; r++) {
      const raw = `{"n":${r},"pad":"${'x'.repeat(900 + (r % 7) * 50)}"}`;
      raws.push(raw);
      q.event(entry(r, raw));
      q.str(`session-${r}-${'y'.repeat(300)}`);
      if (q.rbuf !== rb) {
        assert.ok(q.rbuf.length >= 2 * rb.length, `Event bytes: ${rb.length} -> ${q.rbuf.length}`);
        rb = q.rbuf;
        rGrowths++;
      }
      if (q.buf !== sb) {
        assert.ok(q.buf.length >= 2 * sb.length, `strings: ${sb.length} -> ${q.buf.length}`);
        sb = q.buf;
        sGrowths++;
      }
    }
    assert.ok(rGrowths >= 3 && sGrowths >= 3, `both grew several times (${rGrowths}, ${sGrowths})`);
    for (let r = 1; r <= 600; r++) assert.equal(q.find(r)?.toString(), raws[r - 1]);
    let o = 0;
    for (let i = 0; i < 600; i++) {
      assert.equal(q.buf.toString('utf8', o, o + q.lens[i]!), `session-${i + 1}-${'y'.repeat(300)}`);
      o += q.lens[i]!;
    }
    assert.equal(o, q.used);
  });

  it('bytes that fit exactly go in without a new buffer (it grows only when they do not fit)', () => {
    const q = new OpQueue();
    const sb = q.buf;
    q.bytes(new Uint8Array(sb.length).fill(7)); // a bitmap filling the strings buffer to the last byte
    assert.equal(q.buf, sb);
    assert.deepEqual([q.used, q.lens], [sb.length, [sb.length]]);
    q.bytes(Uint8Array.of(1));
    assert.ok(q.buf !== sb && q.buf.length >= 2 * sb.length);
    assert.deepEqual([...q.buf.subarray(sb.length - 2, sb.length + 1)], [7, 7, 1]);
  });
});
