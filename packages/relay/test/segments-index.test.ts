// The segment index at unit level (segments.ts, issue 20's mutation run): segments of different
// sizes stay aligned with their counts, bitmaps and compaction marks after the index forgets
// more than 1,024 empty segments at its front; compaction (op 9) at exactly a quarter of the
// Events last written, then measured from the rewrite; loaded segments count their live Events.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { OpQueue, SEG_MAX_BYTES, SegmentIndex } from '../src/segments.js';
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
function flushed(s: SegmentIndex, compact = true): Array<[number, number, number[]?]> {
  const q = new OpQueue();
  s.flush(q, compact);
  return ops(q);
}

describe('segments: the index over many segments', () => {
  it('after forgetting 2,000 empty segments at its front, every remaining segment keeps its own count, bitmap and compaction mark', () => {
    const s = new SegmentIndex();
    const firsts: number[] = [];
    const sizes: number[] = [];
    let r = 1;
    for (let i = 0; i < 3000; i++) {
      const n = 1 + (i % 3) * 4; // 1, 5 or 9 Events
      firsts.push(r);
      sizes.push(n);
      for (let j = 0; j < n; j++) s.add(r++, j > 0);
    }
    assert.equal(s.size, 3000);
    // One segment in the back half is killed down to a quarter before the front goes: its
    // compaction mark (written) must stay with it.
    const m = 2500 + ((2 - (2500 % 3)) % 3); // a 9-Event segment
    assert.equal(sizes[m], 9);
    for (let j = 0; j < 7; j++) s.kill(firsts[m]! + j);
    assert.deepEqual(flushed(s), [[9, firsts[m]!, [0x7f, 0]]]);
    for (let i = 0; i < 2000; i++) for (let j = 0; j < sizes[i]!; j++) s.kill(firsts[i]! + j);
    const drops = flushed(s);
    assert.equal(drops.length, 2000);
    assert.ok(drops.every(([k], i) => k === 8 && drops[i]![1] === firsts[i]));
    assert.equal(s.size, 1000);
    for (let i = 1990; i < 3000; i++) {
      for (let j = 0; j < sizes[i]!; j++) {
        const want = i >= 2000 && !(i === m && j < 7);
        assert.equal(s.has(firsts[i]! + j), want, `row ${firsts[i]! + j} of segment ${i}`);
      }
      assert.equal(s.has(firsts[i]! + sizes[i]!), i + 1 < 3000 && i + 1 >= 2000 && !(i + 1 === m), `the row after segment ${i}`);
    }
    // A kill in a 9-Event segment after the front went: its own bitmap, of its own size.
    const k = 2003 + ((2 - (2003 % 3)) % 3);
    assert.equal(sizes[k], 9);
    s.kill(firsts[k]! + 8);
    assert.deepEqual(flushed(s), [[7, firsts[k]!, [0, 1]]]);
    // The compacted segment: 2 live of 2 at its rewrite; down to 1 (not a quarter of 2): a bitmap.
    s.kill(firsts[m]! + 7);
    assert.deepEqual(flushed(s), [[7, firsts[m]!, [0xff, 0]]]);
    s.kill(firsts[m]! + 8);
    assert.deepEqual(flushed(s), [[8, firsts[m]!]]);
  });

  it('compaction at exactly a quarter of the Events, then a quarter of those live at the rewrite; never with compact = false', () => {
    const s = new SegmentIndex();
    for (let r = 1; r <= 16; r++) s.add(r, r > 1);
    for (let r = 1; r <= 11; r++) s.kill(r);
    assert.deepEqual(flushed(s), [[7, 1, [0xff, 0x07]]], '5 of 16 live: above a quarter');
    s.kill(12);
    assert.deepEqual(flushed(s, false), [[7, 1, [0xff, 0x0f]]], '4 of 16, but compaction is off (a load-time removal)');
    s.kill(13);
    s.kill(12); // already dead: no change
    assert.deepEqual(flushed(s), [[9, 1, [0xff, 0x1f]]], '3 of 16: compacted, 3 live at the rewrite');
    s.kill(14);
    assert.deepEqual(flushed(s), [[7, 1, [0xff, 0x3f]]], '2 of 3: above a quarter of 3');
    s.kill(15);
    assert.deepEqual(flushed(s), [[7, 1, [0xff, 0x7f]]], '1 of 3: above a quarter of 3 (0.75)');
    assert.equal(s.has(16), true);
  });

  it('a loaded segment counts its live Events from its bitmap; a kill of a dead or unknown row changes nothing', () => {
    const s = new SegmentIndex();
    assert.equal(s.load(10, 12, Uint8Array.from([0b1000_0001, 0b0000_1000])), 9);
    assert.equal(s.load(30, 3, null), 3);
    assert.equal(s.maxRowid, 32);
    assert.deepEqual(
      [9, 10, 11, 17, 18, 21, 22, 29, 30, 32, 33].map((r) => s.has(r)),
      [false, false, true, false, true, false, false, false, true, true, false],
    );
    s.kill(10);
    s.kill(25);
    s.kill(33);
    assert.equal(s.dirty, false);
    assert.deepEqual(flushed(s), []);
    for (const r of [11, 12, 13, 14, 15, 16]) s.kill(r);
    // 3 live of 12 (a quarter; a loaded segment counts as written with all 12): compacted.
    assert.deepEqual(flushed(s), [[9, 10, [0xff, 0x08]]]);
    s.add(33, true); // extends the newest segment (30..32)
    s.add(40, false);
    assert.equal(s.maxRowid, 40);
    assert.deepEqual(
      [33, 34, 40].map((r) => s.has(r)),
      [true, false, true],
    );
  });
});

describe('segments: the write queue, past its first segment', () => {
  it('the byte limit counts from where the segment starts, not from the start of the queue', () => {
    const q = new OpQueue();
    assert.equal(q.event(entry(1, '{"first":1}')), false);
    const half = `"${'x'.repeat(SEG_MAX_BYTES / 2 - 2)}"`;
    assert.equal(q.event(entry(3, half)), false, 'a gap: a second segment');
    assert.equal(q.event(entry(4, half)), true, 'exactly SEG_MAX_BYTES from its start: it fits');
    assert.equal(q.event(entry(5, '1')), false, 'one byte more: a third segment');
    assert.deepEqual(q.nums, [0, 1, 1, 0, 3, 2, 0, 5, 1]);
  });

  it('a retried queue followed by a bigger one keeps every byte of both', () => {
    const a = new OpQueue();
    a.event(entry(1, '{"a":1}'));
    a.str('x');
    const b = new OpQueue();
    const big = `"${'é'.repeat(3000)}"`; // 6,002 bytes of Event, 9,000 of string
    b.event(entry(2, big));
    b.str('ü'.repeat(3000));
    const q = a.concat(b);
    assert.equal(q.find(1)?.toString(), '{"a":1}');
    assert.equal(q.find(2)?.toString(), big);
    assert.equal(q.buf.toString('utf8', 0, q.used), `x${'ü'.repeat(3000)}`);
    assert.deepEqual(q.lens, [1, 6000]);
  });
});
