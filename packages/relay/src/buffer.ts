// The replay buffer: per-session, ordered by (epoch, seq), deduplicated on (source, id),
// bounded by a per-session depth, a session cap and a total size (AEP-0003 §5, §7;
// AEP-0001 §7.4–§7.6). It keeps the raw received bytes of every held Event so replay is
// byte-identical (AEP-0003 §5 "Keep raw bytes").

/** A position inside a session: `(epoch, seq, sub)`. `sub > 0` orders seq-less Events after the positioned one they followed. */
export type Pos = readonly [epoch: number, seq: number, sub: number];

/** One held Event. `parsed` is kept only while it is cheap; replay re-parses `raw` when needed. */
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
   * Copy the raw bytes (UTF-8) into `dst` at `at`; returns the byte count. Present on held
   * entries, whose bytes live off the JS heap (issue 19): a sink copies them without decoding.
   */
  readonly copyRaw?: (dst: Buffer, at: number) => number;
  /** The Event's `agent`, when known (scope constraints on commands, control.ts). */
  readonly agent?: string;
}

/**
 * Off-heap storage of raw Event bytes (issue 19, docs/benchmarks.md "Performance pass (issue 19)"): events are
 * appended to 1 MiB slabs allocated outside the V8 heap, so the replay buffer holds no per-Event
 * string and the garbage collector never walks or copies them. A slab is released (to the GC,
 * which frees its memory with the last reference) once nothing held lives in it; slabs that
 * became sparse are compacted, so the arena stays within ~1.15x of the bytes held.
 */
class Slab {
  used = 0;
  live = 0;
  constructor(readonly buf: Buffer) {}
}

const SLAB = 1 << 20;
/** Events larger than this get a slab of their own (exact size). */
const BIG = SLAB >> 2;

class RawArena {
  private cur: Slab = new Slab(Buffer.allocUnsafeSlow(SLAB));
  readonly slabs = new Set<Slab>([this.cur]);
  allocated = SLAB;
  live = 0;
  /** No compaction before this many more bytes were written (amortizes the walk). */
  private quietUntil = 0;
  private written = 0;
  compactions = 0;

  /** Room for `n` bytes: the current slab, a fresh one, or a dedicated one for a big Event. */
  private room(n: number): Slab {
    if (n > BIG) {
      const s = new Slab(Buffer.allocUnsafeSlow(n));
      this.slabs.add(s);
      this.allocated += n;
      return s;
    }
    if (this.cur.used + n > this.cur.buf.length) {
      const old = this.cur;
      this.cur = new Slab(Buffer.allocUnsafeSlow(SLAB));
      this.slabs.add(this.cur);
      this.allocated += SLAB;
      if (old.live === 0) this.drop(old);
    }
    return this.cur;
  }

  /** Append bytes (`src[at, at + byteLen)` copied as is, or a string encoded once as UTF-8). */
  put(src: Buffer | string, byteLen: number, h: Held, at = 0): void {
    const s = this.room(byteLen);
    const off = s.used;
    const n = typeof src === 'string' ? s.buf.write(src, off, byteLen, 'utf8') : src.copy(s.buf, off, at, at + byteLen);
    s.used += n;
    s.live += n;
    this.live += n;
    this.written += n;
    h.slab = s;
    h.off = off;
    h.inArena = true;
    (h as { bytes: number }).bytes = n;
  }

  /** The entry's bytes are no longer needed here (evicted, or committed to the store). */
  release(h: Held): void {
    const s = h.slab;
    if (s === null || !h.inArena) return;
    h.inArena = false;
    s.live -= h.bytes;
    this.live -= h.bytes;
    if (s.live === 0 && s !== this.cur) this.drop(s);
  }

  private drop(s: Slab): void {
    if (this.slabs.delete(s)) this.allocated -= s.buf.length;
  }

  /** True when sparse slabs hold enough dead bytes to be worth a compaction. */
  wantsCompaction(): boolean {
    return this.written >= this.quietUntil && this.allocated > this.live * 1.15 + 4 * SLAB;
  }

  /** Move the entries of sparse slabs into fresh ones; every live entry is visited once. */
  compact(entries: Iterable<Held>): void {
    const sparse = new Set<Slab>();
    for (const s of this.slabs) if (s !== this.cur && s.live < s.buf.length * 0.85) sparse.add(s);
    if (sparse.size > 0) {
      for (const h of entries) {
        const from = h.slab;
        if (from === null || !h.inArena || !sparse.has(from)) continue;
        const n = h.bytes;
        const to = this.room(n);
        from.buf.copy(to.buf, to.used, h.off, h.off + n);
        h.slab = to;
        h.off = to.used;
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

/** Interned type names (a small, bounded set in practice; unbounded vendor names are not kept). */
const TYPES = new Map<string, string>();
function internType(t: string): string {
  const hit = TYPES.get(t);
  if (hit !== undefined) return hit;
  if (TYPES.size < 4096) TYPES.set(t, t);
  return t;
}

/**
 * A held Event: attributes on the heap, raw bytes in the arena, or only in the durable store once
 * committed there (`slab` null: `ReplayBuffer.spill`; replay reads them back, core.ts `fetchRaw`).
 */
export class Held implements Entry {
  slab: Slab | null = null;
  off = 0;
  /** The Event's `agent` (interned per session). */
  agent: string | undefined = undefined;
  readonly bytes: number = 0;
  // The position as three numbers, not a tuple object (72 bytes of heap per held Event less);
  // `pos` builds the tuple when asked. bit 0 positioned, bit 1 in the arena, bits 2.. rawRank.
  readonly epoch: number;
  readonly seq: number;
  readonly sub: number;
  private bits: number;
  constructor(
    readonly rowid: number,
    readonly source: string,
    readonly id: string,
    readonly session: string | null,
    pos: Pos,
    positioned: boolean,
    readonly type: string,
    rawRank: number,
  ) {
    this.epoch = pos[0];
    this.seq = pos[1];
    this.sub = pos[2];
    this.bits = (positioned ? 1 : 0) | (rawRank << 2);
  }
  get pos(): Pos {
    return [this.epoch, this.seq, this.sub];
  }
  /** True for sequenced session Events. */
  get positioned(): boolean {
    return (this.bits & 1) !== 0;
  }
  get rawRank(): number {
    return this.bits >> 2;
  }
  /** True while the bytes count in the arena (false once evicted or spilled). */
  get inArena(): boolean {
    return (this.bits & 2) !== 0;
  }
  set inArena(v: boolean) {
    this.bits = v ? this.bits | 2 : this.bits & ~2;
  }
  /** The exact received text, decoded on demand (replay, rare lookups); throws once spilled (read it from the store). */
  get raw(): string {
    if (this.slab === null) throw new Error(`Event row ${this.rowid} is held in the store only`);
    return this.slab.buf.toString('utf8', this.off, this.off + this.bytes);
  }
  /** True while the bytes are in memory (`raw` and `copyRaw` work). */
  get inMemory(): boolean {
    return this.slab !== null;
  }
  copyRaw(dst: Buffer, at: number): number {
    if (this.slab === null) throw new Error(`Event row ${this.rowid} is held in the store only`);
    return this.slab.buf.copy(dst, at, this.off, this.off + this.bytes);
  }
}

/** `cmpPos(e.pos, p)` without building the tuple (binary searches over held entries). */
function cmpAt(e: Held, p: Pos): number {
  return e.epoch - p[0] || e.seq - p[1] || e.sub - p[2];
}

/** Compare two positions lexicographically. */
export function cmpPos(a: Pos, b: Pos): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
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
  insert(e: Entry): void;
  remove(e: Entry): void;
  /** Persist the highest evicted position of a session (the tombstone) or forget it (null). */
  evicted(session: string, pos: Pos | null): void;
}

class SessionBuf {
  entries: Held[] = [];
  /** The session's emitter URI and agent as last held: one string per session, not per Event. */
  lastSource = '';
  lastAgent: string | undefined = undefined;
  head = 0;
  evictedHigh: Pos | null = null;
  constructor(readonly name: string | null) {}
  get size(): number {
    return this.entries.length - this.head;
  }
  first(): Held | undefined {
    return this.entries[this.head];
  }
  last(): Held | undefined {
    return this.entries.length > this.head ? this.entries[this.entries.length - 1] : undefined;
  }
  /** Insert keeping order; usually an append. */
  insert(e: Held): void {
    const last = this.last();
    if (!last || (last.epoch - e.epoch || last.seq - e.seq || last.sub - e.sub) <= 0) {
      this.entries.push(e);
      return;
    }
    const p: Pos = [e.epoch, e.seq, e.sub];
    let lo = this.head;
    let hi = this.entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cmpAt(this.entries[mid]!, p) <= 0) lo = mid + 1;
      else hi = mid;
    }
    this.entries.splice(lo, 0, e);
  }
  shift(): Held | undefined {
    const e = this.entries[this.head];
    if (!e) return undefined;
    this.entries[this.head] = undefined as unknown as Held;
    this.head++;
    if (this.head > 1024 && this.head * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
    return e;
  }
  /** Index of the first entry strictly after `p`. */
  after(p: Pos): number {
    let lo = this.head;
    let hi = this.entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cmpAt(this.entries[mid]!, p) <= 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
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
  private readonly sessions = new Map<string, SessionBuf>(); // insertion order = LRU (re-set on write)
  private readonly agentBuf = new SessionBuf(null);
  // Dedupe index by `id`, then `source` (ids rarely collide across sources; no key string is built).
  private readonly byId = new Map<string, Held | Held[]>();
  /** Raw bytes of everything held, off the JS heap. */
  private readonly arena = new RawArena();
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
  ) {}

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

  /** True when an Event with this `(source, id)` is held. */
  has(source: string, id: string): boolean {
    const v = this.byId.get(id);
    if (v === undefined) return false;
    if (Array.isArray(v)) return v.some((e) => e.source === source);
    return v.source === source;
  }

  private index(e: Held): void {
    const v = this.byId.get(e.id);
    if (v === undefined) this.byId.set(e.id, e);
    else if (Array.isArray(v)) v.push(e);
    else this.byId.set(e.id, [v, e]);
    this.held++;
  }

  private unindex(e: Held): void {
    const v = this.byId.get(e.id);
    if (v === e) this.byId.delete(e.id);
    else if (Array.isArray(v)) {
      const rest = v.filter((x) => x !== e);
      if (rest.length === 1) this.byId.set(e.id, rest[0]!);
      else this.byId.set(e.id, rest);
    } else return;
    this.held--;
  }

  /** The position a seq-less session Event gets: right after the last held Event of its session. */
  nextUnpositioned(session: string | null): Pos {
    const buf = session === null ? this.agentBuf : this.sessions.get(session);
    const last = buf?.last();
    if (last) return [last.pos[0], last.pos[1], last.pos[2] + 1];
    const t = buf?.evictedHigh ?? (session !== null ? this.tombstones.get(session) : undefined);
    if (t) return [t[0], t[1], t[2] + 1];
    return [0, -1, 1];
  }

  /**
   * Admit an Event (dedupe on (source, id)); evict past the limits. `persist` is false while
   * loading from the store (the rows are already there).
   */
  admit(e: Entry, persist = true): Admission {
    if (this.has(e.source, e.id)) {
      this.stats.duplicates++;
      return 'duplicate';
    }
    const h = this.hold(e.rowid, e.source, e.id, e.session, e.pos, e.positioned, e.type, e.rawRank, e.agent);
    this.arena.put(e.raw, Buffer.byteLength(e.raw), h);
    this.index(h);
    this.place(h, persist);
    this.lastAdmitted = h;
    return 'admitted';
  }

  /** A held entry with interned strings (session name, source per session, type). */
  private hold(
    rowid: number,
    source: string,
    id: string,
    session: string | null,
    pos: Pos,
    positioned: boolean,
    type: string,
    rank: number,
    agent: string | undefined,
  ): Held {
    const buf = session === null ? this.agentBuf : this.sessions.get(session);
    let src = source;
    let ag = agent;
    if (buf !== undefined) {
      if (buf.lastSource === source) src = buf.lastSource;
      else buf.lastSource = source;
      if (buf.lastAgent === agent) ag = buf.lastAgent;
      else buf.lastAgent = agent;
    }
    const h = new Held(rowid, src, id, buf !== undefined ? buf.name : session, pos, positioned, internType(type), rank);
    h.agent = ag;
    return h;
  }

  /**
   * The store committed this entry: its bytes leave memory (read back from the store on replay),
   * so a durable relay holds only the index in RAM (issue 19 memory goal). Evicted or already
   * spilled entries are left alone.
   */
  spill(e: Entry): void {
    if (!(e instanceof Held) || !e.inArena || this.pinned.has(e)) return;
    this.arena.release(e);
    e.slab = null;
  }

  /**
   * Entries whose bytes must stay in memory even with a store (held honest while the stored row
   * is not, core.ts `load`): never spilled.
   */
  private readonly pinned = new WeakSet<Held>();
  /** The entry the last successful `admit` created (store load spills or pins it). */
  lastAdmitted: Held | null = null;
  pin(e: Held): void {
    this.pinned.add(e);
  }

  /** Hold an indexed Event in its session, mirror it, evict past the limits. */
  private place(e: Held, persist: boolean): void {
    let buf: SessionBuf;
    if (e.session === null) buf = this.agentBuf;
    else {
      const existing = this.sessions.get(e.session);
      if (existing) {
        this.sessions.delete(e.session);
        this.sessions.set(e.session, existing);
        buf = existing;
      } else {
        buf = new SessionBuf(e.session);
        buf.lastSource = e.source;
        const t = this.tombstones.get(e.session);
        if (t) {
          buf.evictedHigh = t;
          this.tombstones.delete(e.session);
        }
        this.sessions.set(e.session, buf);
      }
    }
    buf.insert(e);
    this.bytes += e.bytes;
    if (persist) this.sink?.insert(e);
    this.enforce(buf);
    if (this.arena.wantsCompaction()) this.arena.compact(this.allHeld());
  }

  private *allHeld(): Iterable<Held> {
    for (let i = this.agentBuf.head; i < this.agentBuf.entries.length; i++) yield this.agentBuf.entries[i]!;
    for (const b of this.sessions.values()) for (let i = b.head; i < b.entries.length; i++) yield b.entries[i]!;
  }

  /**
   * Admit unless `(source, id)` is held; the entry is built only when new. One index lookup
   * and one write per new Event (the hot ingest path).
   */
  admitNew(source: string, id: string, make: (rowid: number) => Entry, nextRowid: () => number): Admission {
    if (this.isHeld(source, id)) return 'duplicate';
    const e = make(nextRowid());
    return this.admitRaw(e.rowid, e.source, e.id, e.session, e.pos, e.positioned, e.type, e.rawRank, e.raw, Buffer.byteLength(e.raw), e.agent);
  }

  private isHeld(source: string, id: string): boolean {
    const v = this.byId.get(id);
    if (v !== undefined && (Array.isArray(v) ? v.some((x) => x.source === source) : v.source === source)) {
      this.stats.duplicates++;
      return true;
    }
    return false;
  }

  /**
   * The ingest path (core.ts): admit unless `(source, id)` is held, copying the raw bytes once
   * into the arena: `raw` is the received text, or a buffer holding its exact UTF-8 bytes at `at`
   * (`byteLen` = their length). No Entry object is built for a duplicate.
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
  ): Admission {
    if (typeof rowid === 'function' && this.isHeld(source, id)) return 'duplicate';
    const h = this.hold(typeof rowid === 'function' ? rowid() : rowid, source, id, session, pos, positioned, type, rank, agent);
    this.arena.put(raw, byteLen, h, at);
    const v = this.byId.get(id);
    if (v === undefined) this.byId.set(id, h);
    else if (Array.isArray(v)) v.push(h);
    else this.byId.set(id, [v, h]);
    this.held++;
    this.place(h, true);
    return 'admitted';
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
    const e = buf.shift();
    if (!e) return;
    this.unindex(e);
    this.bytes -= e.bytes;
    this.arena.release(e);
    this.stats.evicted++;
    this.sink?.remove(e);
    const p = e.pos;
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
    this.stats.sessionsEvicted++;
    if (buf.evictedHigh) this.rememberTombstone(name, buf.evictedHigh);
  }

  private enforce(buf: SessionBuf): void {
    while (buf.size > this.limits.depth) this.evictOne(buf);
    while (this.sessions.size > this.limits.maxSessions) {
      const lru = this.sessions.keys().next().value as string;
      this.evictSession(lru);
    }
    while (this.bytes > this.limits.totalBytes) {
      // Oldest Events of the least recently written session go first; agent-scoped last.
      const lru = this.sessions.values().next().value as SessionBuf | undefined;
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

  /** The newest held sequenced Event of a session (commands and other seq-less Events skipped). */
  lastPositioned(session: string): Held | undefined {
    const buf = this.sessions.get(session);
    if (!buf) return undefined;
    for (let i = buf.entries.length - 1; i >= buf.head && i >= buf.entries.length - 64; i--) {
      const e = buf.entries[i]!;
      if (e.positioned) return e;
    }
    return undefined;
  }

  /** Snapshot for resume from positions (strictly after each; marker when evicted, AEP-0003 §5, §7). */
  snapshotFrom(positions: ReadonlyArray<{ session: string; epoch: number; seq: number }>): ReplayPart[] {
    const out: ReplayPart[] = [];
    for (const p of positions) {
      const buf = this.sessions.get(p.session);
      const req: Pos = [p.epoch, p.seq, 0];
      const high = buf ? buf.evictedHigh : (this.tombstones.get(p.session) ?? null);
      if (!buf && !high) continue; // unknown session: nothing, no marker (AEP-0003 §7)
      const part: ReplayPart = { session: p.session, after: req, until: buf?.last()?.pos ?? null, evictedAtStart: high };
      if (high && cmpPos(high, req) > 0) {
        const first = buf?.first();
        part.exhausted = first ? { epoch: first.pos[0], seq: Math.max(first.pos[1], 0) } : { epoch: high[0], seq: high[1] + 1 };
      }
      out.push(part);
    }
    return out;
  }

  /** Snapshot of everything held (replay-all and `live=0` without `from`), never with markers. */
  snapshotAll(): ReplayPart[] {
    const out: ReplayPart[] = [];
    if (this.agentBuf.size > 0) out.push({ session: null, after: null, until: this.agentBuf.last()!.pos, evictedAtStart: this.agentEvictedHigh });
    for (const buf of this.sessions.values()) out.push({ session: buf.name, after: null, until: buf.last()?.pos ?? null, evictedAtStart: buf.evictedHigh });
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
    for (let i = from ? buf.after(from) : buf.head; i < buf.entries.length && entries.length < max; i++) {
      const e = buf.entries[i]!;
      if (cmpAt(e, part.until) > 0) break;
      entries.push(e);
    }
    return { entries, gap: false };
  }
}
