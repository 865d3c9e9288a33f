// The replay buffer: per-session, ordered by (epoch, seq), deduplicated on (source, id),
// bounded by a per-session depth, a session cap and a total size (AEP-0003 §5, §7;
// AEP-0001 §7.4–§7.6). It keeps the raw received bytes of every held Event so replay is
// byte-identical (AEP-0003 §5 "Keep raw bytes"): in an off-heap arena, or (a durable relay) in
// the store only, read back on replay.
//
// Layout (issue 19, docs/benchmarks.md "Columnar replay index"): a held Event is a SLOT, an index
// into typed-array columns (row id, position, byte length, arena offset, interned source / agent /
// type, flags, the id's characters and its hash), not a JS object. Nothing per Event lives on the
// JS heap, so the garbage collector neither copies nor marks the index, and a held Event costs
// ~100 bytes instead of ~280 plus its strings. Dedupe is an open-addressing hash table of slots;
// a session's order is an Int32Array of slots. `Entry` objects are built only when asked for
// (replay reads, the store sink, tests).

/** A position inside a session: `(epoch, seq, sub)`. `sub > 0` orders seq-less Events after the positioned one they followed. */
export type Pos = readonly [epoch: number, seq: number, sub: number];

/** One held Event. */
export interface Entry {
  /** Row id in the durable store (monotonic, also the global arrival order). */
  readonly rowid: number;
  /** Dedupe key, part 1: the emitter (AEP-0001 §7.4: `(source, id)`, never bare `id`). */
  readonly source: string;
  /** Dedupe key, part 2. */
  readonly id: string;
  /** Session, or null for agent-scoped Events. */
  readonly session: string | null;
  readonly pos: Pos;
  /** True for sequenced session Events (the only ones that carry an SSE `id:`). */
  readonly positioned: boolean;
  readonly type: string;
  /** Exact bytes received (one JSON object, no newline). */
  readonly raw: string;
  readonly bytes: number;
  /** Lowest ceiling rank that receives the raw bytes (capture.ts `rawRank`), to skip gating cheaply. */
  readonly rawRank: number;
  /**
   * Copy the raw bytes (UTF-8) into `dst` at `at`; returns the byte count. Present on entries
   * whose bytes are in memory as bytes (the arena, a request body): a sink copies them without
   * decoding.
   */
  readonly copyRaw?: (dst: Buffer, at: number) => number;
  /** The Event's `agent`, when known (scope constraints on commands, control.ts). */
  readonly agent?: string;
}

/** Limits of the buffer (all validated by the options module). */
export interface BufferLimits {
  /** Events held per session (advertised as `replay.buffer`). */
  depth: number;
  /** Sessions held; the least recently written one is evicted past it. */
  maxSessions: number;
  /** Total raw bytes held across all sessions. */
  totalBytes: number;
}

/** What the durable store must mirror. Called synchronously by the buffer. */
export interface BufferSink {
  /**
   * A new held Event. `e` is valid during the call only (its `copyRaw` reads the bytes where
   * they are now): a sink that keeps the bytes copies them here.
   */
  insert(e: Entry): void;
  remove(e: Entry): void;
  /** `remove` by row id only: when present, called instead of `remove` (no Entry is built). */
  removeRow?(rowid: number): void;
  /** Persist the highest evicted position of a session (the tombstone) or forget it (null). */
  evicted(session: string, pos: Pos | null): void;
  /**
   * True when the sink keeps every inserted Event's bytes and can give them back (`fetch` of the
   * store, also before they are committed): the buffer then holds none of them in memory.
   */
  readonly keepsBytes?: boolean;
}

/**
 * Off-heap storage of raw Event bytes (issue 19): events are appended to 1 MiB slabs allocated
 * outside the V8 heap. A slab is released (to the GC, which frees its memory with the last
 * reference) once nothing held lives in it; slabs that became sparse are compacted, so the arena
 * stays within ~1.15x of the bytes held.
 */
class Slab {
  used = 0;
  live = 0;
  /** Index in the arena's slab table (the slots' `slab` column). */
  idx = -1;
  constructor(readonly buf: Buffer) {}
}

const SLAB = 1 << 20;
/** Events larger than this get a slab of their own (exact size). */
const BIG = SLAB >> 2;
/** Released slabs kept for reuse: at least this many... */
const POOL = 8;
/** ...or slabs worth 1/POOL_SHARE of the live bytes, when that is more. */
const POOL_SHARE = 5;

/** Flags of a slot. */
const F_USED = 1;
const F_POSITIONED = 2;
const F_PINNED = 8;
/** rawRank (0..3) in bits 4-5. */
const RANK_SHIFT = 4;

/** Ids up to this many Latin-1 characters are held inline (ULIDs: 26, UUIDs: 36); longer ones in a map. */
const ID_INLINE = 36;
const ID_BIG = 255;

/** Strings shared by many held Events (sources, agents, types), counted so unused ones go. */
class Interner {
  private readonly map = new Map<string, number>();
  readonly values: Array<string | undefined> = [];
  private refs: Int32Array = new Int32Array(64);
  private readonly free: number[] = [];

  /** The index of `s`, or -1 when nothing held uses it. */
  find(s: string): number {
    const i = this.map.get(s);
    return i === undefined ? -1 : i;
  }
  /** The index of `s`, counted once more. */
  acquire(s: string): number {
    let i = this.map.get(s);
    if (i === undefined) {
      i = this.free.length > 0 ? this.free.pop()! : this.values.length;
      if (i === this.values.length) this.values.push(s);
      else this.values[i] = s;
      if (i >= this.refs.length) {
        const r = new Int32Array(this.refs.length * 2);
        r.set(this.refs);
        this.refs = r;
      }
      this.map.set(s, i);
    }
    this.refs[i]!++;
    return i;
  }
  /** One more use of index `i` (a value already held). */
  ref(i: number): number {
    this.refs[i]!++;
    return i;
  }
  /** One use of index `i` less. */
  release(i: number): void {
    if (i < 0) return;
    if (--this.refs[i]! > 0) return;
    this.map.delete(this.values[i]!);
    this.values[i] = undefined;
    this.free.push(i);
  }
  /** Distinct strings held, and indexes ever handed out (freed ones are reused first). */
  get counts(): { strings: number; indexes: number } {
    return { strings: this.map.size, indexes: this.values.length };
  }
}

/** FNV-1a over the UTF-16 code units of `s` (the dedupe table's hash). */
function hashId(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h | 0;
}

/**
 * The columns. Every array is indexed by slot; a slot is in use while `flags & F_USED`. A slot's
 * session list, its dedupe table cell and its arena bytes are released together (`free`).
 */
class Columns {
  cap = 0;
  rowid = new Float64Array(0);
  epoch = new Float64Array(0);
  seq = new Float64Array(0);
  sub = new Float64Array(0);
  bytes = new Uint32Array(0);
  off = new Uint32Array(0);
  hash = new Int32Array(0);
  src = new Int32Array(0);
  agent = new Int32Array(0);
  type = new Int32Array(0);
  flags = new Uint8Array(0);
  idLen = new Uint8Array(0);
  ids = new Uint8Array(0);
  /** Per slot: the index of the arena slab holding its bytes (-1: none in memory). */
  slab = new Int32Array(0);

  grow(cap: number): void {
    const f64 = (a: Float64Array) => {
      const b = new Float64Array(cap);
      b.set(a);
      return b;
    };
    const u32 = (a: Uint32Array) => {
      const b = new Uint32Array(cap);
      b.set(a);
      return b;
    };
    const i32 = (a: Int32Array) => {
      const b = new Int32Array(cap);
      b.set(a);
      return b;
    };
    const u8 = (a: Uint8Array, n = cap) => {
      const b = new Uint8Array(n);
      b.set(a);
      return b;
    };
    this.rowid = f64(this.rowid);
    this.epoch = f64(this.epoch);
    this.seq = f64(this.seq);
    this.sub = f64(this.sub);
    this.bytes = u32(this.bytes);
    this.off = u32(this.off);
    this.hash = i32(this.hash);
    this.src = i32(this.src);
    this.agent = i32(this.agent);
    this.type = i32(this.type);
    this.flags = u8(this.flags);
    this.idLen = u8(this.idLen);
    this.ids = u8(this.ids, cap * ID_INLINE);
    const old = this.cap;
    this.slab = i32(this.slab);
    this.slab.fill(-1, old);
    this.cap = cap;
  }
}

class RawArena {
  /** Slabs by index (null: a free index); `slabs` holds the same ones. */
  readonly table: Array<Slab | null> = [];
  private readonly freeIdx: number[] = [];
  readonly slabs = new Set<Slab>();
  /**
   * Released 1 MiB slabs kept for reuse (at most POOL, or a fifth of the live bytes' worth): a
   * fresh allocation costs a page fault per 4 KiB written (measured: 0.9-1.4 µs per 456-byte
   * Event against 0.08 µs into a reused slab; 12 µs per fault on the 2026-12-06 machine). A
   * compaction releases the sparse slabs all at once, 10-15 % of a full arena: with 8 kept, a
   * `--memory` relay at its retention allocated 6 fresh slabs for each reused one (issue 19,
   * docs/benchmarks.md). Reuse is safe: nothing reads a slab but through a slot that lives in it
   * (`Held` checks it).
   */
  private readonly pool: Buffer[] = [];
  private cur: Slab = this.add(new Slab(Buffer.allocUnsafeSlow(SLAB)));
  allocated = SLAB;
  live = 0;
  /** No compaction before this many more bytes were written (amortizes the walk). */
  private quietUntil = 0;
  private written = 0;
  compactions = 0;

  constructor(private readonly c: Columns) {}

  private add(s: Slab): Slab {
    s.idx = this.freeIdx.length > 0 ? this.freeIdx.pop()! : this.table.length;
    if (s.idx === this.table.length) this.table.push(s);
    else this.table[s.idx] = s;
    this.slabs.add(s);
    return s;
  }

  get bookkeeping(): { pooled: number; indexes: number } {
    return { pooled: this.pool.length, indexes: this.table.length };
  }

  /** The slab holding a slot's bytes, or null. */
  slabOf(slot: number): Slab | null {
    const i = this.c.slab[slot]!;
    return i < 0 ? null : this.table[i]!;
  }

  /** Room for `n` bytes: the current slab, a fresh one, or a dedicated one for a big Event. */
  private room(n: number): Slab {
    if (n > BIG) {
      const s = this.add(new Slab(Buffer.allocUnsafeSlow(n)));
      this.allocated += n;
      return s;
    }
    if (this.cur.used + n > this.cur.buf.length) {
      const old = this.cur;
      this.cur = this.add(new Slab(this.pool.pop() ?? Buffer.allocUnsafeSlow(SLAB)));
      this.allocated += SLAB;
      if (old.live === 0) this.drop(old);
    }
    return this.cur;
  }

  /** Append bytes (`src[at, at + byteLen)` copied as is, or a string encoded once as UTF-8) for `slot`. */
  put(src: Buffer | string, byteLen: number, slot: number, at = 0): number {
    const s = this.room(byteLen);
    const off = s.used;
    const n = typeof src === 'string' ? s.buf.write(src, off, byteLen, 'utf8') : src.copy(s.buf, off, at, at + byteLen);
    s.used += n;
    s.live += n;
    this.live += n;
    this.written += n;
    const c = this.c;
    c.slab[slot] = s.idx;
    c.off[slot] = off;
    return n;
  }

  /** The slot's bytes are no longer needed here (evicted, or committed to the store). */
  release(slot: number): void {
    const c = this.c;
    const s = this.slabOf(slot);
    if (!s) return;
    c.slab[slot] = -1;
    const n = c.bytes[slot]!;
    s.live -= n;
    this.live -= n;
    if (s.live === 0 && s !== this.cur) this.drop(s);
  }

  private drop(s: Slab): void {
    if (!this.slabs.delete(s)) return;
    this.allocated -= s.buf.length;
    this.table[s.idx] = null;
    this.freeIdx.push(s.idx);
    if (s.buf.length === SLAB && this.pool.length < Math.max(POOL, Math.floor(this.live / (POOL_SHARE * SLAB)))) this.pool.push(s.buf);
  }

  /** True when sparse slabs hold enough dead bytes to be worth a compaction. */
  wantsCompaction(): boolean {
    return this.written >= this.quietUntil && this.allocated > this.live * 1.15 + 4 * SLAB;
  }

  /**
   * Move the slots of the sparsest slabs into others, until what stays allocated is within
   * 1.05x the bytes held + 2 MiB; every slot in use is visited once. Sparsest first (issue 19):
   * every slab under 85 % live was moved before, which with evictions spread over the sessions
   * meant copying nearly the whole arena at every compaction, into fresh (page-faulted) slabs.
   */
  compact(used: number): void {
    const candidates: Slab[] = [];
    for (const s of this.slabs) if (s !== this.cur && s.live < s.buf.length * 0.85) candidates.push(s);
    candidates.sort((a, b) => a.live / a.buf.length - b.live / b.buf.length);
    const sparse = new Set<Slab>();
    let left = this.allocated;
    const goal = this.live * 1.05 + 2 * SLAB;
    for (const s of candidates) {
      if (left <= goal) break;
      sparse.add(s);
      left -= s.buf.length - s.live;
    }
    if (sparse.size > 0) {
      const c = this.c;
      for (let i = 0; i < used; i++) {
        const from = this.slabOf(i);
        if (!from || !sparse.has(from)) continue;
        const n = c.bytes[i]!;
        const to = this.room(n);
        const o = c.off[i]!;
        from.buf.copy(to.buf, to.used, o, o + n);
        c.slab[i] = to.idx;
        c.off[i] = to.used;
        to.used += n;
        to.live += n;
        from.live -= n;
      }
      for (const s of sparse) this.drop(s);
      this.compactions++;
    }
    this.quietUntil = this.written + Math.max(4 * SLAB, this.live >> 4);
  }
}

/** The slots of one session (or of agent-scoped Events), in position order. */
class SessionBuf {
  slots = new Int32Array(8);
  head = 0;
  tail = 0;
  /**
   * Interned indexes of the source and agent of the session's last admission (the interning fast
   * path). An index may have been released and reused since (that Event evicted): a hit is only
   * taken when the index still names the same string.
   */
  lastSourceIdx = -1;
  lastAgentIdx = -1;
  evictedHigh: Pos | null = null;
  /** Neighbours in the relay's least-recently-written order (named sessions only). */
  older: SessionBuf | null = null;
  newer: SessionBuf | null = null;
  constructor(readonly name: string | null) {}
  get size(): number {
    return this.tail - this.head;
  }
  /** Room for one more at the tail (compacting the consumed head first when it is most of the array). */
  private room(): void {
    if (this.tail < this.slots.length) return;
    if (this.head > 0 && this.head * 2 >= this.slots.length) {
      this.slots.copyWithin(0, this.head, this.tail);
      this.tail -= this.head;
      this.head = 0;
      return;
    }
    const b = new Int32Array(this.slots.length * 2);
    b.set(this.slots.subarray(this.head, this.tail));
    this.tail -= this.head;
    this.head = 0;
    this.slots = b;
  }
  /** Insert keeping position order; usually an append. */
  insert(c: Columns, slot: number): void {
    this.room();
    const t = this.tail;
    if (t === this.head || cmpSlots(c, this.slots[t - 1]!, slot) <= 0) {
      this.slots[t] = slot;
      this.tail = t + 1;
      return;
    }
    const at = this.afterSlot(c, slot);
    this.slots.copyWithin(at + 1, at, t);
    this.slots[at] = slot;
    this.tail = t + 1;
  }
  /** Index of the first slot strictly after the position of `slot`. */
  private afterSlot(c: Columns, slot: number): number {
    let lo = this.head;
    let hi = this.tail;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cmpSlots(c, this.slots[mid]!, slot) <= 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
  /** Index of the first slot strictly after `p`. */
  after(c: Columns, p: Pos): number {
    let lo = this.head;
    let hi = this.tail;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cmpSlotPos(c, this.slots[mid]!, p) <= 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
  first(): number {
    return this.tail > this.head ? this.slots[this.head]! : -1;
  }
  last(): number {
    return this.tail > this.head ? this.slots[this.tail - 1]! : -1;
  }
  shift(): number {
    if (this.tail === this.head) return -1;
    return this.slots[this.head++]!;
  }
}

function cmpSlots(c: Columns, a: number, b: number): number {
  return c.epoch[a]! - c.epoch[b]! || c.seq[a]! - c.seq[b]! || c.sub[a]! - c.sub[b]!;
}
function cmpSlotPos(c: Columns, a: number, p: Pos): number {
  return c.epoch[a]! - p[0] || c.seq[a]! - p[1] || c.sub[a]! - p[2];
}
function posOf(c: Columns, slot: number): Pos {
  return [c.epoch[slot]!, c.seq[slot]!, c.sub[slot]!];
}

/** Compare two positions lexicographically. */
export function cmpPos(a: Pos, b: Pos): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/**
 * A held Event as an object: built on demand (replay reads, the sink, tests). Its `raw` and
 * `copyRaw` read the slot while it still holds this Event (same row id); once the Event was
 * evicted `inMemory` is false and `raw` throws, so a reader asks the store by row id, which
 * answers "gone" (a gap, AEP-0003 §8.4).
 */
export class Held implements Entry {
  constructor(
    private readonly buf: ReplayBuffer,
    /** The slot this Event occupied when the object was built. */
    readonly slot: number,
    readonly rowid: number,
    readonly source: string,
    readonly id: string,
    readonly session: string | null,
    readonly pos: Pos,
    readonly positioned: boolean,
    readonly type: string,
    readonly bytes: number,
    readonly rawRank: number,
    readonly agent: string | undefined,
  ) {}
  /** True while the bytes are in memory (`raw` and `copyRaw` work). */
  get inMemory(): boolean {
    return this.buf.slabOf(this) !== null;
  }
  /** The exact received text; throws when it is not in memory (read it from the store). */
  get raw(): string {
    const s = this.buf.slabOf(this);
    if (s === null) throw new Error(`Event row ${this.rowid} is held in the store only`);
    const o = this.buf.offsetOf(this.slot);
    return s.buf.toString('utf8', o, o + this.bytes);
  }
  copyRaw(dst: Buffer, at: number): number {
    const s = this.buf.slabOf(this);
    if (s === null) throw new Error(`Event row ${this.rowid} is held in the store only`);
    const o = this.buf.offsetOf(this.slot);
    return s.buf.copy(dst, at, o, o + this.bytes);
  }
}

/** An Event being admitted, as the sink sees it: its bytes where they are now (a request body or a string). */
class Arriving implements Entry {
  constructor(
    readonly rowid: number,
    readonly source: string,
    readonly id: string,
    readonly session: string | null,
    readonly pos: Pos,
    readonly positioned: boolean,
    readonly type: string,
    readonly rawRank: number,
    readonly bytes: number,
    readonly agent: string | undefined,
    private readonly src: Buffer | string,
    private readonly at: number,
  ) {}
  get raw(): string {
    return typeof this.src === 'string' ? this.src : this.src.toString('utf8', this.at, this.at + this.bytes);
  }
  copyRaw(dst: Buffer, at: number): number {
    return typeof this.src === 'string' ? dst.write(this.src, at, 'utf8') : this.src.copy(dst, at, this.at, this.at + this.bytes);
  }
}

/**
 * One session's part of a replay snapshot. It holds positions, not Events, so a consumer that
 * reads slowly pins nothing the buffer evicts (issue 12 item 5): `read` fetches a few Events at a
 * time and reports a gap when Events after the consumer's cursor were evicted meanwhile.
 */
export interface ReplayPart {
  session: string | null;
  /** Present when positions after the request were evicted (AEP-0003 §5): the earliest held. */
  exhausted?: { epoch: number; seq: number };
  /** Deliver strictly after this position (null: from the first held). */
  after: Pos | null;
  /** ... up to this one (the newest held when the snapshot was taken). */
  until: Pos | null;
  /** The session's eviction high-water mark when the snapshot was taken. */
  evictedAtStart: Pos | null;
}

/** Result of admitting one Event. */
export type Admission = 'admitted' | 'duplicate';

/** The per-session replay buffer with dedupe, eviction and tombstones. */
export class ReplayBuffer {
  /** Named sessions by name; their write order is the list below, not the map's order. */
  private readonly sessions = new Map<string, SessionBuf>();
  /**
   * Least recently written session first. A list through the sessions themselves: moving a
   * session to the end on every write was a `Map` delete and set, which leaves holes that every
   * later walk from the start (the eviction's "oldest session") skipped again (issue 19).
   */
  private lruOldest: SessionBuf | null = null;
  private lruNewest: SessionBuf | null = null;
  private readonly agentBuf = new SessionBuf(null);
  private readonly c = new Columns();
  /** Slots never used yet start at `used`; freed ones are reused first. */
  private used = 0;
  private readonly freeSlots: number[] = [];
  /** Dedupe: open addressing on the id hash, cells hold slot + 1 (0 = empty); at most half full. */
  private table = new Int32Array(2048);
  private readonly sources = new Interner();
  private readonly agents = new Interner();
  private readonly types = new Interner();
  private readonly bigIds = new Map<number, string>();
  /** Raw bytes of everything held in memory, off the JS heap. */
  private readonly arena: RawArena;
  /** The sink keeps the bytes (a durable store): nothing but pinned Events goes to the arena. */
  private readonly bytesInSink: boolean;
  private held = 0;
  private readonly tombstones = new Map<string, Pos>();
  /** Highest evicted position of agent-scoped Events (their bucket has no name, so no tombstone). */
  private agentEvictedHigh: Pos | null = null;
  private bytes = 0;
  /** Counters for /healthz. */
  readonly stats = { evicted: 0, sessionsEvicted: 0, duplicates: 0 };

  constructor(
    private readonly limits: BufferLimits,
    private readonly sink: BufferSink | null,
  ) {
    this.c.grow(1024);
    this.arena = new RawArena(this.c);
    this.bytesInSink = sink?.keepsBytes === true;
  }

  get heldEvents(): number {
    return this.held;
  }
  get heldBytes(): number {
    return this.bytes;
  }
  get sessionCount(): number {
    return this.sessions.size;
  }
  /** Off-heap arena figures (bench, tests): bytes allocated in slabs, bytes live, compactions run. */
  get arenaStats(): { allocated: number; live: number; slabs: number; compactions: number } {
    const a = this.arena;
    return { allocated: a.allocated, live: a.live, slabs: a.slabs.size, compactions: a.compactions };
  }

  /** Interned strings (tests: unused ones go, freed indexes are reused). */
  get internStats(): {
    sources: { strings: number; indexes: number };
    agents: { strings: number; indexes: number };
    types: { strings: number; indexes: number };
  } {
    return { sources: this.sources.counts, agents: this.agents.counts, types: this.types.counts };
  }

  /** The arena's slab bookkeeping (tests): released 1 MiB slabs kept for reuse, slab table size. */
  get arenaSlabs(): { pooled: number; indexes: number } {
    return this.arena.bookkeeping;
  }

  /** Slots allocated in the per-session position lists (tests: a session's list stays near its depth). */
  get sessionSlots(): number {
    let n = this.agentBuf.slots.length;
    for (let b = this.lruOldest; b !== null; b = b.newer) n += b.slots.length;
    return n;
  }

  /**
   * The dedupe index's memory (tests: ids of up to 36 Latin-1 characters are held inline, only
   * longer ones in the side map, which keeps the ids of held Events only; the table is at most
   * half full and doubles only when one more Event would make it more).
   */
  get idStats(): { sideIds: number; table: number } {
    return { sideIds: this.bigIds.size, table: this.table.length };
  }

  /** The slab holding `h`'s bytes, or null when they are not in memory (or `h` is no longer held). */
  slabOf(h: Held): Slab | null {
    const c = this.c;
    if ((c.flags[h.slot]! & F_USED) === 0 || c.rowid[h.slot] !== h.rowid) return null;
    return this.arena.slabOf(h.slot);
  }
  /** Arena offset of a slot's bytes. */
  offsetOf(slot: number): number {
    return this.c.off[slot]!;
  }

  // ---- dedupe index -------------------------------------------------------------------------

  private idEquals(slot: number, id: string): boolean {
    const c = this.c;
    const n = c.idLen[slot]!;
    if (n === ID_BIG) return this.bigIds.get(slot) === id;
    if (n !== id.length) return false;
    const ids = c.ids;
    const base = slot * ID_INLINE;
    for (let i = 0; i < n; i++) if (ids[base + i] !== id.charCodeAt(i)) return false;
    return true;
  }

  /** The slot holding `(source, id)`, or -1. */
  private find(srcIdx: number, id: string, h: number): number {
    if (srcIdx < 0) return -1;
    const t = this.table;
    const mask = t.length - 1;
    const c = this.c;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const v = t[i]!;
      if (v === 0) return -1;
      const s = v - 1;
      if (c.hash[s] === h && c.src[s] === srcIdx && this.idEquals(s, id)) return s;
    }
  }

  private tableInsert(slot: number, h: number): void {
    const t = this.table;
    const mask = t.length - 1;
    let i = h & mask;
    while (t[i] !== 0) i = (i + 1) & mask;
    t[i] = slot + 1;
  }

  /** Remove a slot's cell (backward-shift deletion: no tombstones in the table). */
  private tableRemove(slot: number): void {
    const t = this.table;
    const mask = t.length - 1;
    const c = this.c;
    let i = c.hash[slot]! & mask;
    while (t[i] !== slot + 1) {
      if (t[i] === 0) return;
      i = (i + 1) & mask;
    }
    for (let j = (i + 1) & mask; ; j = (j + 1) & mask) {
      const v = t[j]!;
      if (v === 0) break;
      const home = c.hash[v - 1]! & mask;
      // Move v into the hole at i unless its home lies cyclically in (i, j].
      if (i <= j ? home <= i || home > j : home <= i && home > j) {
        t[i] = v;
        i = j;
      }
    }
    t[i] = 0;
  }

  private growTable(): void {
    const t = new Int32Array(this.table.length * 2);
    this.table = t;
    const c = this.c;
    for (let s = 0; s < this.used; s++) if ((c.flags[s]! & F_USED) !== 0) this.tableInsert(s, c.hash[s]!);
  }

  /** True when an Event with this `(source, id)` is held. */
  has(source: string, id: string): boolean {
    return this.find(this.sources.find(source), id, hashId(id)) >= 0;
  }

  // ---- slots --------------------------------------------------------------------------------

  private newSlot(): number {
    if (this.freeSlots.length > 0) return this.freeSlots.pop()!;
    // 1.5x, not 2x: the columns are ~100 bytes per slot, and old and new coexist while copying.
    if (this.used === this.c.cap) this.c.grow(Math.ceil(this.c.cap * 1.5));
    return this.used++;
  }

  /**
   * Fill a slot (interned strings, position, id) and index it. `buf` is the session's list when
   * it exists already (its last source and agent are the interning fast path).
   */
  private fill(
    slot: number,
    rowid: number,
    source: string,
    srcIdx: number,
    id: string,
    h: number,
    buf: SessionBuf | undefined,
    pos: Pos,
    positioned: boolean,
    type: string,
    rank: number,
    agent: string | undefined,
    bytes: number,
  ): void {
    const c = this.c;
    c.rowid[slot] = rowid;
    c.epoch[slot] = pos[0];
    c.seq[slot] = pos[1];
    c.sub[slot] = pos[2];
    c.bytes[slot] = bytes;
    c.hash[slot] = h;
    c.flags[slot] = F_USED | (positioned ? F_POSITIONED : 0) | (rank << RANK_SHIFT);
    // Source and agent: one acquire each; the session's last one is found without a map lookup.
    let si: number;
    if (buf !== undefined && buf.lastSourceIdx >= 0 && this.sources.values[buf.lastSourceIdx] === source) {
      si = this.sources.ref(buf.lastSourceIdx);
    } else si = srcIdx >= 0 ? this.sources.ref(srcIdx) : this.sources.acquire(source);
    c.src[slot] = si;
    let ai = -1;
    if (agent !== undefined) {
      if (buf !== undefined && buf.lastAgentIdx >= 0 && this.agents.values[buf.lastAgentIdx] === agent) {
        ai = this.agents.ref(buf.lastAgentIdx);
      } else ai = this.agents.acquire(agent);
    }
    c.agent[slot] = ai;
    c.type[slot] = this.types.acquire(type);
    if (buf !== undefined) {
      buf.lastSourceIdx = si;
      buf.lastAgentIdx = ai;
    }
    const n = id.length;
    let inline = n <= ID_INLINE;
    if (inline) {
      const ids = c.ids;
      const base = slot * ID_INLINE;
      for (let i = 0; i < n; i++) {
        const ch = id.charCodeAt(i);
        if (ch > 0xff) {
          inline = false;
          break;
        }
        ids[base + i] = ch;
      }
    }
    if (inline) c.idLen[slot] = n;
    else {
      c.idLen[slot] = ID_BIG;
      this.bigIds.set(slot, id);
    }
    if ((this.held + 1) * 2 > this.table.length) this.growTable();
    this.tableInsert(slot, h);
    this.held++;
  }

  /** Free a slot: index cell, interned strings, arena bytes. */
  private freeSlot(slot: number): void {
    const c = this.c;
    this.tableRemove(slot);
    this.sources.release(c.src[slot]!);
    this.agents.release(c.agent[slot]!);
    this.types.release(c.type[slot]!);
    if (c.idLen[slot] === ID_BIG) this.bigIds.delete(slot);
    this.arena.release(slot);
    c.flags[slot] = 0;
    this.freeSlots.push(slot);
    this.held--;
  }

  private idOf(slot: number): string {
    const c = this.c;
    const n = c.idLen[slot]!;
    if (n === ID_BIG) return this.bigIds.get(slot)!;
    const base = slot * ID_INLINE;
    return String.fromCharCode.apply(null, c.ids.subarray(base, base + n) as unknown as number[]);
  }

  /** The held Event in `slot` (of `session`) as an object. */
  private view(slot: number, session: string | null): Held {
    const c = this.c;
    const f = c.flags[slot]!;
    const ai = c.agent[slot]!;
    return new Held(
      this,
      slot,
      c.rowid[slot]!,
      this.sources.values[c.src[slot]!]!,
      this.idOf(slot),
      session,
      posOf(c, slot),
      (f & F_POSITIONED) !== 0,
      this.types.values[c.type[slot]!]!,
      c.bytes[slot]!,
      (f >> RANK_SHIFT) & 3,
      ai >= 0 ? this.agents.values[ai] : undefined,
    );
  }

  // ---- admission ----------------------------------------------------------------------------

  /** The position a seq-less session Event gets: right after the last held Event of its session. */
  nextUnpositioned(session: string | null): Pos {
    const buf = session === null ? this.agentBuf : this.sessions.get(session);
    const last = buf ? buf.last() : -1;
    if (last >= 0) {
      const c = this.c;
      return [c.epoch[last]!, c.seq[last]!, c.sub[last]! + 1];
    }
    const t = buf?.evictedHigh ?? (session !== null ? this.tombstones.get(session) : undefined);
    if (t) return [t[0], t[1], t[2] + 1];
    return [0, -1, 1];
  }

  /**
   * Admit an Event (dedupe on (source, id)); evict past the limits. `persist` is false while
   * loading from the store (the rows are already there, and so are their bytes).
   */
  admit(e: Entry, persist = true): Admission {
    const raw = e.raw;
    return this.admitRaw(e.rowid, e.source, e.id, e.session, e.pos, e.positioned, e.type, e.rawRank, raw, Buffer.byteLength(raw), e.agent, 0, persist);
  }

  /**
   * The ingest path (core.ts): admit unless `(source, id)` is held. `raw` is the received text,
   * or a buffer holding its exact UTF-8 bytes at `at` (`byteLen` = their length): copied once,
   * into the arena or (a sink that keeps bytes) by the sink. `rowid` may be a function, called
   * only for a new Event. No object is built for a duplicate.
   */
  admitRaw(
    rowid: number | (() => number),
    source: string,
    id: string,
    session: string | null,
    pos: Pos,
    positioned: boolean,
    type: string,
    rank: number,
    raw: Buffer | string,
    byteLen: number,
    agent?: string,
    at = 0,
    persist = true,
  ): Admission {
    const h = hashId(id);
    const srcIdx = this.sources.find(source);
    if (this.find(srcIdx, id, h) >= 0) {
      this.stats.duplicates++;
      return 'duplicate';
    }
    const buf = session === null ? this.agentBuf : this.sessions.get(session);
    const slot = this.newSlot();
    const row = typeof rowid === 'function' ? rowid() : rowid;
    this.fill(slot, row, source, srcIdx, id, h, buf, pos, positioned, type, rank, agent, byteLen);
    const c = this.c;
    // Bytes: into the arena, unless the sink keeps them (a durable store) and they are stored or
    // about to be (persist); then the sink copies them from where they are now.
    if (!this.bytesInSink) c.bytes[slot] = this.arena.put(raw, byteLen, slot, at);
    this.lastSlot = slot;
    this.lastSession = session;
    this.place(
      slot,
      session,
      buf,
      persist && this.sink !== null ? new Arriving(row, source, id, session, pos, positioned, type, rank, byteLen, agent, raw, at) : null,
    );
    return 'admitted';
  }

  /** The slot the last successful admission filled (store load spills or pins it). */
  private lastSlot = -1;
  private lastSession: string | null = null;
  /** The entry the last successful `admit` created. */
  get lastAdmitted(): Held | null {
    const s = this.lastSlot;
    return s >= 0 && (this.c.flags[s]! & F_USED) !== 0 ? this.view(s, this.lastSession) : null;
  }

  /**
   * The entry's bytes leave memory (the store has them; replay reads them back). Evicted,
   * pinned or already spilled entries are left alone.
   */
  spill(e: Entry): void {
    if (!(e instanceof Held) || this.slabOf(e) === null || (this.c.flags[e.slot]! & F_PINNED) !== 0) return;
    this.arena.release(e.slot);
  }

  /**
   * Hold this entry's bytes in memory for good (held honest while the stored row is not, core.ts
   * `load`): put in the arena when they are not there, never spilled.
   */
  pin(e: Entry, raw: string = e.raw): void {
    if (!(e instanceof Held)) return;
    const c = this.c;
    if ((c.flags[e.slot]! & F_USED) === 0 || c.rowid[e.slot] !== e.rowid) return;
    c.flags[e.slot]! |= F_PINNED;
    if (c.slab[e.slot] !== -1) return;
    // The honest bytes may differ in length from the stored ones: the byte total follows.
    const n = this.arena.put(raw, Buffer.byteLength(raw), e.slot);
    this.bytes += n - c.bytes[e.slot]!;
    c.bytes[e.slot] = n;
  }

  /** Hold an indexed slot in its session, mirror it, evict past the limits. */
  private place(slot: number, session: string | null, existing: SessionBuf | undefined, arriving: Entry | null): void {
    let buf: SessionBuf;
    if (session === null) buf = this.agentBuf;
    else if (existing) {
      if (existing !== this.lruNewest) {
        this.unlink(existing);
        this.append(existing);
      }
      buf = existing;
    } else {
      buf = new SessionBuf(session);
      buf.lastSourceIdx = this.c.src[slot]!;
      buf.lastAgentIdx = this.c.agent[slot]!;
      const t = this.tombstones.get(session);
      if (t) {
        buf.evictedHigh = t;
        this.tombstones.delete(session);
      }
      this.sessions.set(session, buf);
      this.append(buf);
    }
    buf.insert(this.c, slot);
    this.bytes += this.c.bytes[slot]!;
    if (arriving) this.sink?.insert(arriving);
    this.enforce(buf);
    if (this.arena.wantsCompaction()) this.arena.compact(this.used);
  }

  /** Make `buf` the most recently written session. */
  private append(buf: SessionBuf): void {
    buf.older = this.lruNewest;
    buf.newer = null;
    if (this.lruNewest) this.lruNewest.newer = buf;
    else this.lruOldest = buf;
    this.lruNewest = buf;
  }

  private unlink(buf: SessionBuf): void {
    if (buf.older) buf.older.newer = buf.newer;
    else this.lruOldest = buf.newer;
    if (buf.newer) buf.newer.older = buf.older;
    else this.lruNewest = buf.older;
    buf.older = buf.newer = null;
  }

  /** Restore a persisted tombstone / eviction high-water mark (store load). */
  restoreEvicted(session: string, pos: Pos): void {
    const buf = this.sessions.get(session);
    if (buf) buf.evictedHigh = pos;
    else this.rememberTombstone(session, pos);
  }

  private rememberTombstone(session: string, pos: Pos): void {
    this.tombstones.set(session, pos);
    // Tombstones are small but bounded too: keep at most 4x the session cap.
    const cap = this.limits.maxSessions * 4;
    while (this.tombstones.size > cap) {
      const oldest = this.tombstones.keys().next().value as string;
      this.tombstones.delete(oldest);
      this.sink?.evicted(oldest, null);
    }
  }

  private evictOne(buf: SessionBuf): void {
    const slot = buf.shift();
    if (slot < 0) return;
    const c = this.c;
    const p = posOf(c, slot);
    this.bytes -= c.bytes[slot]!;
    this.stats.evicted++;
    if (this.sink) {
      if (this.sink.removeRow) this.sink.removeRow(c.rowid[slot]!);
      else this.sink.remove(this.view(slot, buf.name));
    }
    this.freeSlot(slot);
    if (buf.name === null && (!this.agentEvictedHigh || cmpPos(p, this.agentEvictedHigh) > 0)) this.agentEvictedHigh = p;
    if (buf.name !== null && (!buf.evictedHigh || cmpPos(p, buf.evictedHigh) > 0)) {
      buf.evictedHigh = p;
      this.sink?.evicted(buf.name, p);
    }
  }

  private evictSession(name: string): void {
    const buf = this.sessions.get(name);
    if (!buf) return;
    while (buf.size > 0) this.evictOne(buf);
    this.sessions.delete(name);
    this.unlink(buf);
    this.stats.sessionsEvicted++;
    if (buf.evictedHigh) this.rememberTombstone(name, buf.evictedHigh);
  }

  private enforce(buf: SessionBuf): void {
    while (buf.size > this.limits.depth) this.evictOne(buf);
    while (this.sessions.size > this.limits.maxSessions) this.evictSession(this.lruOldest!.name!);
    while (this.bytes > this.limits.totalBytes) {
      // Oldest Events of the least recently written session go first; agent-scoped last.
      const lru = this.lruOldest;
      if (lru && lru !== buf) {
        this.evictOne(lru);
        if (lru.size === 0 && lru.name !== null) this.evictSession(lru.name);
        continue;
      }
      if (this.agentBuf.size > 0) {
        this.evictOne(this.agentBuf);
        continue;
      }
      if (buf.size > 1) {
        this.evictOne(buf);
        continue;
      }
      break; // a single Event larger than the cap stays (the body limit bounds it)
    }
  }

  // ---- reads --------------------------------------------------------------------------------

  /** The newest held sequenced Event of a session (commands and other seq-less Events skipped). */
  lastPositioned(session: string): Held | undefined {
    const buf = this.sessions.get(session);
    if (!buf) return undefined;
    const c = this.c;
    for (let i = buf.tail - 1; i >= buf.head && i >= buf.tail - 64; i--) {
      const s = buf.slots[i]!;
      if ((c.flags[s]! & F_POSITIONED) !== 0) return this.view(s, session);
    }
    return undefined;
  }

  /** Snapshot for resume from positions (strictly after each; marker when evicted, AEP-0003 §5, §7). */
  snapshotFrom(positions: ReadonlyArray<{ session: string; epoch: number; seq: number }>): ReplayPart[] {
    const out: ReplayPart[] = [];
    const c = this.c;
    for (const p of positions) {
      const buf = this.sessions.get(p.session);
      const req: Pos = [p.epoch, p.seq, 0];
      const high = buf ? buf.evictedHigh : (this.tombstones.get(p.session) ?? null);
      if (!buf && !high) continue; // unknown session: nothing, no marker (AEP-0003 §7)
      const last = buf ? buf.last() : -1;
      const part: ReplayPart = { session: p.session, after: req, until: last >= 0 ? posOf(c, last) : null, evictedAtStart: high };
      if (high && cmpPos(high, req) > 0) {
        const first = buf ? buf.first() : -1;
        part.exhausted = first >= 0 ? { epoch: c.epoch[first]!, seq: Math.max(c.seq[first]!, 0) } : { epoch: high[0], seq: high[1] + 1 };
      }
      out.push(part);
    }
    return out;
  }

  /** Snapshot of everything held (replay-all and `live=0` without `from`), never with markers. */
  snapshotAll(): ReplayPart[] {
    const out: ReplayPart[] = [];
    const c = this.c;
    if (this.agentBuf.size > 0) out.push({ session: null, after: null, until: posOf(c, this.agentBuf.last()), evictedAtStart: this.agentEvictedHigh });
    for (let buf = this.lruOldest; buf !== null; buf = buf.newer) {
      const last = buf.last();
      out.push({ session: buf.name, after: null, until: last >= 0 ? posOf(c, last) : null, evictedAtStart: buf.evictedHigh });
    }
    return out;
  }

  /**
   * Up to `max` held Events of a snapshot part strictly after `cursor` (null: from its start), in
   * order. `gap` is true when Events after the cursor were evicted since the snapshot: the
   * consumer can no longer be given them (it is disconnected and resumes, AEP-0003 §8.4).
   */
  read(part: ReplayPart, cursor: Pos | null, max: number): { entries: Entry[]; gap: boolean } {
    const name = part.session;
    const buf = name === null ? this.agentBuf : this.sessions.get(name);
    const high = name === null ? this.agentEvictedHigh : (buf?.evictedHigh ?? this.tombstones.get(name) ?? null);
    const from = cursor ?? part.after;
    const base = from && part.evictedAtStart ? (cmpPos(from, part.evictedAtStart) >= 0 ? from : part.evictedAtStart) : (from ?? part.evictedAtStart);
    if (high && (!base || cmpPos(high, base) > 0)) return { entries: [], gap: true };
    if (!buf || !part.until) return { entries: [], gap: false };
    const entries: Entry[] = [];
    const c = this.c;
    for (let i = from ? buf.after(c, from) : buf.head; i < buf.tail && entries.length < max; i++) {
      const s = buf.slots[i]!;
      if (cmpSlotPos(c, s, part.until) > 0) break;
      entries.push(this.view(s, name));
    }
    return { entries, gap: false };
  }
}
