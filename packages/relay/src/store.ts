// Durable store: SQLite (better-sqlite3) in WAL mode with `synchronous=FULL`, written by a
// worker thread in group commits. Every Event answered 202 is in a committed (fsynced)
// transaction before the answer is written (issue 4 §5; docs/decisions.md "Relay: durability").
// The fsync happens off the event loop, so the relay keeps parsing and fanning out meanwhile;
// whatever was queued during one commit goes into the next one (natural group commit).
// The in-memory ReplayBuffer is the index; the store mirrors its inserts, evictions and
// tombstones, and rebuilds it on start.
import { chmodSync, closeSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { BufferSink, Entry, Pos } from './buffer.js';
import type { StoredToken } from './tokens.js';
import { OpQueue, SEG_MAX_BYTES, SEG_MAX_EVENTS, SegmentIndex, decodeSegment, encodeLens } from './segments.js';
import { RelayStartError } from './options.js';

/** The store's files besides the database (SQLite's WAL and shared memory). */
const SIDE_FILES = ['-wal', '-shm', '-journal'];

/**
 * Make the store's directory (mode 0700, each missing level created without recursion: a
 * recursive mkdir spins forever under /proc) and its file (0600, so SQLite gives its WAL and
 * shared-memory files the same mode). `ours` = the default store directory, tightened even
 * when it exists. Fails with `AEP_RELAY_STORE_UNAVAILABLE` naming the path and the cause.
 */
export function prepareStorePath(path: string, ours: boolean): void {
  const file = resolve(path);
  const dir = dirname(file);
  const fail = (what: string, err: unknown): never => {
    throw new RelayStartError('AEP_RELAY_STORE_UNAVAILABLE', `store ${path}: ${what}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  };
  const missing: string[] = [];
  for (let d = dir; ; d = dirname(d)) {
    let st;
    try {
      st = statSync(d);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') fail(`cannot inspect ${d}`, err);
      missing.unshift(d);
      if (dirname(d) === d) fail(`no existing ancestor of ${dir}`, err);
      continue;
    }
    if (!st.isDirectory()) fail(`${d} is not a directory`, new Error('ENOTDIR'));
    break;
  }
  for (const d of missing) {
    try {
      mkdirSync(d, { mode: 0o700 });
      chmodSync(d, 0o700);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') fail(`cannot create directory ${d}`, err);
    }
  }
  if (ours && missing.length === 0) {
    try {
      chmodSync(dir, 0o700);
    } catch {
      /* not ours after all */
    }
  }
  try {
    closeSync(openSync(file, 'a', 0o600));
  } catch (err) {
    fail('cannot create the store file', err);
  }
  restrictFiles(file);
}

/** 0600 on the database and whichever side files exist. */
function restrictFiles(file: string): void {
  for (const f of [file, ...SIDE_FILES.map((x) => file + x)]) {
    try {
      chmodSync(f, 0o600);
    } catch {
      /* absent */
    }
  }
}

/** A persisted row, as loaded at start. */
export interface StoredRow {
  rowid: number;
  raw: string;
}

/** Minimal surface of a better-sqlite3 database that we use. */
interface Db {
  pragma(s: string): unknown;
  exec(s: string): unknown;
  prepare(s: string): { run(...a: unknown[]): unknown; all(...a: unknown[]): unknown[]; iterate(...a: unknown[]): IterableIterator<unknown> };
  transaction<F extends (...a: never[]) => unknown>(f: F): F;
  close(): void;
  readonly open: boolean;
}

// Events are stored in segments (version 4, issue 19; segments.ts): one row per run of
// consecutive row ids committed together, `lens` their byte lengths (uint32 LE each), `raw` their
// bytes back to back; `segdead` the bitmap of its evicted ones (no row: none; a table of its own,
// since an UPDATE of a seg row would rewrite its whole `raw`). Session, position and
// dedupe key are read back from the bytes on load (in row id = arrival order, which also
// reproduces the positions of seq-less Events). `held` (one row per Event, versions 1-3) is only
// read to migrate an older store, then left empty.
// `tokens` (version 3): scoped tokens, the secret's sha256 only (contract C7).
// `bindings` (version 2): which claim (sha256 of the hello `claim`, never the claim) raised which
// attention request, and since when its asker is offline (ms, NULL while connected).
const SCHEMA = `CREATE TABLE IF NOT EXISTS held (rowid INTEGER PRIMARY KEY, raw TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS seg (id INTEGER PRIMARY KEY, lens BLOB NOT NULL, raw BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS segdead (id INTEGER PRIMARY KEY, dead BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS evicted (session TEXT PRIMARY KEY, epoch INTEGER NOT NULL, seq INTEGER NOT NULL, sub INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS bindings (session TEXT NOT NULL, request TEXT NOT NULL, claim TEXT NOT NULL, offline INTEGER, PRIMARY KEY (session, request));
CREATE TABLE IF NOT EXISTS tokens (id TEXT PRIMARY KEY, name TEXT NOT NULL, hash TEXT NOT NULL, scopes TEXT NOT NULL, created TEXT NOT NULL, expires TEXT, revoked TEXT);
PRAGMA user_version = 4;`;

// The writer thread (plain CommonJS, evaluated; no file to resolve in source or dist builds).
const WORKER = `(() => {
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
let db;
try {
  db = new Database(workerData.path, { timeout: 200 });
  db.pragma('journal_mode = WAL');
  db.pragma(workerData.sync === 'full' ? 'synchronous = FULL' : 'synchronous = NORMAL');
  // One relay per store: hold the write lock for the life of the process.
  db.pragma('locking_mode = EXCLUSIVE');
  // 2 MiB of page cache (better-sqlite3 builds SQLite with 16 MB): the writer appends and rarely
  // reads back (replay reads of recent rows come from the queue); 16 MB of cached pages was most
  // of a durable relay's memory above the --memory one (docs/benchmarks.md, 2026-12-05).
  db.pragma('cache_size = -2048');
  db.exec('BEGIN IMMEDIATE; COMMIT');
} catch (e) {
  parentPort.postMessage({ ready: false, error: String(e && e.message || e) });
  return;
}
parentPort.postMessage({ ready: true });
const insSeg = db.prepare('INSERT INTO seg (id, lens, raw) VALUES (?, ?, ?)');
const setDead = db.prepare('INSERT INTO segdead (dead, id) VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET dead = excluded.dead');
const dropSeg = db.prepare('DELETE FROM seg WHERE id = ?');
const dropDead = db.prepare('DELETE FROM segdead WHERE id = ?');
const getOne = db.prepare('SELECT lens, raw FROM seg WHERE id = ?');
const rewrite = db.prepare('UPDATE seg SET lens = ?, raw = ? WHERE id = ?');
const up = db.prepare('INSERT INTO evicted (session, epoch, seq, sub) VALUES (?, ?, ?, ?) ON CONFLICT(session) DO UPDATE SET epoch = excluded.epoch, seq = excluded.seq, sub = excluded.sub');
const forget = db.prepare('DELETE FROM evicted WHERE session = ?');
const bind = db.prepare('INSERT INTO bindings (session, request, claim, offline) VALUES (?, ?, ?, ?) ON CONFLICT(session, request) DO UPDATE SET claim = excluded.claim, offline = excluded.offline');
const unbind = db.prepare('DELETE FROM bindings WHERE session = ? AND request = ?');
const tok = db.prepare('INSERT INTO tokens (id, name, hash, scopes, created, expires, revoked) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET name = excluded.name, scopes = excluded.scopes, expires = excluded.expires, revoked = excluded.revoked');
// The last segment read (replay reads one after the other); forgotten by every commit.
let cached = null;
const tx = db.transaction((nums, bytes, lens, rawStart, rlens) => {
  cached = null;
  let o = 0; let si = 0; let ro = rawStart; let ri = 0;
  const take = () => { const len = lens[si++]; const b = bytes.subarray(o, o + len); o += len; return b; };
  const text = () => { const len = lens[si++]; const t = bytes.toString('utf8', o, o + len); o += len; return t; };
  let i = 0;
  const n = nums.length;
  while (i < n) {
    const k = nums[i];
    if (k === 0) {
      const first = nums[i + 1]; const count = nums[i + 2];
      const lb = Buffer.allocUnsafe(count * 4); let total = 0;
      for (let j = 0; j < count; j++) { const len = rlens[ri + j]; lb.writeUInt32LE(len, j * 4); total += len; }
      insSeg.run(first, lb, bytes.subarray(ro, ro + total));
      ro += total; ri += count; i += 3;
    }
    else if (k === 2) { up.run(text(), nums[i + 1], nums[i + 2], nums[i + 3]); i += 4; }
    else if (k === 3) { forget.run(text()); i += 1; }
    else if (k === 4) { const off = nums[i + 1]; bind.run(text(), text(), text(), off < 0 ? null : off); i += 2; }
    else if (k === 5) { unbind.run(text(), text()); i += 1; }
    else if (k === 6) { const a = [text(), text(), text(), text(), text(), text(), text()]; tok.run(a[0], a[1], a[2], a[3], a[4], a[5] || null, a[6] || null); i += 1; }
    else if (k === 7) { setDead.run(take(), nums[i + 1]); i += 2; }
    else if (k === 8) { dropSeg.run(nums[i + 1]); dropDead.run(nums[i + 1]); i += 2; }
    else if (k === 9) {
      // Compaction: the dead Events' bytes leave the row (their length becomes 0).
      const id = nums[i + 1]; const dead = take(); i += 2;
      setDead.run(dead, id);
      const row = getOne.get(id);
      if (row === undefined) continue;
      const count = row.lens.length >> 2; const lb = Buffer.allocUnsafe(count * 4); const parts = []; let o = 0;
      for (let j = 0; j < count; j++) {
        const len = row.lens.readUInt32LE(j * 4);
        const gone = (dead[j >> 3] & (1 << (j & 7))) !== 0;
        lb.writeUInt32LE(gone ? 0 : len, j * 4);
        if (!gone) parts.push(row.raw.subarray(o, o + len));
        o += len;
      }
      rewrite.run(lb, Buffer.concat(parts), id);
    }
    else throw new Error('bad store op ' + k);
  }
});
// Replay reads (issue 19): a durable relay keeps committed Events' bytes only here.
const getSeg = db.prepare('SELECT s.id AS id, s.lens AS lens, s.raw AS raw, d.dead AS dead FROM seg s LEFT JOIN segdead d ON d.id = s.id WHERE s.id <= ? ORDER BY s.id DESC LIMIT 1');
/** The bytes of row id r, or undefined (no such row, or evicted: its dead bit is set). */
const get = (r) => {
  if (cached === null || r < cached.id || r >= cached.id + cached.count) {
    const row = getSeg.get(r);
    if (row === undefined) return undefined;
    const count = row.lens.length >> 2; const at = new Float64Array(count + 1);
    for (let j = 0; j < count; j++) at[j + 1] = at[j] + row.lens.readUInt32LE(j * 4);
    cached = { id: row.id, count, at, raw: row.raw, dead: row.dead };
    if (r >= row.id + count) return undefined;
  }
  const k = r - cached.id;
  if (cached.dead && (cached.dead[k >> 3] & (1 << (k & 7))) !== 0) return undefined;
  return cached.raw.subarray(cached.at[k], cached.at[k + 1]);
};
parentPort.on('message', (m) => {
  if (m.close) { db.close(); parentPort.postMessage({ closed: true }); return; }
  if (m.read !== undefined) {
    try {
      const ids = new Float64Array(m.rowids);
      const parts = []; const lens = new Uint32Array(ids.length); let total = 0;
      for (let i = 0; i < ids.length; i++) {
        const b = get(ids[i]);
        if (b === undefined) { lens[i] = 0xffffffff; continue; }
        parts.push(b); lens[i] = b.length; total += b.length;
      }
      const out = Buffer.allocUnsafeSlow(total); let o = 0;
      for (const b of parts) { b.copy(out, o); o += b.length; }
      parentPort.postMessage({ read: m.read, bytes: out.buffer, offset: out.byteOffset, length: out.length, lens: lens.buffer }, [out.buffer, lens.buffer]);
    } catch (e) { parentPort.postMessage({ read: m.read, error: String(e && e.message || e) }); }
    return;
  }
  // The bytes go back (transferred) for reuse: SQLite copied what it keeps.
  try { tx(new Float64Array(m.nums), Buffer.from(m.bytes, m.offset, m.length), new Uint32Array(m.lens), m.rawStart, new Uint32Array(m.rlens)); parentPort.postMessage({ batch: m.batch, ok: true, bytes: m.bytes }, [m.bytes]); }
  catch (e) { parentPort.postMessage({ batch: m.batch, ok: false, error: String(e && e.message || e), bytes: m.bytes }, [m.bytes]); }
});
})();
`;

/**
 * A store written before segments (one `held` row per Event, versions 1-3): its rows become
 * segments of consecutive row ids, in one transaction (a crash leaves the old rows as they were).
 */
function migrateRows(db: Db): void {
  const rows = db.prepare('SELECT rowid, CAST(raw AS BLOB) AS raw FROM held ORDER BY rowid').all() as Array<{ rowid: number; raw: Buffer }>;
  if (rows.length === 0) return;
  const ins = db.prepare('INSERT INTO seg (id, lens, raw) VALUES (?, ?, ?)');
  db.transaction(() => {
    for (let i = 0; i < rows.length;) {
      let j = i + 1;
      let bytes = rows[i]!.raw.length;
      while (j < rows.length && j - i < SEG_MAX_EVENTS && bytes + rows[j]!.raw.length <= SEG_MAX_BYTES && rows[j]!.rowid === rows[j - 1]!.rowid + 1)
        bytes += rows[j++]!.raw.length;
      const part = rows.slice(i, j);
      ins.run(
        part[0]!.rowid,
        encodeLens(
          part.map((r) => r.raw.length),
          0,
          part.length,
        ),
        Buffer.concat(part.map((r) => r.raw)),
      );
      i = j;
    }
    db.exec('DELETE FROM held');
  })();
}

interface Waiter {
  resolve: () => void;
  reject: (e: Error) => void;
}

/** Group-committing SQLite mirror of the replay buffer (writes on a worker thread). */
export class SqliteStore implements BufferSink {
  private ops = new OpQueue();
  /** Which stored segments exist and which of their Events live (segments.ts). */
  private readonly segs = new SegmentIndex();
  /**
   * Buffers kept for reuse (issue 19: a fresh one costs a page fault per 4 KiB written): queues
   * whose batch committed (their byte buffer and Event index go to the next queue), and the
   * hand-off buffers the writer gives back.
   */
  private readonly spareQueues: OpQueue[] = [];
  private readonly handoffBufs: ArrayBuffer[] = [];
  private waiters: Waiter[] = [];
  private inflight: { batch: number; ops: OpQueue; waiters: Waiter[] } | null = null;
  private batchNo = 0;
  private scheduled = false;
  private closed = false;
  private worker: Worker | null = null;
  private onIdle: Array<() => void> = [];
  private dead: Error | null = null;
  /** close() has finished: nothing is committed or read any more. */
  private ended = false;
  /** Counters for /healthz and the bench. */
  readonly stats = { commits: 0, rows: 0, failures: 0 };
  /** The buffer holds no bytes of what it inserts here: they are queued here, then stored (`fetch` reads both). */
  readonly keepsBytes = true;
  private reads = new Map<number, { resolve: (r: Array<Buffer | null>) => void; reject: (e: Error) => void }>();
  private readNo = 0;

  /**
   * What waits for the next commit (tests: a store whose writer thread died queues nothing more,
   * so a relay answering 503 does not grow): operations, their bytes, and whether evictions wait
   * to be written.
   */
  get backlog(): { ops: number; bytes: number; kills: boolean } {
    return { ops: this.ops.count, bytes: this.ops.used + this.ops.rused, kills: this.segs.dirty };
  }

  /** Byte sizes of the queue buffers kept for reuse (tests: at most 2, none above 16 MiB). */
  get keptQueueBuffers(): number[] {
    return this.spareQueues.map((q) => q.rbuf.length);
  }

  /** Byte sizes of the hand-off buffers kept for reuse (tests: at most 2, none above 16 MiB). */
  get keptHandoffBuffers(): number[] {
    return this.handoffBufs.map((b) => b.byteLength);
  }

  private constructor(
    private readonly path: string,
    private readonly sync: 'full' | 'normal',
    private readonly db: Db,
    private readonly commitHook: (() => void | Promise<void>) | undefined,
  ) {}

  /**
   * Open (creating directories and schema as needed; see `prepareStorePath`). Reads happen here;
   * writes go to the worker after `startWriter()`. A database another process holds is refused
   * with `AEP_RELAY_STORE_LOCKED` by the caller; other failures throw.
   */
  static async open(
    path: string,
    sync: 'full' | 'normal' = 'full',
    opts: { ours?: boolean; commitHook?: () => void | Promise<void> } = {},
  ): Promise<SqliteStore> {
    prepareStorePath(path, opts.ours === true);
    const mod = await import('better-sqlite3');
    const Database = (mod as unknown as { default: new (p: string, o?: { timeout?: number }) => Db }).default;
    const db = new Database(path, { timeout: 200 });
    try {
      db.pragma('journal_mode = WAL');
      // FULL: the WAL is fsynced at every commit, so a 202 survives a crash of the process *and*
      // of the machine. NORMAL would survive kill -9 but not a power loss.
      db.pragma(sync === 'full' ? 'synchronous = FULL' : 'synchronous = NORMAL');
      db.exec(SCHEMA);
      migrateRows(db);
    } catch (err) {
      db.close();
      throw err;
    }
    restrictFiles(resolve(path));
    return new SqliteStore(path, sync, db, opts.commitHook);
  }

  /** Every stored live Event in arrival order (and the segment index built on the way). */
  *rows(): Iterable<StoredRow> {
    const it = this.db
      .prepare('SELECT s.id AS id, s.lens AS lens, s.raw AS raw, d.dead AS dead FROM seg s LEFT JOIN segdead d ON d.id = s.id ORDER BY s.id')
      .iterate() as IterableIterator<{
      id: number;
      lens: Buffer;
      raw: Buffer;
      dead: Buffer | null;
    }>;
    for (const r of it) {
      this.segs.load(r.id, r.lens.length >> 2, r.dead);
      for (const e of decodeSegment(r.id, r.lens, r.raw, r.dead)) yield { rowid: e.rowid, raw: e.bytes.toString('utf8') };
    }
  }

  /** The highest row id stored, evicted ones included (read by `rows()`): new ones go above it. */
  get maxRowid(): number {
    return this.segs.maxRowid;
  }

  /** Every persisted eviction high-water mark / tombstone. */
  evictedMarks(): Array<{ session: string; pos: Pos }> {
    return (this.db.prepare('SELECT session, epoch, seq, sub FROM evicted').all() as Array<{ session: string; epoch: number; seq: number; sub: number }>).map(
      (r) => ({ session: r.session, pos: [r.epoch, r.seq, r.sub] as const }),
    );
  }

  /** Every persisted request binding (contract C3). */
  bindings(): Array<{ session: string; request: string; claim: string; offline: number | null }> {
    return this.db.prepare('SELECT session, request, claim, offline FROM bindings').all() as Array<{
      session: string;
      request: string;
      claim: string;
      offline: number | null;
    }>;
  }

  /** Every stored scoped token. */
  tokens(): StoredToken[] {
    const rows = this.db.prepare('SELECT id, name, hash, scopes, created, expires, revoked FROM tokens ORDER BY created, id').all() as Array<{
      id: string;
      name: string;
      hash: string;
      scopes: string;
      created: string;
      expires: string | null;
      revoked: string | null;
    }>;
    const out: StoredToken[] = [];
    for (const r of rows) {
      let scopes: unknown;
      try {
        scopes = JSON.parse(r.scopes);
      } catch {
        continue;
      }
      if (!Array.isArray(scopes) || !scopes.every((x) => typeof x === 'string')) continue;
      out.push({
        id: r.id,
        name: r.name,
        hash: r.hash,
        scopes: scopes as string[],
        created: r.created,
        ...(r.expires ? { expires: r.expires } : {}),
        ...(r.revoked ? { revoked: r.revoked } : {}),
      });
    }
    return out;
  }

  /** Persist a scoped token (created or revoked). */
  token(t: StoredToken): void {
    if (this.dead) return;
    const q = this.ops;
    const strs = [t.id, t.name, t.hash, JSON.stringify(t.scopes), t.created, t.expires ?? '', t.revoked ?? ''];
    q.nums.push(6);
    for (const x of strs) q.str(x);
    q.count++;
    this.schedule();
  }

  /** Remove rows now (while loading: rows that cannot be loaded). */
  removeNow(rowids: number[]): void {
    for (const id of rowids) this.segs.kill(id);
    const q = new OpQueue();
    this.segs.flush(q, false);
    const setDead = this.db.prepare('INSERT INTO segdead (dead, id) VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET dead = excluded.dead');
    const drop = this.db.prepare('DELETE FROM seg WHERE id = ?');
    const dropDead = this.db.prepare('DELETE FROM segdead WHERE id = ?');
    this.db.transaction(() => {
      let o = 0;
      let si = 0;
      for (let i = 0; i < q.nums.length; i += 2) {
        if (q.nums[i] === 8) {
          drop.run(q.nums[i + 1]);
          dropDead.run(q.nums[i + 1]);
        } else {
          const len = q.lens[si++]!;
          setDead.run(q.buf.subarray(o, o + len), q.nums[i + 1]);
          o += len;
        }
      }
    })();
  }

  /**
   * After loading: hand writing over to the worker thread, which takes the store's write lock
   * for the life of the relay (a second relay on the same file fails to start). Queued
   * operations are kept.
   */
  async startWriter(): Promise<void> {
    this.db.close();
    const module = createRequire(import.meta.url).resolve('better-sqlite3');
    const w = new Worker(WORKER, { eval: true, workerData: { module, path: this.path, sync: this.sync }, execArgv: [] });
    w.on('error', (err) => this.failInflight(err instanceof Error ? err : new Error(String(err))));
    const ready = await new Promise<{ ready: boolean; error?: string }>((resolve) => {
      w.once('message', (m: { ready: boolean; error?: string }) => resolve(m));
      w.once('exit', () => resolve({ ready: false, error: 'store writer exited' }));
    });
    if (!ready.ready) {
      this.closed = true;
      await w.terminate();
      // Only a refused lock suggests another relay: any other cause (a writer thread that died,
      // an unreadable file) is named as it is, so startRelay() does not report it as locked.
      const cause = ready.error ?? '';
      const locked = /database is locked|SQLITE_BUSY/i.test(cause);
      throw new Error(`store ${this.path} cannot be opened for writing${locked ? ' (is another relay using it?)' : ''}: ${cause}`);
    }
    w.on('message', (m: { batch?: number; ok?: boolean; error?: string; closed?: boolean }) => this.onMessage(m));
    w.on('exit', () => {
      // An unexpected end of the writer: nothing can become durable any more; every waiter is
      // answered (503 upstream) instead of hanging.
      if (this.closed) return;
      this.dead = new Error('the store writer thread stopped');
      this.failInflight(this.dead);
      this.ops = new OpQueue();
      this.evictions.clear();
    });
    this.worker = w;
    if (this.queued() || this.waiters.length > 0) this.schedule();
  }

  insert(e: Entry): void {
    if (this.dead) return; // nothing reaches the disk any more; POSTs are answered 503
    // The bytes are copied now, from where they are (the request body): `e` is not kept.
    this.segs.add(e.rowid, this.ops.event(e));
    this.schedule();
  }

  remove(e: Entry): void {
    this.removeRow(e.rowid);
  }

  /** An evicted Event: its segment's dead bit (written with the next commit), or the segment's drop. */
  removeRow(rowid: number): void {
    if (this.dead) return;
    this.segs.kill(rowid);
    this.schedule();
  }

  /** Operations waiting for a commit (the kills become operations when a batch is sent). */
  private queued(): boolean {
    return this.ops.count > 0 || this.segs.dirty || this.evictions.size > 0;
  }

  evicted(session: string, pos: Pos | null): void {
    if (this.dead) return;
    this.evictions.set(session, pos);
    this.schedule();
  }

  /**
   * The eviction marks since the last send, the last one per session (a position, or null: the
   * session's mark is forgotten). Only the last one of a batch can matter (the batch is one
   * transaction, and nothing else reads the table): at a full retention every admission evicts
   * an Event, and one upsert per Event in the writer became one per session and commit (issue 19).
   */
  private readonly evictions = new Map<string, Pos | null>();

  private flushEvictions(): void {
    const q = this.ops;
    for (const [session, pos] of this.evictions) {
      if (pos) q.nums.push(2, pos[0], pos[1], pos[2]);
      else q.nums.push(3);
      q.str(session);
      q.count++;
    }
    this.evictions.clear();
  }

  /** Persist (or update) the binding of a request to a claim digest; `offline` in ms or null. */
  bind(session: string, request: string, claim: string, offline: number | null): void {
    if (this.dead) return;
    const q = this.ops;
    q.nums.push(4, offline ?? -1);
    q.str(session);
    q.str(request);
    q.str(claim);
    q.count++;
    this.schedule();
  }

  /** Forget a binding. */
  unbind(session: string, request: string): void {
    if (this.dead) return;
    const q = this.ops;
    q.nums.push(5);
    q.str(session);
    q.str(request);
    q.count++;
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled || this.closed) return;
    this.scheduled = true;
    setImmediate(this.sendScheduled);
  }

  /** The scheduled send, one function for the store's life (not a closure per schedule). */
  private readonly sendScheduled = (): void => {
    this.scheduled = false;
    this.send();
  };

  /** Send what is queued, unless a commit is in flight (then it goes with the next one). */
  private send(): void {
    if (!this.worker || this.inflight) return;
    if (this.dead) {
      for (const w of this.waiters.splice(0)) w.reject(this.dead);
      return;
    }
    this.flushEvictions();
    this.segs.flush(this.ops);
    if (this.ops.count === 0) {
      const w = this.waiters;
      this.waiters = [];
      for (const x of w) x.resolve();
      return;
    }
    const ops = this.ops;
    const waiters = this.waiters;
    this.ops = this.newQueue();
    this.waiters = [];
    const f = { batch: ++this.batchNo, ops, waiters };
    this.inflight = f;
    if (this.commitHook) {
      // Test seam (options.ts `storeCommitHook`): a held hook holds the commit (and every 202
      // waiting on it); a throw fails it like a disk error.
      const hook = this.commitHook;
      void (async () => {
        await hook();
      })().then(
        () => this.post(f),
        (err: unknown) => {
          if (this.inflight !== f) return;
          this.inflight = null;
          this.failBatch(f, err instanceof Error ? err : new Error(String(err)));
          setTimeout(() => this.send(), 100).unref();
          for (const cb of this.onIdle.splice(0)) cb();
        },
      );
      return;
    }
    this.post(f);
  }

  /** An empty queue, on a reused buffer when there is one. */
  private newQueue(): OpQueue {
    return new OpQueue(undefined, this.spareQueues.pop());
  }

  /** Hand one batch to the writer thread. */
  private post(f: { batch: number; ops: OpQueue }): void {
    if (!this.worker || this.inflight?.batch !== f.batch) return;
    const ops = f.ops;
    ops.close();
    const nums = new Float64Array(ops.nums);
    const lens = new Uint32Array(ops.lens);
    const rlens = ops.eventLengths();
    // The queue keeps its bytes until the commit is answered (reads of rows not committed yet, a
    // retry after a failure): the writer gets a copy (strings, then Event bytes), transferred.
    const total = ops.used + ops.rused;
    let ab: ArrayBuffer | undefined;
    while ((ab = this.handoffBufs.pop()) !== undefined && ab.byteLength < total);
    const bytes = new Uint8Array(ab ?? new ArrayBuffer(Math.max(total, 256 * 1024)));
    bytes.set(ops.buf.subarray(0, ops.used));
    bytes.set(ops.rbuf.subarray(0, ops.rused), ops.used);
    this.worker.postMessage(
      { batch: f.batch, nums: nums.buffer, bytes: bytes.buffer, offset: 0, length: total, lens: lens.buffer, rawStart: ops.used, rlens: rlens.buffer },
      [nums.buffer, bytes.buffer, lens.buffer, rlens.buffer],
    );
  }

  /**
   * The stored bytes of these rows (null for a row that is not there any more: evicted since).
   * Rows queued or in the commit in flight are answered from memory; before the writer starts
   * (load) the rest is read here, then by the writer thread, in order with the commits.
   */
  fetch(rowids: readonly number[]): Promise<Array<Buffer | null>> {
    if (this.dead) return Promise.reject(this.dead);
    if (this.ended) return Promise.reject(new Error('store closed'));
    const out: Array<Buffer | null> = new Array<Buffer | null>(rowids.length).fill(null);
    const ask: number[] = [];
    const where: number[] = [];
    const inflight = this.inflight?.ops;
    for (let i = 0; i < rowids.length; i++) {
      const id = rowids[i]!;
      const b = this.ops.find(id) ?? inflight?.find(id);
      // A copy: the queue's buffer is reused once its batch committed.
      if (b !== undefined) out[i] = Buffer.from(b);
      else {
        ask.push(id);
        where.push(i);
      }
    }
    if (ask.length === 0) return Promise.resolve(out);
    if (!this.worker) {
      if (!this.db.open) return Promise.reject(new Error('store closed'));
      const get = this.db.prepare(
        'SELECT s.id AS id, s.lens AS lens, s.raw AS raw, d.dead AS dead FROM seg s LEFT JOIN segdead d ON d.id = s.id WHERE s.id <= ? ORDER BY s.id DESC LIMIT 1',
      );
      for (let k = 0; k < ask.length; k++) {
        const r = get.all(ask[k])[0] as { id: number; lens: Buffer; raw: Buffer; dead: Buffer | null } | undefined;
        if (r === undefined) continue;
        for (const e of decodeSegment(r.id, r.lens, r.raw, r.dead)) if (e.rowid === ask[k]) out[where[k]!] = Buffer.from(e.bytes);
      }
      return Promise.resolve(out);
    }
    const n = ++this.readNo;
    const ids = new Float64Array(ask);
    return new Promise<Array<Buffer | null>>((resolve, reject) => {
      this.reads.set(n, { resolve, reject });
      this.worker!.postMessage({ read: n, rowids: ids.buffer }, [ids.buffer]);
    }).then((got) => {
      for (let k = 0; k < where.length; k++) out[where[k]!] = got[k] ?? null;
      return out;
    });
  }

  private onRead(m: { read: number; bytes?: ArrayBuffer; offset?: number; length?: number; lens?: ArrayBuffer; error?: string }): void {
    const r = this.reads.get(m.read);
    if (!r) return;
    this.reads.delete(m.read);
    if (m.error !== undefined || !m.bytes || !m.lens) {
      r.reject(new Error(m.error ?? 'store read failed'));
      return;
    }
    const bytes = Buffer.from(m.bytes, m.offset, m.length);
    const lens = new Uint32Array(m.lens);
    const out: Array<Buffer | null> = [];
    let o = 0;
    for (const len of lens) {
      if (len === 0xffffffff) {
        out.push(null);
        continue;
      }
      out.push(bytes.subarray(o, o + len));
      o += len;
    }
    r.resolve(out);
  }

  private onMessage(m: { batch?: number; ok?: boolean; error?: string; closed?: boolean; read?: number; bytes?: ArrayBuffer }): void {
    if (m.closed) return;
    if (m.read !== undefined) {
      this.onRead(m as { read: number });
      return;
    }
    // Kept for the next batch, like the queue buffers: at most 2, none grown past 16 MiB by a burst.
    if (m.bytes !== undefined && this.handoffBufs.length < 2 && m.bytes.byteLength <= 16 << 20) this.handoffBufs.push(m.bytes);
    const f = this.inflight;
    if (!f || f.batch !== m.batch) return;
    this.inflight = null;
    if (m.ok) {
      this.stats.commits++;
      this.stats.rows += f.ops.count;
      if (this.spareQueues.length < 2 && f.ops.rbuf.length <= 16 << 20 && f.ops.rows.length <= 1 << 16) this.spareQueues.push(f.ops);
      for (const w of f.waiters) w.resolve();
    } else {
      this.failBatch(f, new Error(m.error ?? 'store write failed'));
      // Retry later (disk full, I/O error): never a hot loop.
      setTimeout(() => this.send(), 100).unref();
      for (const cb of this.onIdle.splice(0)) cb();
      return;
    }
    if (this.queued() || this.waiters.length > 0) this.send();
    else for (const cb of this.onIdle.splice(0)) cb();
  }

  private failBatch(f: { ops: OpQueue; waiters: Waiter[] }, e: Error): void {
    this.stats.failures++;
    // Keep the operations queued: the next commit retries them, so an Event whose POST was
    // answered 503 and is retried (deduped in memory) still reaches the disk before its 202.
    this.ops = f.ops.concat(this.ops);
    for (const w of f.waiters) w.reject(e);
  }

  private failInflight(e: Error): void {
    for (const r of this.reads.values()) r.reject(e);
    this.reads.clear();
    const f = this.inflight;
    this.inflight = null;
    if (f) this.failBatch(f, e);
    for (const w of this.waiters.splice(0)) w.reject(e);
    for (const cb of this.onIdle.splice(0)) cb();
  }

  /** Resolves once everything queued so far is committed. */
  durable(): Promise<void> {
    if (this.dead) return Promise.reject(this.dead);
    if (!this.queued() && !this.inflight) return Promise.resolve();
    if (this.ended) return Promise.reject(new Error('store closed'));
    return new Promise((resolve, reject) => {
      if (!this.queued() && this.inflight) this.inflight.waiters.push({ resolve, reject });
      else {
        this.waiters.push({ resolve, reject });
        this.schedule();
      }
    });
  }

  /** Commit everything, stop the writer. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (!this.worker) {
      if (this.db.open) this.db.close();
      this.end();
      return;
    }
    const w = this.worker;
    if (this.dead) {
      // The thread is gone (its exit made the store dead): nothing can commit and nobody would
      // answer the close message.
      await w.terminate();
      return;
    }
    const idle = () =>
      new Promise<void>((resolve) => {
        if (!this.inflight && !this.queued()) return resolve();
        this.onIdle.push(resolve);
        setTimeout(resolve, 5000).unref();
        this.send();
      });
    await idle();
    if (this.queued()) await idle(); // a failed last batch gets one more try
    for (const r of this.reads.values()) r.reject(new Error('store closed'));
    this.reads.clear();
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        void w.terminate().then(() => resolve());
      }, 5000);
      w.on('message', (m: { closed?: boolean }) => {
        if (m.closed) {
          clearTimeout(t);
          void w.terminate().then(() => resolve());
        }
      });
      w.postMessage({ close: true });
    });
    this.end();
  }

  /**
   * Closed for good: a read, or a commit of something queued from now on (a request still in
   * flight at shutdown), is refused at once instead of waiting for a thread that is gone.
   */
  private end(): void {
    this.ended = true;
    for (const x of this.waiters.splice(0)) x.reject(new Error('store closed'));
  }
}
