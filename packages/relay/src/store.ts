// Durable store: SQLite (better-sqlite3) in WAL mode with `synchronous=FULL`, written in
// batched transactions. Every Event answered 202 is in a committed (fsynced) transaction
// before the answer is written (issue 4 §5; docs/decisions.md "Relay: durability").
// The in-memory ReplayBuffer is the index; the store mirrors its inserts, evictions and
// tombstones, and rebuilds it on start.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { BufferSink, Entry, Pos } from './buffer.js';

type Op =
  | { k: 'ins'; e: Entry }
  | { k: 'del'; rowid: number }
  | { k: 'evi'; session: string; pos: Pos | null };

/** A persisted row, as loaded at start. */
export interface StoredRow { rowid: number; session: string | null; epoch: number; seq: number; sub: number; positioned: number; raw: string }

/** Minimal surface of a better-sqlite3 database that we use. */
interface Db {
  pragma(s: string): unknown;
  exec(s: string): unknown;
  prepare(s: string): { run(...a: unknown[]): unknown; all(...a: unknown[]): unknown[]; iterate(...a: unknown[]): IterableIterator<unknown> };
  transaction<F extends (...a: never[]) => unknown>(f: F): F;
  close(): void;
}

/** Group-committing SQLite mirror of the replay buffer. */
export class SqliteStore implements BufferSink {
  private readonly db: Db;
  private ops: Op[] = [];
  private waiters: Array<{ resolve: () => void; reject: (e: Error) => void }> = [];
  private scheduled = false;
  private closed = false;
  private readonly flushTx: (ops: Op[]) => void;
  /** Counters for /healthz and the bench. */
  readonly stats = { commits: 0, rows: 0, failures: 0 };

  private constructor(db: Db) {
    this.db = db;
    const ins = db.prepare('INSERT INTO events (rowid, session, epoch, seq, sub, positioned, raw) VALUES (?, ?, ?, ?, ?, ?, ?)');
    const del = db.prepare('DELETE FROM events WHERE rowid = ?');
    const up = db.prepare('INSERT INTO evicted (session, epoch, seq, sub) VALUES (?, ?, ?, ?) ON CONFLICT(session) DO UPDATE SET epoch = excluded.epoch, seq = excluded.seq, sub = excluded.sub');
    const forget = db.prepare('DELETE FROM evicted WHERE session = ?');
    this.flushTx = db.transaction((ops: Op[]) => {
      for (const op of ops) {
        if (op.k === 'ins') ins.run(op.e.rowid, op.e.session, op.e.pos[0], op.e.pos[1], op.e.pos[2], op.e.positioned ? 1 : 0, op.e.raw);
        else if (op.k === 'del') del.run(op.rowid);
        else if (op.pos) up.run(op.session, op.pos[0], op.pos[1], op.pos[2]);
        else forget.run(op.session);
      }
    });
  }

  /** Open (creating directories and schema as needed). */
  static async open(path: string): Promise<SqliteStore> {
    const mod = await import('better-sqlite3');
    const Database = (mod as unknown as { default: new (p: string) => Db }).default;
    mkdirSync(dirname(path), { recursive: true });
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    // FULL: the WAL is fsynced at every commit, so a 202 survives a crash of the process *and*
    // of the machine. NORMAL would survive kill -9 but not a power loss.
    db.pragma('synchronous = FULL');
    db.exec(`CREATE TABLE IF NOT EXISTS events (
      rowid INTEGER PRIMARY KEY, session TEXT, epoch INTEGER NOT NULL, seq INTEGER NOT NULL,
      sub INTEGER NOT NULL, positioned INTEGER NOT NULL, raw TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS evicted (session TEXT PRIMARY KEY, epoch INTEGER NOT NULL, seq INTEGER NOT NULL, sub INTEGER NOT NULL);`);
    return new SqliteStore(db);
  }

  /** Every stored row in arrival order. */
  *rows(): Iterable<StoredRow> {
    for (const r of this.db.prepare('SELECT rowid, session, epoch, seq, sub, positioned, raw FROM events ORDER BY rowid').iterate()) yield r as StoredRow;
  }

  /** Every persisted eviction high-water mark / tombstone. */
  evictedMarks(): Array<{ session: string; pos: Pos }> {
    return (this.db.prepare('SELECT session, epoch, seq, sub FROM evicted').all() as Array<{ session: string; epoch: number; seq: number; sub: number }>)
      .map((r) => ({ session: r.session, pos: [r.epoch, r.seq, r.sub] as const }));
  }

  /** Remove rows (used while loading, when limits shrank since the last run). */
  removeNow(rowids: number[]): void {
    const del = this.db.prepare('DELETE FROM events WHERE rowid = ?');
    this.db.transaction(() => { for (const id of rowids) del.run(id); })();
  }

  insert(e: Entry): void { this.push({ k: 'ins', e }); }
  remove(e: Entry): void { this.push({ k: 'del', rowid: e.rowid }); }
  evicted(session: string, pos: Pos | null): void { this.push({ k: 'evi', session, pos }); }

  private push(op: Op): void {
    this.ops.push(op);
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled || this.closed) return;
    this.scheduled = true;
    // One transaction per event-loop turn: every request handled in this turn shares the fsync.
    setImmediate(() => this.flush());
  }

  /** Resolves once everything queued so far is committed. */
  durable(): Promise<void> {
    if (this.ops.length === 0 && !this.scheduled) return Promise.resolve();
    return new Promise((resolve, reject) => { this.waiters.push({ resolve, reject }); this.schedule(); });
  }

  /** Commit what is queued now (synchronously). */
  flush(): void {
    this.scheduled = false;
    const ops = this.ops; const waiters = this.waiters;
    this.ops = []; this.waiters = [];
    if (ops.length > 0) {
      try {
        this.flushTx(ops);
        this.stats.commits++;
        this.stats.rows += ops.length;
      } catch (err) {
        this.stats.failures++;
        const e = err instanceof Error ? err : new Error(String(err));
        for (const w of waiters) w.reject(e);
        return;
      }
    }
    for (const w of waiters) w.resolve();
  }

  /** Flush and close. */
  close(): void {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    this.db.close();
  }
}
