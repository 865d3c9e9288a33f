// The dedupe window of the stream rules (AEP-0001 §7.4): (source, id) -> content fingerprint of
// the last `capacity` distinct ids, oldest forgotten first. Internal to stream.ts (issue 19).
//
// Memory layout, chosen for `aep validate` on large files, where this structure is most of the
// memory the run touches:
// - entries are numbered in insertion order around a ring of `capacity`; their fields live in
//   fixed-size blocks of typed arrays, allocated as the ring fills and never copied (doubling
//   arrays copied everything at each step and touched twice the memory they kept);
// - an id of up to ID_SLOT characters, all below U+0100, is stored as its character codes in
//   the entry's slot of a byte block; any other id is kept as a string (`longIds`). A million
//   id strings were a million heap objects for every young-generation collection to copy and
//   promote; bytes in a typed array cost the collector nothing;
// - the hash index (linear probing) holds the entry number and its 32-bit key hash side by
//   side, so a probe that misses never touches the entry blocks.
// Keys are compared exactly (source slot and every character of the id); the hash only narrows
// the search.

/** Entries per block (a power of two). */
const BLOCK_BITS = 12;
const BLOCK = 1 << BLOCK_BITS;
const BLOCK_MASK = BLOCK - 1;
/** Longest id kept in the byte blocks (ULIDs have 26 characters, UUIDs 36). */
export const ID_SLOT = 40;
/** Per-entry fields in `meta`: source slot, key hash, id length (-1: the id is in `longIds`). */
const META = 3;

export class IdWindow {
  private readonly capacity: number;
  private readonly meta: Int32Array[] = [];
  private readonly fps: Float64Array[] = [];
  private readonly chars: Uint8Array[] = [];
  private readonly longIds = new Map<number, string>();
  /** Hash index: pairs (entry number + 1, key hash); entry 0 = empty. Size a power of two, at least twice the entries. */
  private index: Int32Array;
  private indexMask: number;
  private ringPos = 0;
  private count = 0;

  constructor(capacity: number) {
    this.capacity = capacity;
    let slots = 2;
    while (slots < Math.min(capacity, 1024) * 2) slots *= 2;
    this.index = new Int32Array(slots * 2);
    this.indexMask = slots - 1;
  }

  /** Number of entries held. */
  get size(): number {
    return this.count;
  }

  /** Entry number of (slot, id) with key hash `h`, or -1. */
  find(slot: number, id: string, h: number): number {
    const index = this.index;
    const mask = this.indexMask;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const e = index[2 * i]! - 1;
      if (e < 0) return -1;
      if (index[2 * i + 1] === h && this.holds(e, slot, id)) return e;
    }
  }

  /** Content fingerprint of entry `e`. */
  fingerprint(e: number): number {
    return this.fps[e >>> BLOCK_BITS]![e & BLOCK_MASK]!;
  }

  /** Source slot of entry `e`. */
  sourceSlot(e: number): number {
    return this.meta[e >>> BLOCK_BITS]![(e & BLOCK_MASK) * META]!;
  }

  /**
   * Remembers (slot, id) -> fp (the caller checked it is absent). Returns the source slot of the
   * entry it forgot to make room (the oldest), or -1 when the window was not full yet.
   */
  add(slot: number, id: string, h: number, fp: number): number {
    let e: number;
    let evicted = -1;
    if (this.count < this.capacity) {
      e = this.count++;
      const b = e >>> BLOCK_BITS;
      if (b === this.meta.length) this.addBlock();
      if (this.count * 2 > this.indexMask + 1) this.growIndex();
    } else {
      e = this.ringPos;
      this.ringPos = e + 1 === this.capacity ? 0 : e + 1;
      evicted = this.sourceSlot(e);
      this.indexDelete(e, this.meta[e >>> BLOCK_BITS]![(e & BLOCK_MASK) * META + 1]!);
    }
    const meta = this.meta[e >>> BLOCK_BITS]!;
    const o = e & BLOCK_MASK;
    meta[o * META] = slot;
    meta[o * META + 1] = h;
    this.fps[e >>> BLOCK_BITS]![o] = fp;
    this.storeId(e, meta, o, id);
    this.indexInsert(e, h);
    return evicted;
  }

  private addBlock(): void {
    const size = Math.min(BLOCK, this.capacity - this.meta.length * BLOCK);
    this.meta.push(new Int32Array(size * META));
    this.fps.push(new Float64Array(size));
    this.chars.push(new Uint8Array(size * ID_SLOT));
  }

  /** True when entry `e` is (slot, id). */
  private holds(e: number, slot: number, id: string): boolean {
    const meta = this.meta[e >>> BLOCK_BITS]!;
    const o = e & BLOCK_MASK;
    if (meta[o * META] !== slot) return false;
    const len = meta[o * META + 2]!;
    if (len < 0) return this.longIds.get(e) === id;
    if (len !== id.length) return false;
    const chars = this.chars[e >>> BLOCK_BITS]!;
    const base = o * ID_SLOT;
    for (let i = 0; i < len; i++) if (chars[base + i] !== id.charCodeAt(i)) return false;
    return true;
  }

  private storeId(e: number, meta: Int32Array, o: number, id: string): void {
    if (meta[o * META + 2] === -1) this.longIds.delete(e);
    const n = id.length;
    if (n <= ID_SLOT) {
      const chars = this.chars[e >>> BLOCK_BITS]!;
      const base = o * ID_SLOT;
      let i = 0;
      for (; i < n; i++) {
        const c = id.charCodeAt(i);
        if (c > 0xff) break;
        chars[base + i] = c;
      }
      if (i === n) {
        meta[o * META + 2] = n;
        return;
      }
    }
    meta[o * META + 2] = -1;
    this.longIds.set(e, id);
  }

  private indexInsert(e: number, h: number): void {
    const index = this.index;
    const mask = this.indexMask;
    let i = h & mask;
    while (index[2 * i] !== 0) i = (i + 1) & mask;
    index[2 * i] = e + 1;
    index[2 * i + 1] = h;
  }

  /** Removes entry `e` (key hash `h`) from the index (backward-shift deletion keeps probe chains whole). */
  private indexDelete(e: number, h: number): void {
    const index = this.index;
    const mask = this.indexMask;
    let i = h & mask;
    while (index[2 * i] !== e + 1) i = (i + 1) & mask;
    index[2 * i] = 0;
    for (let j = (i + 1) & mask; index[2 * j] !== 0; j = (j + 1) & mask) {
      const ideal = index[2 * j + 1]! & mask;
      if (((j - ideal) & mask) >= ((j - i) & mask)) {
        index[2 * i] = index[2 * j]!;
        index[2 * i + 1] = index[2 * j + 1]!;
        index[2 * j] = 0;
        i = j;
      }
    }
  }

  /** Doubles the index and re-inserts every entry from the old one. */
  private growIndex(): void {
    const old = this.index;
    const slots = (this.indexMask + 1) * 2;
    this.index = new Int32Array(slots * 2);
    this.indexMask = slots - 1;
    for (let i = 0; i < old.length; i += 2) if (old[i] !== 0) this.indexInsert(old[i]! - 1, old[i + 1]!);
  }
}
