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

/**
 * Queued operations, encoded for one cheap hand-off to the writer thread: numbers in `nums`
 * (sent as one Float64Array) and strings and raw Events as UTF-8 bytes back to back in `buf`
 * (their byte lengths in `lens`, consumed in order). Per operation:
 *   insert  0, rowid                + raw
 *   remove  1, rowid
 *   evicted 2, epoch, seq, sub       + session
 *   forget  3                        + session
 *   bind    4, offline (-1 = none)   + session, request, claim   (contract C3: survives a restart)
 *   unbind  5                        + session, request
 *   token   6                        + id, name, hash, scopes (JSON), created, expires, revoked ('' = none)
 * An inserted Event's bytes are copied into `buf` when it is queued (issue 19: from the request
 * body, no string per Event), and `rows`/`at` index them by row id, so the queue also answers
 * replay reads of rows not committed yet. The writer binds each raw Event as UTF-8 bytes
 * (`CAST(? AS TEXT)`, stored as TEXT).
 */
class OpQueue {
  nums: number[] = [];
  buf: Buffer;
  used = 0;
  lens: number[] = [];
  count = 0;
  /** Row ids of the queued inserts, in queue order, and where their bytes start in `buf`. */
  rows: number[] = [];
  at: number[] = [];
  len: number[] = [];
  /** True while `rows` is ascending (the relay's row ids are): lookups by binary search. */
  ascending = true;
  constructor(size = 64 * 1024, buf?: Buffer) {
    this.buf = buf !== undefined && buf.length >= size ? buf : Buffer.allocUnsafeSlow(size);
  }
  /** Room for `n` more bytes. */
  private room(n: number): void {
    if (this.used + n <= this.buf.length) return;
    const bigger = Buffer.allocUnsafeSlow(Math.max(this.buf.length * 2, this.used + n + 4096));
    this.buf.copy(bigger, 0, 0, this.used);
    this.buf = bigger;
  }
  str(x: string): void {
    this.room(x.length * 3);
    const n = this.buf.write(x, this.used, 'utf8');
    this.lens.push(n);
    this.used += n;
  }
  raw(rowid: number, e: Entry): void {
    const need = e.copyRaw ? e.bytes : e.raw.length * 3;
    this.room(need);
    const n = e.copyRaw ? e.copyRaw(this.buf, this.used) : this.buf.write(e.raw, this.used, 'utf8');
    const k = this.rows.length;
    if (k > 0 && this.rows[k - 1]! >= rowid) this.ascending = false;
    this.rows.push(rowid);
    this.at.push(this.used);
    this.len.push(n);
    this.lens.push(n);
    this.used += n;
  }
  /** The queued bytes of row `rowid` (the newest insert of it), or undefined. */
  find(rowid: number): Buffer | undefined {
    const rows = this.rows;
    let k = -1;
    if (this.ascending) {
      let lo = 0;
      let hi = rows.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (rows[mid]! < rowid) lo = mid + 1;
        else hi = mid;
      }
      if (lo < rows.length && rows[lo] === rowid) k = lo;
    } else for (let i = rows.length - 1; i >= 0 && k < 0; i--) if (rows[i] === rowid) k = i;
    if (k < 0) return undefined;
    return this.buf.subarray(this.at[k]!, this.at[k]! + this.len[k]!);
  }
  /** `this` followed by `next` (a failed batch is retried before what was queued since). */
  concat(next: OpQueue): OpQueue {
    const q = new OpQueue(this.used + next.used + 4096);
    this.buf.copy(q.buf, 0, 0, this.used);
    next.buf.copy(q.buf, this.used, 0, next.used);
    q.used = this.used + next.used;
    q.nums = this.nums.concat(next.nums);
    q.lens = this.lens.concat(next.lens);
    q.count = this.count + next.count;
    q.rows = this.rows.concat(next.rows);
    q.at = this.at.concat(next.at.map((x) => x + this.used));
    q.len = this.len.concat(next.len);
    q.ascending = this.ascending && next.ascending && (this.rows.length === 0 || next.rows.length === 0 || this.rows[this.rows.length - 1]! < next.rows[0]!);
    return q;
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

// Rows hold only the raw bytes: session, position and dedupe key are read back from them on
// load (in rowid = arrival order, which also reproduces the positions of seq-less Events).
// `tokens` (version 3): scoped tokens, the secret's sha256 only (contract C7).
// `bindings` (version 2): which claim (sha256 of the hello `claim`, never the claim) raised which
// attention request, and since when its asker is offline (ms, NULL while connected).
const SCHEMA = `CREATE TABLE IF NOT EXISTS held (rowid INTEGER PRIMARY KEY, raw TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS evicted (session TEXT PRIMARY KEY, epoch INTEGER NOT NULL, seq INTEGER NOT NULL, sub INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS bindings (session TEXT NOT NULL, request TEXT NOT NULL, claim TEXT NOT NULL, offline INTEGER, PRIMARY KEY (session, request));
CREATE TABLE IF NOT EXISTS tokens (id TEXT PRIMARY KEY, name TEXT NOT NULL, hash TEXT NOT NULL, scopes TEXT NOT NULL, created TEXT NOT NULL, expires TEXT, revoked TEXT);
PRAGMA user_version = 3;`;

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
  db.exec('BEGIN IMMEDIATE; COMMIT');
} catch (e) {
  parentPort.postMessage({ ready: false, error: String(e && e.message || e) });
  return;
}
parentPort.postMessage({ ready: true });
// Raw Events arrive as UTF-8 bytes; CAST stores them as TEXT (the database encoding is UTF-8).
const ins = db.prepare('INSERT INTO held (rowid, raw) VALUES (?, CAST(? AS TEXT))');
const del = db.prepare('DELETE FROM held WHERE rowid = ?');
const up = db.prepare('INSERT INTO evicted (session, epoch, seq, sub) VALUES (?, ?, ?, ?) ON CONFLICT(session) DO UPDATE SET epoch = excluded.epoch, seq = excluded.seq, sub = excluded.sub');
const forget = db.prepare('DELETE FROM evicted WHERE session = ?');
const bind = db.prepare('INSERT INTO bindings (session, request, claim, offline) VALUES (?, ?, ?, ?) ON CONFLICT(session, request) DO UPDATE SET claim = excluded.claim, offline = excluded.offline');
const unbind = db.prepare('DELETE FROM bindings WHERE session = ? AND request = ?');
const tok = db.prepare('INSERT INTO tokens (id, name, hash, scopes, created, expires, revoked) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET name = excluded.name, scopes = excluded.scopes, expires = excluded.expires, revoked = excluded.revoked');
// Multi-row inserts: one statement per MULTI (then per 8) consecutive rows, fewer VM round trips.
const MULTI = 128;
const insMany = db.prepare('INSERT INTO held (rowid, raw) VALUES ' + new Array(MULTI).fill('(?, CAST(? AS TEXT))').join(', '));
const ins8 = db.prepare('INSERT INTO held (rowid, raw) VALUES ' + new Array(8).fill('(?, CAST(? AS TEXT))').join(', '));
const args = new Array(MULTI * 2);
const args8 = new Array(16);
const tx = db.transaction((nums, bytes, lens) => {
  let o = 0; let si = 0;
  const take = () => { const len = lens[si++]; const b = bytes.subarray(o, o + len); o += len; return b; };
  const text = () => { const len = lens[si++]; const t = bytes.toString('utf8', o, o + len); o += len; return t; };
  let i = 0;
  const n = nums.length;
  while (i < n) {
    const k = nums[i];
    if (k === 0) {
      // Count the run of inserts starting here.
      let run = 0; let j = i;
      while (j < n && nums[j] === 0 && run < MULTI) { run++; j += 2; }
      if (run === MULTI) {
        for (let r = 0; r < MULTI; r++) { args[2 * r] = nums[i + 1]; args[2 * r + 1] = take(); i += 2; }
        insMany.run(args);
        continue;
      }
      if (run >= 8) {
        for (let r = 0; r < 8; r++) { args8[2 * r] = nums[i + 1]; args8[2 * r + 1] = take(); i += 2; }
        ins8.run(args8);
        continue;
      }
      ins.run(nums[i + 1], take()); i += 2;
    } else if (k === 1) { del.run(nums[i + 1]); i += 2; }
    else if (k === 2) { up.run(text(), nums[i + 1], nums[i + 2], nums[i + 3]); i += 4; }
    else if (k === 3) { forget.run(text()); i += 1; }
    else if (k === 4) { const off = nums[i + 1]; bind.run(text(), text(), text(), off < 0 ? null : off); i += 2; }
    else if (k === 5) { unbind.run(text(), text()); i += 1; }
    else if (k === 6) { const a = [text(), text(), text(), text(), text(), text(), text()]; tok.run(a[0], a[1], a[2], a[3], a[4], a[5] || null, a[6] || null); i += 1; }
    else throw new Error('bad store op ' + k);
  }
});
// Replay reads (issue 19): a durable relay keeps committed Events' bytes only here.
const get = db.prepare('SELECT CAST(raw AS BLOB) FROM held WHERE rowid = ?').pluck();
parentPort.on('message', (m) => {
  if (m.close) { db.close(); parentPort.postMessage({ closed: true }); return; }
  if (m.read !== undefined) {
    try {
      const ids = new Float64Array(m.rowids);
      const parts = []; const lens = new Uint32Array(ids.length); let total = 0;
      for (let i = 0; i < ids.length; i++) {
        const b = get.get(ids[i]);
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
  try { tx(new Float64Array(m.nums), Buffer.from(m.bytes, m.offset, m.length), new Uint32Array(m.lens)); parentPort.postMessage({ batch: m.batch, ok: true, bytes: m.bytes }, [m.bytes]); }
  catch (e) { parentPort.postMessage({ batch: m.batch, ok: false, error: String(e && e.message || e), bytes: m.bytes }, [m.bytes]); }
});
})();
`;

interface Waiter {
  resolve: () => void;
  reject: (e: Error) => void;
}

/** Group-committing SQLite mirror of the replay buffer (writes on a worker thread). */
export class SqliteStore implements BufferSink {
  private ops = new OpQueue();
  /**
   * Buffers kept for reuse (issue 19: a fresh one costs a page fault per 4 KiB written): queue
   * buffers whose batch committed, and the hand-off buffers the writer gives back.
   */
  private readonly queueBufs: Buffer[] = [];
  private readonly handoffBufs: ArrayBuffer[] = [];
  private waiters: Waiter[] = [];
  private inflight: { batch: number; ops: OpQueue; waiters: Waiter[] } | null = null;
  private batchNo = 0;
  private scheduled = false;
  private closed = false;
  private worker: Worker | null = null;
  private onIdle: Array<() => void> = [];
  private dead: Error | null = null;
  /** Counters for /healthz and the bench. */
  readonly stats = { commits: 0, rows: 0, failures: 0 };
  /** The buffer holds no bytes of what it inserts here: they are queued here, then stored (`fetch` reads both). */
  readonly keepsBytes = true;
  private reads = new Map<number, { resolve: (r: Array<Buffer | null>) => void; reject: (e: Error) => void }>();
  private readNo = 0;

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
    } catch (err) {
      db.close();
      throw err;
    }
    restrictFiles(resolve(path));
    return new SqliteStore(path, sync, db, opts.commitHook);
  }

  /** Every stored row in arrival order. */
  *rows(): Iterable<StoredRow> {
    for (const r of this.db.prepare('SELECT rowid, raw FROM held ORDER BY rowid').iterate()) yield r as StoredRow;
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

  /** Remove rows now (used while loading, when limits shrank since the last run). */
  removeNow(rowids: number[]): void {
    const del = this.db.prepare('DELETE FROM held WHERE rowid = ?');
    this.db.transaction(() => {
      for (const id of rowids) del.run(id);
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
      throw new Error(`store ${this.path} cannot be opened for writing (is another relay using it?): ${ready.error ?? ''}`);
    }
    w.on('message', (m: { batch?: number; ok?: boolean; error?: string; closed?: boolean }) => this.onMessage(m));
    w.on('exit', () => {
      // An unexpected end of the writer: nothing can become durable any more; every waiter is
      // answered (503 upstream) instead of hanging.
      if (this.closed) return;
      this.dead = new Error('the store writer thread stopped');
      this.failInflight(this.dead);
      this.ops = new OpQueue();
    });
    this.worker = w;
    if (this.ops.count > 0 || this.waiters.length > 0) this.schedule();
  }

  insert(e: Entry): void {
    if (this.dead) return; // nothing reaches the disk any more; POSTs are answered 503
    const q = this.ops;
    // The bytes are copied now, from where they are (the request body): `e` is not kept.
    q.nums.push(0, e.rowid);
    q.raw(e.rowid, e);
    q.count++;
    this.schedule();
  }

  remove(e: Entry): void {
    this.removeRow(e.rowid);
  }

  removeRow(rowid: number): void {
    if (this.dead) return;
    const q = this.ops;
    q.nums.push(1, rowid);
    q.count++;
    this.schedule();
  }

  evicted(session: string, pos: Pos | null): void {
    if (this.dead) return;
    const q = this.ops;
    if (pos) q.nums.push(2, pos[0], pos[1], pos[2]);
    else q.nums.push(3);
    q.str(session);
    q.count++;
    this.schedule();
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
    setImmediate(() => {
      this.scheduled = false;
      this.send();
    });
  }

  /** Send what is queued, unless a commit is in flight (then it goes with the next one). */
  private send(): void {
    if (!this.worker || this.inflight) return;
    if (this.dead) {
      for (const w of this.waiters.splice(0)) w.reject(this.dead);
      return;
    }
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
    return new OpQueue(64 * 1024, this.queueBufs.pop());
  }

  /** Hand one batch to the writer thread. */
  private post(f: { batch: number; ops: OpQueue }): void {
    if (!this.worker || this.inflight?.batch !== f.batch) return;
    const ops = f.ops;
    const nums = new Float64Array(ops.nums);
    const lens = new Uint32Array(ops.lens);
    // The queue keeps its bytes until the commit is answered (reads of rows not committed yet, a
    // retry after a failure): the writer gets a copy, transferred.
    let ab: ArrayBuffer | undefined;
    while ((ab = this.handoffBufs.pop()) !== undefined && ab.byteLength < ops.used);
    const bytes = new Uint8Array(ab ?? new ArrayBuffer(Math.max(ops.used, 256 * 1024)));
    bytes.set(ops.buf.subarray(0, ops.used));
    this.worker.postMessage({ batch: f.batch, nums: nums.buffer, bytes: bytes.buffer, offset: 0, length: ops.used, lens: lens.buffer }, [
      nums.buffer,
      bytes.buffer,
      lens.buffer,
    ]);
  }

  /**
   * The stored bytes of these rows (null for a row that is not there any more: evicted since).
   * Rows queued or in the commit in flight are answered from memory; before the writer starts
   * (load) the rest is read here, then by the writer thread, in order with the commits.
   */
  fetch(rowids: readonly number[]): Promise<Array<Buffer | null>> {
    if (this.dead) return Promise.reject(this.dead);
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
      const get = this.db.prepare('SELECT CAST(raw AS BLOB) AS b FROM held WHERE rowid = ?');
      for (let k = 0; k < ask.length; k++) out[where[k]!] = (get.all(ask[k])[0] as { b: Buffer } | undefined)?.b ?? null;
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
    if (m.bytes !== undefined && this.handoffBufs.length < 2) this.handoffBufs.push(m.bytes);
    const f = this.inflight;
    if (!f || f.batch !== m.batch) return;
    this.inflight = null;
    if (m.ok) {
      this.stats.commits++;
      this.stats.rows += f.ops.count;
      if (this.queueBufs.length < 2 && f.ops.buf.length <= 16 << 20) this.queueBufs.push(f.ops.buf);
      for (const w of f.waiters) w.resolve();
    } else {
      this.failBatch(f, new Error(m.error ?? 'store write failed'));
      // Retry later (disk full, I/O error): never a hot loop.
      setTimeout(() => this.send(), 100).unref();
      for (const cb of this.onIdle.splice(0)) cb();
      return;
    }
    if (this.ops.count > 0 || this.waiters.length > 0) this.send();
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
    if (this.ops.count === 0 && !this.inflight) return Promise.resolve();
    return new Promise((resolve, reject) => {
      if (this.ops.count === 0 && this.inflight) this.inflight.waiters.push({ resolve, reject });
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
        if (!this.inflight && this.ops.count === 0) return resolve();
        this.onIdle.push(resolve);
        setTimeout(resolve, 5000).unref();
        this.send();
      });
    await idle();
    if (this.ops.count > 0) await idle(); // a failed last batch gets one more try
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
  }
}
