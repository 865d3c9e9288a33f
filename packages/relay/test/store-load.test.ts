// The durable store at load (issue 20, the mutation run's store target: store.ts, second pass):
// rows removed while loading (removeNow) across several segments at once leave exactly the
// other rows, with exactly one dead bitmap per touched segment; such a segment is still
// compacted once the writer's evictions bring it below a quarter (the store holds at most 4x
// the live bytes); and a store written before segments (one `held` row per Event) is migrated
// into the same segments the writer would form: at most SEG_MAX_EVENTS Events, and up to
// exactly SEG_MAX_BYTES bytes, in one. Real SQLite files, the real writer thread.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SqliteStore } from '../src/store.js';
import { SEG_MAX_BYTES, SEG_MAX_EVENTS } from '../src/segments.js';
import { storeEntry as entry } from './support/store.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function storePath(name: string): string {
  const d = mkdtempSync(join(tmpdir(), 'aep-sload-'));
  dirs.push(d);
  return join(d, name);
}
/** Segment rows as stored: [id, Events, dead bits set, bytes of raw]. */
function segRows(path: string): Array<[number, number, number, number]> {
  const db = new Database(path, { readonly: true });
  try {
    return (
      db
        .prepare('SELECT s.id AS id, s.lens AS lens, length(s.raw) AS raw, d.dead AS dead FROM seg s LEFT JOIN segdead d ON d.id = s.id ORDER BY s.id')
        .all() as Array<{ id: number; lens: Buffer; raw: number; dead: Buffer | null }>
    ).map((r) => {
      let bits = 0;
      for (const b of r.dead ?? []) for (let i = 0; i < 8; i++) bits += (b >> i) & 1;
      return [r.id, r.lens.length / 4, bits, r.raw];
    });
  } finally {
    db.close();
  }
}
/** The ids of the stored dead bitmaps. */
function deadIds(path: string): number[] {
  const db = new Database(path, { readonly: true });
  try {
    return (db.prepare('SELECT id FROM segdead ORDER BY id').all() as Array<{ id: number }>).map((r) => r.id);
  } finally {
    db.close();
  }
}
async function stored(path: string): Promise<Array<[number, string]>> {
  const r = await SqliteStore.open(path);
  try {
    return [...r.rows()].map((x) => [x.rowid, x.raw]);
  } finally {
    await r.close();
  }
}
const raw = (n: number): string => `{"n":${n}}`;
/** A store of version 3 (one `held` row per Event) holding these rows. */
function oldStore(path: string, rows: Array<[number, string]>): void {
  const db = new Database(path);
  db.exec(`CREATE TABLE held (rowid INTEGER PRIMARY KEY, raw TEXT NOT NULL); PRAGMA user_version = 3;`);
  const ins = db.prepare('INSERT INTO held (rowid, raw) VALUES (?, ?)');
  db.transaction(() => {
    for (const [r, x] of rows) ins.run(r, x);
  })();
  db.close();
}
/** The same rows written by the writer thread, in one batch. */
async function written(path: string, rows: Array<[number, string]>): Promise<void> {
  const s = await SqliteStore.open(path, 'normal');
  await s.startWriter();
  for (const [r, x] of rows) s.insert(entry(r, x));
  await s.durable();
  await s.close();
}

describe('SqliteStore: removing rows while loading', () => {
  it('promise: a removal touching several segments at once (dead bits in three, one dropped) leaves exactly the other rows', async () => {
    const path = storePath('multi.sqlite');
    const s = await SqliteStore.open(path);
    await s.startWriter();
    // Gaps in the row ids: segments 1-4, 10-13, 20, 30-33 (all in one commit).
    for (const n of [1, 2, 3, 4, 10, 11, 12, 13, 20, 30, 31, 32, 33]) s.insert(entry(n, raw(n)));
    await s.durable();
    await s.close();
    assert.deepEqual(
      segRows(path).map((r) => r.slice(0, 3)),
      [
        [1, 4, 0],
        [10, 4, 0],
        [20, 1, 0],
        [30, 4, 0],
      ],
    );
    const t = await SqliteStore.open(path);
    assert.equal([...t.rows()].length, 13);
    t.removeNow([2, 11, 13, 20, 31, 99]);
    assert.deepEqual(
      segRows(path).map((r) => r.slice(0, 3)),
      [
        [1, 4, 1],
        [10, 4, 2],
        [30, 4, 1],
      ],
      'dead bits in their own segments, the emptied one dropped: on disk at once',
    );
    assert.deepEqual(deadIds(path), [1, 10, 30], 'one bitmap per touched segment, nothing else written');
    await t.close();
    const want = [1, 3, 4, 10, 12, 30, 32, 33];
    assert.deepEqual(
      await stored(path),
      want.map((n) => [n, raw(n)]),
    );
  });

  it('promise: a segment thinned while loading is still compacted once evictions bring it below a quarter (at most 4x the live bytes stored)', async () => {
    const path = storePath('thin.sqlite');
    const s = await SqliteStore.open(path);
    await s.startWriter();
    const big = (n: number): string => JSON.stringify({ n, p: String(n).repeat(100) });
    for (let n = 1; n <= 8; n++) s.insert(entry(n, big(n)));
    await s.durable();
    await s.close();
    const t = await SqliteStore.open(path);
    assert.equal([...t.rows()].length, 8);
    t.removeNow([1, 2, 3, 4, 5, 6]); // 2 of 8 live
    await t.startWriter();
    t.removeRow(7); // 1 of 8 live: below a quarter
    await t.durable();
    await t.close();
    const live = Buffer.byteLength(big(8));
    const [seg] = segRows(path);
    assert.deepEqual(seg!.slice(0, 3), [1, 8, 7]);
    assert.ok(seg![3] <= 4 * live, `the segment holds ${seg![3]} bytes for ${live} live`);
    assert.deepEqual(await stored(path), [[8, big(8)]]);
  });
});

describe('SqliteStore: migrating a store written before segments', () => {
  it(`promise: at most SEG_MAX_EVENTS (${SEG_MAX_EVENTS}) Events in a migrated segment, as the writer forms them`, async () => {
    const rows: Array<[number, string]> = Array.from({ length: SEG_MAX_EVENTS + 6 }, (_, i) => [i + 1, raw(i + 1)]);
    const old = storePath('v3-many.sqlite');
    oldStore(old, rows);
    assert.deepEqual(await stored(old), rows);
    const want = [
      [1, SEG_MAX_EVENTS, 0],
      [SEG_MAX_EVENTS + 1, 6, 0],
    ];
    assert.deepEqual(
      segRows(old).map((r) => r.slice(0, 3)),
      want,
    );
    const fresh = storePath('v4-many.sqlite');
    await written(fresh, rows);
    assert.deepEqual(segRows(fresh), segRows(old), 'the writer forms the same segments');
  });

  it('promise: a migrated segment holds up to exactly SEG_MAX_BYTES, as a written one does', async () => {
    // Two Events of exactly half of SEG_MAX_BYTES fill one segment; the third starts the next.
    const half = (n: number): string => {
      const head = `{"n":${n},"p":"`;
      return head + 'z'.repeat(SEG_MAX_BYTES / 2 - head.length - 2) + '"}';
    };
    const rows: Array<[number, string]> = [1, 2, 3].map((n) => [n, half(n)]);
    assert.equal(Buffer.byteLength(rows[0]![1]), SEG_MAX_BYTES / 2);
    const old = storePath('v3-exact.sqlite');
    oldStore(old, rows);
    assert.deepEqual(await stored(old), rows);
    assert.deepEqual(segRows(old), [
      [1, 2, 0, SEG_MAX_BYTES],
      [3, 1, 0, SEG_MAX_BYTES / 2],
    ]);
    const fresh = storePath('v4-exact.sqlite');
    await written(fresh, rows);
    assert.deepEqual(segRows(fresh), segRows(old), 'the writer forms the same segments');
  });
});
