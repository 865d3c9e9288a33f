// The store's write queue and its segment index (issue 19, docs/benchmarks.md "Segments").
//
// Events are stored in SEGMENTS: one SQLite row per run of consecutive row ids committed
// together (`seg (id = first row id, lens, raw)`, `segdead (id, dead)`), instead of one row per Event. A commit
// of 400 Events is then a few row inserts instead of 400, and an eviction flips a bit in the
// segment's `dead` bitmap (one UPDATE per segment and commit) until the last live Event of the
// segment goes and the row is deleted. Measured: per-row inserts plus deletes cost the writer
// thread ~4 us of CPU per Event, segments ~1 us (mostly the kernel's page cache and fsync).
//
// Exactness: a row id names one Event for the life of the store (the relay's row ids ascend
// and are never reused); an Event is readable while its segment exists and its dead bit is
// clear, which is exactly while the replay buffer holds it (the buffer's evictions are the
// only `kill`s), and a restart loads exactly the live Events (`decodeSegment`).
import type { Entry } from './buffer.js';

/** At most this many Events, or bytes, in one segment (bounds a replay read of one Event). */
export const SEG_MAX_EVENTS = 1024;
export const SEG_MAX_BYTES = 1 << 20;

/**
 * Queued operations, encoded for one cheap hand-off to the writer thread: numbers in `nums`
 * (sent as one Float64Array); strings and bitmaps as bytes back to back in `buf` (lengths in
 * `lens`, consumed in order); Event bytes back to back in `rbuf` (lengths in `len`). Per
 * operation:
 *   segment 0, first, count         + count Event bytes (raws; contiguous, in row id order)
 *   evicted 2, epoch, seq, sub       + session
 *   forget  3                        + session
 *   bind    4, offline (-1 = none)   + session, request, claim   (contract C3: survives a restart)
 *   unbind  5                        + session, request
 *   token   6                        + id, name, hash, scopes (JSON), created, expires, revoked ('' = none)
 *   dead    7, first                 + the segment's dead bitmap
 *   drop    8, first
 *   compact 9, first                 + the segment's dead bitmap (dead Events' bytes removed)
 * An Event's bytes are copied when it is queued (from the request body; no string per Event),
 * and `rows`/`at`/`len` index them, so the queue also answers replay reads of rows not yet
 * committed. The index is typed arrays, not JS arrays (issue 19): a queue lives until its commit
 * is answered, so its arrays outlived the young generation and were promoted with their
 * growth copies (5 % of what a relay allocated under fan-out).
 */
export class OpQueue {
  nums: number[] = [];
  buf: Buffer;
  used = 0;
  lens: number[] = [];
  rbuf: Buffer;
  rused = 0;
  count = 0;
  /** Queued Events: their row ids, in queue order, and where their bytes are in `rbuf`. */
  events = 0;
  rows = new Float64Array(256);
  at = new Uint32Array(256);
  len = new Uint32Array(256);
  /** The open segment: index in `nums` of its count, the row id it continues with, its first byte. */
  private segCount = -1;
  private segNext = -1;
  private segStart = 0;
  /** `spare`: a queue whose batch committed, whose buffers this one reuses (nothing reads it any more). */
  constructor(rbuf?: Buffer, spare?: OpQueue) {
    this.buf = Buffer.allocUnsafeSlow(4096);
    this.rbuf = rbuf ?? spare?.rbuf ?? Buffer.allocUnsafeSlow(64 * 1024);
    if (spare) {
      this.rows = spare.rows;
      this.at = spare.at;
      this.len = spare.len;
    }
  }
  private static grown(b: Buffer, used: number, n: number): Buffer {
    if (used + n <= b.length) return b;
    const bigger = Buffer.allocUnsafeSlow(Math.max(b.length * 2, used + n + 4096));
    b.copy(bigger, 0, 0, used);
    return bigger;
  }
  str(x: string): void {
    this.buf = OpQueue.grown(this.buf, this.used, x.length * 3);
    const n = this.buf.write(x, this.used, 'utf8');
    this.lens.push(n);
    this.used += n;
  }
  bytes(b: Uint8Array): void {
    this.buf = OpQueue.grown(this.buf, this.used, b.length);
    this.buf.set(b, this.used);
    this.lens.push(b.length);
    this.used += b.length;
  }
  /**
   * Queue an Event's bytes. Returns true when it continues the open segment (row id right after
   * the last one, limits not reached), false when it starts a new one.
   */
  event(e: Entry): boolean {
    const need = e.copyRaw ? e.bytes : e.raw.length * 3;
    this.rbuf = OpQueue.grown(this.rbuf, this.rused, need);
    const n = e.copyRaw ? e.copyRaw(this.rbuf, this.rused) : this.rbuf.write(e.raw, this.rused, 'utf8');
    const rowid = e.rowid;
    const extend =
      this.segCount >= 0 && rowid === this.segNext && this.nums[this.segCount]! < SEG_MAX_EVENTS && this.rused + n - this.segStart <= SEG_MAX_BYTES;
    if (extend) this.nums[this.segCount]!++;
    else {
      this.nums.push(0, rowid, 1);
      this.segCount = this.nums.length - 1;
      this.segStart = this.rused;
    }
    this.segNext = rowid + 1;
    const k = this.events;
    if (k === this.rows.length) this.index(k * 2);
    this.rows[k] = rowid;
    this.at[k] = this.rused;
    this.len[k] = n;
    this.events = k + 1;
    this.rused += n;
    this.count++;
    return extend;
  }
  /** Room for `cap` Events in the index. */
  private index(cap: number): void {
    const rows = new Float64Array(cap);
    rows.set(this.rows.subarray(0, this.events));
    const at = new Uint32Array(cap);
    at.set(this.at.subarray(0, this.events));
    const len = new Uint32Array(cap);
    len.set(this.len.subarray(0, this.events));
    this.rows = rows;
    this.at = at;
    this.len = len;
  }
  /** The queued Events' byte lengths, in order (a copy, for the hand-off). */
  eventLengths(): Uint32Array<ArrayBuffer> {
    const out = new Uint32Array(this.events);
    out.set(this.len.subarray(0, this.events));
    return out;
  }
  /** No more Events go into the open segment (it is being handed to the writer). */
  close(): void {
    this.segCount = -1;
  }
  /** The queued bytes of row `rowid`, or undefined. Row ids ascend within a queue. */
  find(rowid: number): Buffer | undefined {
    const rows = this.rows;
    let lo = 0;
    let hi = this.events;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (rows[mid]! < rowid) lo = mid + 1;
      else hi = mid;
    }
    if (lo >= this.events || rows[lo] !== rowid) return undefined;
    return this.rbuf.subarray(this.at[lo]!, this.at[lo]! + this.len[lo]!);
  }
  /** `this` followed by `next` (a failed batch is retried before what was queued since). */
  concat(next: OpQueue): OpQueue {
    const q = new OpQueue(Buffer.allocUnsafeSlow(this.rused + next.rused + 4096));
    q.buf = Buffer.allocUnsafeSlow(this.used + next.used + 4096);
    this.buf.copy(q.buf, 0, 0, this.used);
    next.buf.copy(q.buf, this.used, 0, next.used);
    q.used = this.used + next.used;
    this.rbuf.copy(q.rbuf, 0, 0, this.rused);
    next.rbuf.copy(q.rbuf, this.rused, 0, next.rused);
    q.rused = this.rused + next.rused;
    q.nums = this.nums.concat(next.nums);
    q.lens = this.lens.concat(next.lens);
    q.count = this.count + next.count;
    const a = this.events;
    const b = next.events;
    q.index(Math.max(256, a + b));
    q.rows.set(this.rows.subarray(0, a));
    q.rows.set(next.rows.subarray(0, b), a);
    q.at.set(this.at.subarray(0, a));
    for (let i = 0; i < b; i++) q.at[a + i] = next.at[i]! + this.rused;
    q.len.set(this.len.subarray(0, a));
    q.len.set(next.len.subarray(0, b), a);
    q.events = a + b;
    // The open segment of `next` stays open (its count is at the same place, shifted).
    if (next.segCount >= 0) {
      q.segCount = this.nums.length + next.segCount;
      q.segNext = next.segNext;
      q.segStart = this.rused + next.segStart;
    }
    return q;
  }
}

/**
 * Which stored segments exist and which of their Events are live (main thread). Segments are
 * kept in row id order; the ones whose Events are all gone are dropped from the front.
 */
export class SegmentIndex {
  private first: number[] = [];
  private count: number[] = [];
  private live: number[] = [];
  private dead: Array<Uint8Array | null> = [];
  /** Live Events when the segment's bytes were last written (0: as inserted, `count`). */
  private written: number[] = [];
  private head = 0;
  /** Segments whose dead bitmap changed since the last `flush`. */
  private changed = new Set<number>();
  /** True when kills wait for `flush`. */
  get dirty(): boolean {
    return this.changed.size > 0;
  }
  /** Highest row id ever stored (dead ones included): the next one must be above it. */
  maxRowid = 0;

  /** Number of segments held. */
  get size(): number {
    let n = 0;
    for (let i = this.head; i < this.first.length; i++) if (this.live[i]! > 0) n++;
    return n;
  }

  /**
   * The index's arrays: their length and how many entries at their front are forgotten (tests:
   * `flush` cuts the forgotten prefix once it is longer than 1,024 and than the rest, so the
   * arrays stay within the segments held plus max(1,024, those)).
   */
  get arrays(): { length: number; forgotten: number } {
    return { length: this.first.length, forgotten: this.head };
  }

  /** The dead bitmap of the segment starting at `first` (tests: kills flip bits in place), or null. */
  bitmap(first: number): Uint8Array | null {
    const i = this.first.indexOf(first, this.head);
    return i < 0 ? null : this.dead[i]!;
  }

  /** A segment read at load: `count` Events from `first`, `dead` its bitmap (null: none). */
  load(first: number, count: number, dead: Uint8Array | null): number {
    let live = 0;
    for (let i = 0; i < count; i++) if (!dead || (dead[i >> 3]! & (1 << (i & 7))) === 0) live++;
    this.first.push(first);
    this.count.push(count);
    this.live.push(live);
    this.dead.push(dead);
    this.written.push(0);
    this.maxRowid = Math.max(this.maxRowid, first + count - 1);
    return live;
  }

  /** A queued Event: it extends the newest segment (`extend`) or starts one. */
  add(rowid: number, extend: boolean): void {
    const n = this.first.length - 1;
    if (extend && n >= this.head) {
      this.count[n]!++;
      this.live[n]!++;
    } else {
      this.first.push(rowid);
      this.count.push(1);
      this.live.push(1);
      this.dead.push(null);
      this.written.push(0);
    }
    if (rowid > this.maxRowid) this.maxRowid = rowid;
  }

  private indexOf(rowid: number): number {
    let lo = this.head;
    let hi = this.first.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.first[mid]! <= rowid) lo = mid + 1;
      else hi = mid;
    }
    const i = lo - 1;
    if (i < this.head || rowid >= this.first[i]! + this.count[i]! || this.live[i] === 0) return -1;
    const d = this.dead[i];
    const k = rowid - this.first[i]!;
    if (d && (d[k >> 3]! & (1 << (k & 7))) !== 0) return -1;
    return i;
  }

  /** True while row `rowid` is stored and live. */
  has(rowid: number): boolean {
    return this.indexOf(rowid) >= 0;
  }

  /** The Event of row `rowid` is gone (evicted): its dead bit is set, the segment dropped once empty. */
  kill(rowid: number): void {
    const i = this.indexOf(rowid);
    if (i < 0) return;
    const k = rowid - this.first[i]!;
    let d = this.dead[i];
    const size = (this.count[i]! + 7) >> 3;
    if (!d || d.length < size) {
      // Sized for the segment as it is now: one still filling in the queue may have grown.
      const bigger = new Uint8Array(Math.max(size, 16));
      if (d) bigger.set(d);
      this.dead[i] = d = bigger;
    }
    d[k >> 3]! |= 1 << (k & 7);
    this.live[i]!--;
    this.changed.add(this.first[i]!);
  }

  /**
   * The operations that persist the kills since the last flush: the dead bitmap of each segment
   * that still has live Events, the drop of each that has none. Then forgets empty segments at
   * the front. A segment down to a quarter of the Events it held when its bytes were last
   * written is compacted (op 9, with `compact`): its bytes are rewritten with the live Events only
   * (dead ones get length 0), so the store holds at most 4x the live bytes (docs/decisions.md
   * "Relay store: segments").
   */
  flush(q: OpQueue, compact = true): void {
    if (this.changed.size > 0) {
      for (const first of this.changed) {
        const i = this.find(first);
        if (i < 0) continue;
        if (this.live[i] === 0) q.nums.push(8, first);
        else {
          // A segment still growing in this queue gets its bitmap sized when it is sent.
          const d = this.dead[i]!;
          const size = (this.count[i]! + 7) >> 3;
          const was = this.written[i] || this.count[i]!;
          if (compact && this.live[i]! * 4 <= was) {
            this.written[i] = this.live[i]!;
            q.nums.push(9, first);
          } else q.nums.push(7, first);
          q.bytes(d.length >= size ? d.subarray(0, size) : padded(d, size));
        }
        q.count++;
      }
      this.changed.clear();
    }
    while (this.head < this.first.length && this.live[this.head] === 0 && this.head < this.first.length - 1) this.head++;
    if (this.head > 1024 && this.head * 2 > this.first.length) {
      this.first = this.first.slice(this.head);
      this.count = this.count.slice(this.head);
      this.live = this.live.slice(this.head);
      this.dead = this.dead.slice(this.head);
      this.written = this.written.slice(this.head);
      this.head = 0;
    }
  }

  /** Index of the segment starting at `first`, or -1. */
  private find(first: number): number {
    let lo = this.head;
    let hi = this.first.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.first[mid]! < first) lo = mid + 1;
      else hi = mid;
    }
    return lo < this.first.length && this.first[lo] === first ? lo : -1;
  }
}

function padded(d: Uint8Array, size: number): Uint8Array {
  const out = new Uint8Array(size);
  out.set(d);
  return out;
}

/** Event byte lengths of a segment as stored (`lens`: little-endian uint32 each). */
export function encodeLens(lens: ArrayLike<number>, from: number, count: number): Buffer {
  const b = Buffer.allocUnsafe(count * 4);
  for (let i = 0; i < count; i++) b.writeUInt32LE(lens[from + i]!, i * 4);
  return b;
}

/** The live Events of a stored segment, in row id order. */
export function* decodeSegment(first: number, lens: Buffer, raw: Buffer, dead: Buffer | null): Iterable<{ rowid: number; bytes: Buffer }> {
  const count = lens.length >> 2;
  let o = 0;
  for (let i = 0; i < count; i++) {
    const n = lens.readUInt32LE(i * 4);
    if (!dead || (dead[i >> 3]! & (1 << (i & 7))) === 0) yield { rowid: first + i, bytes: raw.subarray(o, o + n) };
    o += n;
  }
}
