// Off-heap keyed tables of the stream rules (issue 19): (namespace, key string) -> a number (and
// optionally a second one), entries kept in first-in-first-out lists the caller owns, so the
// oldest entries of a list can be forgotten. The dedupe window of AEP-0001 §7.4 is one such
// list (the last N distinct (source, id) keys); the closed units of each session (run terminals,
// acks, closed attention requests) are one list per session and kind.
//
// Memory layout, chosen for `aep validate` on large files, where these tables are most of the
// memory the run touches and of what the garbage collector would otherwise trace:
// - entries live in fixed-size blocks of typed arrays, allocated as the table fills (the first
//   block grows by doubling from a few entries, so a table that stays small stays small) and
//   never copied once full; freed entries are reused first (a free list);
// - a key of up to KEY_SLOT characters, all below U+0100, is stored as its character codes in
//   the entry's slot of a byte block; any other key is kept as a string (`longKeys`). A million
//   key strings (or a Map's entries, boxed numbers and key strings per closed unit) are heap
//   objects every young-generation collection copies and promotes; bytes in a typed array cost
//   the collector nothing;
// - the hash index (linear probing, backward-shift deletion) holds the entry number and its
//   32-bit key hash side by side, so a probe that misses never touches the entry blocks.
// Keys are compared exactly (namespace and every character); the hash only narrows the search.

/** Entries per full block (a power of two). */
const BLOCK_BITS = 12;
const BLOCK = 1 << BLOCK_BITS;
const BLOCK_MASK = BLOCK - 1;
/** Longest key kept in the byte blocks (ULIDs have 26 characters, UUIDs 36). */
export const KEY_SLOT = 40;
/** Per-entry fields in `meta`: namespace, key hash, key length (-1: in `longKeys`), next entry of its list (-1: none). */
const META = 4;
/** Entries of the first block when a table is created. */
const FIRST_BLOCK = 8;

/** A first-in-first-out list of a {@link KeyTable}'s entries (owned by the caller). */
export interface KeyList {
  head: number;
  tail: number;
  count: number;
}

/** A new, empty {@link KeyList}. */
export function keyList(): KeyList {
  return { head: -1, tail: -1, count: 0 };
}

/**
 * 32-bit hash of (namespace, key) under a table owner's `seed`; every character counts (keys
 * are short). Pure; exported for tests (colliding keys: test/stream-idwindow.test.ts).
 */
export function keyHash(seed: number, ns: number, key: string): number {
  let h = Math.imul(seed ^ ns, 0x9e3779b1) ^ key.length;
  const n = key.length;
  let i = 0;
  for (; i + 1 < n; i += 2) h = Math.imul(h ^ (key.charCodeAt(i) | (key.charCodeAt(i + 1) << 16)), 0x01000193) ^ (h >>> 15);
  if (i < n) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193) ^ (h >>> 15);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/**
 * (namespace, key) -> value (and `aux`, when asked for), at most `capacity` entries, each in one
 * caller-owned {@link KeyList}. The caller computes the key hash ({@link keyHash}) once per key
 * and passes it to `find` and `add`; `add` requires the key to be absent.
 */
export class KeyTable {
  private readonly capacity: number;
  private readonly withAux: boolean;
  private readonly meta: Int32Array[] = [];
  private readonly values: Float64Array[] = [];
  private readonly auxes: Float64Array[] = [];
  private readonly chars: Uint8Array[] = [];
  private readonly longKeys = new Map<number, string>();
  /** Hash index: pairs (entry number + 1, key hash); 0 = empty. Size a power of two, at least twice the entries. */
  private index = new Int32Array(4 * FIRST_BLOCK);
  private indexMask = 2 * FIRST_BLOCK - 1;
  /** Entries allocated, in use and free (the head of the free list, linked through `next`). */
  private allocatedEntries = 0;
  private used = 0;
  private free = -1;

  constructor(capacity = 0x7fffffff, opts: { aux?: boolean } = {}) {
    this.capacity = capacity;
    this.withAux = opts.aux === true;
  }

  /** Entries held. */
  get size(): number {
    return this.used;
  }

  /** Entries the blocks have room for (never more than the capacity). */
  get allocated(): number {
    return this.allocatedEntries;
  }

  /** Entries whose key is kept as a string, not in the byte blocks. */
  get stringKeys(): number {
    return this.longKeys.size;
  }

  /** Entry number of (ns, key) with key hash `h`, or -1. */
  find(ns: number, key: string, h: number): number {
    const index = this.index;
    const mask = this.indexMask;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const e = index[2 * i]! - 1;
      if (e < 0) return -1;
      if (index[2 * i + 1] === h && this.holds(e, ns, key)) return e;
    }
  }

  value(e: number): number {
    return this.values[e >>> BLOCK_BITS]![e & BLOCK_MASK]!;
  }

  setValue(e: number, v: number): void {
    this.values[e >>> BLOCK_BITS]![e & BLOCK_MASK] = v;
  }

  /** The second value of entry `e` (tables made with `aux: true`). */
  aux(e: number): number {
    return this.auxes[e >>> BLOCK_BITS]![e & BLOCK_MASK]!;
  }

  setAux(e: number, v: number): void {
    this.auxes[e >>> BLOCK_BITS]![e & BLOCK_MASK] = v;
  }

  /**
   * Adds (ns, key) -> value at the end of `list` (the caller checked the key is absent and that
   * the table is below its capacity). Returns the entry number.
   */
  add(list: KeyList, ns: number, key: string, h: number, value: number, aux = 0): number {
    let e = this.free;
    if (e >= 0) {
      this.free = this.meta[e >>> BLOCK_BITS]![(e & BLOCK_MASK) * META + 3]!;
    } else {
      e = this.allocatedEntries;
      if (e >= this.capacity) throw new RangeError('KeyTable is full');
      this.grow();
    }
    this.used++;
    if (this.used * 2 > this.indexMask + 1) this.growIndex();
    const b = e >>> BLOCK_BITS;
    const o = e & BLOCK_MASK;
    const meta = this.meta[b]!;
    meta[o * META] = ns;
    meta[o * META + 1] = h;
    meta[o * META + 3] = -1;
    this.values[b]![o] = value;
    if (this.withAux) this.auxes[b]![o] = aux;
    this.storeKey(e, meta, o, key);
    this.indexInsert(e, h);
    if (list.tail >= 0) this.meta[list.tail >>> BLOCK_BITS]![(list.tail & BLOCK_MASK) * META + 3] = e;
    else list.head = e;
    list.tail = e;
    list.count++;
    return e;
  }

  /** Forgets the oldest entry of `list` (which must not be empty); returns its namespace. */
  removeOldest(list: KeyList): number {
    const e = list.head;
    const meta = this.meta[e >>> BLOCK_BITS]!;
    const o = (e & BLOCK_MASK) * META;
    const ns = meta[o]!;
    this.indexDelete(e, meta[o + 1]!);
    if (meta[o + 2] === -1) this.longKeys.delete(e);
    list.head = meta[o + 3]!;
    if (list.head < 0) list.tail = -1;
    list.count--;
    meta[o + 3] = this.free;
    this.free = e;
    this.used--;
    return ns;
  }

  /** Makes room for entry `allocatedEntries` (the first block doubles up to a full one). */
  private grow(): void {
    const e = this.allocatedEntries;
    const b = e >>> BLOCK_BITS;
    if (b === 0) {
      const have = this.values.length === 0 ? 0 : this.values[0]!.length;
      if (e === have) {
        const size = Math.min(BLOCK, this.capacity, Math.max(FIRST_BLOCK, have * 2));
        this.meta[0] = grown(this.meta[0], new Int32Array(size * META));
        this.values[0] = grown(this.values[0], new Float64Array(size));
        if (this.withAux) this.auxes[0] = grown(this.auxes[0], new Float64Array(size));
        this.chars[0] = grown(this.chars[0], new Uint8Array(size * KEY_SLOT));
      }
    } else if (b === this.meta.length) {
      const size = Math.min(BLOCK, this.capacity - b * BLOCK);
      this.meta.push(new Int32Array(size * META));
      this.values.push(new Float64Array(size));
      if (this.withAux) this.auxes.push(new Float64Array(size));
      this.chars.push(new Uint8Array(size * KEY_SLOT));
    }
    this.allocatedEntries = e + 1;
  }

  /** True when entry `e` is (ns, key). */
  private holds(e: number, ns: number, key: string): boolean {
    const meta = this.meta[e >>> BLOCK_BITS]!;
    const o = e & BLOCK_MASK;
    if (meta[o * META] !== ns) return false;
    const len = meta[o * META + 2]!;
    if (len < 0) return this.longKeys.get(e) === key;
    if (len !== key.length) return false;
    const chars = this.chars[e >>> BLOCK_BITS]!;
    const base = o * KEY_SLOT;
    for (let i = 0; i < len; i++) if (chars[base + i] !== key.charCodeAt(i)) return false;
    return true;
  }

  private storeKey(e: number, meta: Int32Array, o: number, key: string): void {
    const n = key.length;
    if (n <= KEY_SLOT) {
      const chars = this.chars[e >>> BLOCK_BITS]!;
      const base = o * KEY_SLOT;
      let i = 0;
      for (; i < n; i++) {
        const c = key.charCodeAt(i);
        if (c > 0xff) break;
        chars[base + i] = c;
      }
      if (i === n) {
        meta[o * META + 2] = n;
        return;
      }
    }
    meta[o * META + 2] = -1;
    this.longKeys.set(e, key);
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

  /**
   * Sizes the index for `entries` entries (at most the capacity) at once, so that a table known
   * to grow large is not rehashed at every doubling on the way. Never shrinks it.
   */
  reserve(entries: number): void {
    const n = Math.min(entries, this.capacity);
    let slots = this.indexMask + 1;
    while (n * 2 > slots) slots *= 2;
    if (slots <= this.indexMask + 1) return;
    try {
      this.growIndex(slots);
    } catch {
      // Only a hint: an index too large to allocate leaves the table growing as it fills.
    }
  }

  /** Grows the index to `slots` slots (default: twice as many) and re-inserts every entry from the old one. */
  private growIndex(slots = (this.indexMask + 1) * 2): void {
    const old = this.index;
    this.index = new Int32Array(slots * 2);
    this.indexMask = slots - 1;
    for (let i = 0; i < old.length; i += 2) if (old[i] !== 0) this.indexInsert(old[i]! - 1, old[i + 1]!);
  }
}

/** `next` with the contents of `prev` (if any) copied to its front. */
function grown<T extends Int32Array | Float64Array | Uint8Array>(prev: T | undefined, next: T): T {
  if (prev !== undefined) next.set(prev as never);
  return next;
}
