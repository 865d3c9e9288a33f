// The store's segments (issue 19, segments.ts): Events are stored as one row per run of
// consecutive row ids; evictions set dead bits and drop a segment once it is empty. What a
// restart loads is exactly what the buffer held (never an evicted Event back, never a held one
// lost), replay reads back exact bytes across segment boundaries, and a store written before
// segments (one `held` row per Event) is migrated on open.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { SqliteStore } from '../src/store.js';
import { ReplayBuffer } from '../src/buffer.js';
import { OpQueue, SEG_MAX_BYTES, SEG_MAX_EVENTS, SegmentIndex, decodeSegment, encodeLens } from '../src/segments.js';
import { storeEntry as entry } from './support/store.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function storePath(name: string): string {
  const d = mkdtempSync(join(tmpdir(), 'aep-seg-'));
  dirs.push(d);
  return join(d, name);
}
const runs = Number(process.env['AEP_FUZZ_RUNS'] ?? 60);

/** Segment rows as stored: [id, count, dead bits set]. */
function segRows(path: string): Array<[number, number, number]> {
  const db = new Database(path, { readonly: true });
  try {
    return (
      db.prepare('SELECT s.id AS id, s.lens AS lens, d.dead AS dead FROM seg s LEFT JOIN segdead d ON d.id = s.id ORDER BY s.id').all() as Array<{
        id: number;
        lens: Buffer;
        dead: Buffer | null;
      }>
    ).map((r) => {
      let bits = 0;
      for (const b of r.dead ?? []) for (let i = 0; i < 8; i++) bits += (b >> i) & 1;
      return [r.id, r.lens.length / 4, bits];
    });
  } finally {
    db.close();
  }
}

describe('segments: the write queue', () => {
  it('consecutive row ids extend the open segment; a gap, the event or byte limit, or close() start a new one', () => {
    const q = new OpQueue();
    assert.equal(q.event(entry(1, '{"a":1}')), false);
    assert.equal(q.event(entry(2, '{"a":2}')), true);
    assert.equal(q.event(entry(4, '{"a":4}')), false, 'a gap');
    q.close();
    assert.equal(q.event(entry(5, '{"a":5}')), false, 'closed');
    assert.deepEqual(q.nums, [0, 1, 2, 0, 4, 1, 0, 5, 1]);
    assert.equal(q.find(2)?.toString(), '{"a":2}');
    assert.equal(q.find(3), undefined);
    const r = new OpQueue();
    for (let i = 1; i <= SEG_MAX_EVENTS; i++) assert.equal(r.event(entry(i, '{}')), i > 1);
    assert.equal(r.event(entry(SEG_MAX_EVENTS + 1, '{}')), false, 'at most SEG_MAX_EVENTS per segment');
    const b = new OpQueue();
    const half = `"${'x'.repeat(SEG_MAX_BYTES / 2 - 2)}"`;
    assert.equal(b.event(entry(1, half)), false);
    assert.equal(b.event(entry(2, half)), true, 'exactly SEG_MAX_BYTES fits');
    assert.equal(b.event(entry(3, '1')), false, 'one byte more starts a segment');
  });

  it("a failed queue followed by the next one keeps every byte, length and the next queue's open segment", () => {
    const a = new OpQueue();
    a.event(entry(1, '{"é":1}'));
    a.str('sess');
    const b = new OpQueue();
    b.event(entry(2, '{"b":2}'));
    const q = a.concat(b);
    assert.equal(q.event(entry(3, '{"c":3}')), true, "b's open segment continues");
    assert.deepEqual(q.nums, [0, 1, 1, 0, 2, 2]);
    assert.deepEqual(
      [1, 2, 3].map((r) => q.find(r)?.toString()),
      ['{"é":1}', '{"b":2}', '{"c":3}'],
    );
    assert.equal(q.buf.toString('utf8', 0, q.used), 'sess');
    assert.equal(q.count, 3);
  });

  it('lengths round-trip little-endian; decodeSegment skips exactly the dead ones', () => {
    const raws = ['{"a":1}', '{"é":"ü"}', '{}', '[1,2]', '"x"', 'null', '1', '2', '3'];
    const bytes = raws.map((r) => Buffer.from(r));
    const lens = encodeLens(
      bytes.map((b) => b.length),
      0,
      bytes.length,
    );
    assert.equal(lens.readUInt32LE(4), Buffer.byteLength('{"é":"ü"}'));
    const dead = Buffer.from([0b0000_0101, 0b0000_0001]); // 0, 2 and 8
    const got = [...decodeSegment(10, lens, Buffer.concat(bytes), dead)].map((e) => [e.rowid, e.bytes.toString()]);
    assert.deepEqual(got, [
      [11, '{"é":"ü"}'],
      [13, '[1,2]'],
      [14, '"x"'],
      [15, 'null'],
      [16, '1'],
      [17, '2'],
    ]);
  });
});

describe('segments: the index', () => {
  it('kills set dead bits (a segment still growing gets a larger bitmap), flush writes bitmaps and drops empty segments', () => {
    const s = new SegmentIndex();
    s.add(1, false);
    s.add(2, true);
    s.kill(1);
    for (let r = 3; r <= 40; r++) s.add(r, true); // 40 Events: a 5-byte bitmap when written
    s.kill(40);
    assert.equal(s.has(1), false);
    assert.equal(s.has(2), true);
    assert.equal(s.has(40), false);
    assert.equal(s.has(41), false);
    s.add(50, false);
    s.kill(50);
    s.kill(50); // twice: nothing more
    const q = new OpQueue();
    s.flush(q);
    assert.deepEqual(q.nums, [7, 1, 8, 50]);
    const bitmap = q.buf.subarray(0, q.lens[0]);
    assert.equal(bitmap.length, 5);
    assert.deepEqual([...bitmap], [1, 0, 0, 0, 0x80]);
    assert.equal(s.dirty, false);
    assert.equal(s.size, 1);
    assert.equal(s.maxRowid, 50);
    for (let r = 2; r < 40; r++) s.kill(r);
    const q2 = new OpQueue();
    s.flush(q2);
    assert.deepEqual(q2.nums, [8, 1]);
    assert.equal(s.size, 0);
  });

  it('a kill beyond 128 Events of a growing segment resizes its bitmap', () => {
    const s = new SegmentIndex();
    s.add(1, false);
    s.kill(1);
    for (let r = 2; r <= 300; r++) s.add(r, true);
    s.kill(300);
    const q = new OpQueue();
    s.flush(q);
    const bitmap = q.buf.subarray(0, q.lens[0]);
    assert.equal(bitmap.length, 38);
    assert.equal(bitmap[0], 1);
    assert.equal(bitmap[37], 1 << ((300 - 1) & 7));
  });
});

describe("segments: a durable relay's store", () => {
  it('rows of a commit form one segment; evictions become dead bits, an empty segment is deleted; a reload gives exactly the live rows', async () => {
    const path = storePath('evict.sqlite');
    const s = await SqliteStore.open(path);
    await s.startWriter();
    for (let r = 1; r <= 10; r++) s.insert(entry(r, `{"r":${r}}`));
    await s.durable();
    for (let r = 11; r <= 15; r++) s.insert(entry(r, `{"r":${r}}`));
    await s.close(); // the writer holds the database exclusively: read it once closed
    assert.deepEqual(segRows(path), [
      [1, 10, 0],
      [11, 5, 0],
    ]);
    const t = await SqliteStore.open(path);
    assert.equal([...t.rows()].length, 15);
    await t.startWriter();
    t.removeRow(3);
    t.removeRow(9);
    for (let r = 11; r <= 15; r++) t.removeRow(r);
    await t.durable();
    assert.deepEqual(
      (await t.fetch([2, 3, 9, 10, 12])).map((b) => b?.toString() ?? null),
      ['{"r":2}', null, null, '{"r":10}', null],
    );
    await t.close();
    assert.deepEqual(segRows(path), [[1, 10, 2]]);
    const r = await SqliteStore.open(path);
    assert.deepEqual(
      [...r.rows()].map((x) => x.rowid),
      [1, 2, 4, 5, 6, 7, 8, 10],
    );
    assert.equal(r.maxRowid, 10);
    await r.close();
  });

  it('a segment down to a quarter of its Events is compacted: the dead bytes leave the row, the live ones read back the same', async () => {
    const path = storePath('compact.sqlite');
    const s = await SqliteStore.open(path);
    await s.startWriter();
    for (let r = 1; r <= 8; r++) s.insert(entry(r, `{"r":${r},"pad":"${'é'.repeat(100)}"}`));
    await s.durable();
    for (const r of [1, 2, 3, 5]) s.removeRow(r);
    await s.durable(); // 4 of 8 live: only dead bits
    for (const r of [6, 8]) s.removeRow(r);
    await s.durable(); // 2 of 8 live (a quarter): compacted
    assert.deepEqual(
      (await s.fetch([4, 5, 7])).map((b) => b?.toString() ?? null),
      [`{"r":4,"pad":"${'é'.repeat(100)}"}`, null, `{"r":7,"pad":"${'é'.repeat(100)}"}`],
    );
    await s.close();
    const db = new Database(path, { readonly: true });
    const row = db.prepare('SELECT lens, raw FROM seg WHERE id = 1').get() as { lens: Buffer; raw: Buffer };
    db.close();
    const live = Buffer.byteLength(`{"r":4,"pad":"${'é'.repeat(100)}"}`);
    assert.equal(row.raw.length, 2 * live, "only the two live Events' bytes are stored");
    assert.deepEqual(
      Array.from({ length: 8 }, (_, j) => row.lens.readUInt32LE(j * 4)),
      [0, 0, 0, live, 0, 0, live, 0],
    );
    const r = await SqliteStore.open(path);
    assert.deepEqual(
      [...r.rows()].map((x) => [x.rowid, x.raw]),
      [
        [4, `{"r":4,"pad":"${'é'.repeat(100)}"}`],
        [7, `{"r":7,"pad":"${'é'.repeat(100)}"}`],
      ],
    );
    await r.startWriter();
    r.removeRow(4);
    await r.durable(); // 1 live of the 2 at the last rewrite: not a quarter yet
    assert.deepEqual(
      (await r.fetch([7])).map((b) => b?.toString() ?? null),
      [`{"r":7,"pad":"${'é'.repeat(100)}"}`],
    );
    r.removeRow(7);
    await r.close();
    assert.deepEqual(segRows(path), []);
  });

  it('the buffer and the store agree after any sequence of admissions and evictions, across a restart (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            session: fc.integer({ min: 0, max: 4 }),
            seq: fc.integer({ min: 0, max: 30 }),
            size: fc.integer({ min: 2, max: 400 }),
            commit: fc.boolean(),
          }),
          {
            minLength: 1,
            maxLength: 120,
          },
        ),
        fc.record({ depth: fc.integer({ min: 1, max: 8 }), maxSessions: fc.integer({ min: 1, max: 4 }), totalBytes: fc.integer({ min: 300, max: 4000 }) }),
        async (evs, limits) => {
          const path = storePath('prop.sqlite');
          const s = await SqliteStore.open(path, 'normal');
          await s.startWriter();
          const b = new ReplayBuffer(limits, s);
          let row = 1;
          for (const [k, e] of evs.entries()) {
            const raw = `{"k":${k},"p":"${'x'.repeat(e.size)}"}`;
            b.admit({
              rowid: row++,
              source: 'src',
              id: `i${k}`,
              session: `s${e.session}`,
              pos: [0, e.seq, 0],
              positioned: true,
              type: 'progress.status',
              raw,
              bytes: raw.length,
              rawRank: 1,
            });
            if (e.commit) await s.durable();
          }
          await s.durable();
          const held = new Map<number, string>();
          for (const part of b.snapshotAll()) for (const e of b.read(part, null, Infinity).entries) held.set(e.rowid, String(e.rowid));
          const rowids = [...held.keys()].sort((x, y) => x - y);
          const fetched = await s.fetch(rowids);
          assert.ok(
            fetched.every((x) => x !== null),
            'every held row is readable',
          );
          await s.close();
          const r = await SqliteStore.open(path);
          assert.deepEqual(
            [...r.rows()].map((x) => x.rowid),
            rowids,
          );
          await r.close();
        },
      ),
      { numRuns: Math.min(runs, 40) },
    );
  });

  it('a store written before segments (one held row per Event) is migrated on open: same rows, same bytes, same order', async () => {
    const path = storePath('v3.sqlite');
    const db = new Database(path);
    db.exec(`CREATE TABLE held (rowid INTEGER PRIMARY KEY, raw TEXT NOT NULL);
CREATE TABLE evicted (session TEXT PRIMARY KEY, epoch INTEGER NOT NULL, seq INTEGER NOT NULL, sub INTEGER NOT NULL);
CREATE TABLE bindings (session TEXT NOT NULL, request TEXT NOT NULL, claim TEXT NOT NULL, offline INTEGER, PRIMARY KEY (session, request));
CREATE TABLE tokens (id TEXT PRIMARY KEY, name TEXT NOT NULL, hash TEXT NOT NULL, scopes TEXT NOT NULL, created TEXT NOT NULL, expires TEXT, revoked TEXT);
PRAGMA user_version = 3;`);
    const ins = db.prepare('INSERT INTO held (rowid, raw) VALUES (?, ?)');
    const want: Array<[number, string]> = [];
    for (const r of [2, 3, 4, 7, 8, 20]) {
      const raw = `{"r":${r},"t":"é ✓ ${'y'.repeat(r)}"}`;
      ins.run(r, raw);
      want.push([r, raw]);
    }
    db.close();
    const s = await SqliteStore.open(path);
    assert.deepEqual(
      [...s.rows()].map((x) => [x.rowid, x.raw]),
      want,
    );
    assert.equal(s.maxRowid, 20);
    await s.close();
    assert.deepEqual(segRows(path), [
      [2, 3, 0],
      [7, 2, 0],
      [20, 1, 0],
    ]);
    const check = new Database(path, { readonly: true });
    assert.equal((check.prepare('SELECT count(*) AS n FROM held').get() as { n: number }).n, 0, 'the old rows are gone');
    check.close();
  });

  it('a migrated segment stops at SEG_MAX_BYTES, as a written one does', async () => {
    const path = storePath('v3-big.sqlite');
    const db = new Database(path);
    db.exec(`CREATE TABLE held (rowid INTEGER PRIMARY KEY, raw TEXT NOT NULL); PRAGMA user_version = 3;`);
    const ins = db.prepare('INSERT INTO held (rowid, raw) VALUES (?, ?)');
    const big = (r: number) => `{"r":${r},"p":"${'z'.repeat(400 * 1024)}"}`;
    for (const r of [30, 31, 32]) ins.run(r, big(r));
    db.close();
    const s = await SqliteStore.open(path);
    assert.deepEqual(
      [...s.rows()].map((x) => x.raw === big(x.rowid)),
      [true, true, true],
    );
    await s.close();
    assert.deepEqual(segRows(path), [
      [30, 2, 0],
      [32, 1, 0],
    ]);
  });

  it('rows removed while loading (removeNow) are dead on disk at once, before the writer starts', async () => {
    const path = storePath('removenow.sqlite');
    const s = await SqliteStore.open(path);
    await s.startWriter();
    for (let r = 1; r <= 4; r++) s.insert(entry(r, `{"r":${r}}`));
    await s.close();
    const t = await SqliteStore.open(path);
    assert.equal([...t.rows()].length, 4);
    t.removeNow([2, 4]);
    assert.deepEqual(segRows(path), [[1, 4, 2]]);
    t.removeNow([1, 3]);
    assert.deepEqual(segRows(path), []);
    await t.close();
  });
});
