// The durable store at unit level (issue 20, the mutation run's relay store target: store.ts),
// on a real SQLite file with the real writer thread: every operation kind survives a reopen
// with its values, durable() resolves only after the commit, a failed commit rejects its
// waiters and keeps its operations for the retry, a store whose writer cannot start is refused,
// strings of every size and script are stored byte for byte, and start-up path errors name the
// path. The relay-level promises (no 202 before the commit, 503) are in promises.test.ts.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Entry } from '../src/buffer.js';
import { RelayStartError } from '../src/options.js';
import { prepareStorePath, SqliteStore } from '../src/store.js';
import { storeEntry, until } from './support/store.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'aep-mstore-'));
  dirs.push(d);
  return d;
}
const entry = storeEntry;
/** The raw bytes of every row a store holds, read by reopening it. */
async function storedRaws(path: string): Promise<string[]> {
  const r = await SqliteStore.open(path);
  try {
    return [...r.rows()].map((x) => x.raw);
  } finally {
    await r.close();
  }
}
async function reopen(path: string): Promise<SqliteStore> {
  return SqliteStore.open(path);
}

describe('SqliteStore', () => {
  it('every operation kind is committed and read back with its values', async () => {
    const path = join(tmp(), 'a.sqlite');
    const s = await SqliteStore.open(path);
    await s.startWriter();
    const big = 'é✓'.repeat(5000) + 'x'.repeat(9000);
    const rows = Array.from({ length: 300 }, (_, i) => entry(i + 1, JSON.stringify({ n: i, t: i === 7 ? big : `r${i}`, u: i % 3 ? '' : '日本語' })));
    for (const e of rows) s.insert(e);
    s.remove(rows[4]!);
    s.evicted('sess-a', [1, 2, 3]);
    s.evicted('sess-b', [4, 5, 6]);
    s.evicted('sess-b', null);
    s.evicted('sess-c', [0, -1, 1]);
    s.evicted('sess-c', [0, 7, 0]);
    s.evicted('sess-d', null);
    s.evicted('sess-d', [9, 9, 9]);
    s.bind('sess-a', 'req-1', 'c'.repeat(64), null);
    s.bind('sess-a', 'req-2', 'd'.repeat(64), 1234);
    s.bind('sess-a', 'req-3', 'e'.repeat(64), 0);
    s.unbind('sess-a', 'req-3');
    s.token({ id: 'a'.repeat(16), name: 'n1', hash: 'f'.repeat(64), scopes: ['read:full', 'emit:agent=x'], created: '2026-01-01T00:00:00.000Z' });
    s.token({
      id: 'b'.repeat(16),
      name: '',
      hash: '0'.repeat(64),
      scopes: ['admin'],
      created: '2026-01-02T00:00:00.000Z',
      expires: '2027-01-01T00:00:00.000Z',
      revoked: '2026-02-01T00:00:00.000Z',
    });
    s.token({
      id: 'a'.repeat(16),
      name: 'renamed',
      hash: 'f'.repeat(64),
      scopes: ['read'],
      created: '2026-01-01T00:00:00.000Z',
      revoked: '2026-03-01T00:00:00.000Z',
    });
    await s.durable();
    assert.ok(s.stats.commits >= 1);
    // Eviction marks: the last one per session and commit (sess-a, b, c, d), not one per call.
    assert.equal(s.stats.rows, 300 + 1 + 4 + 4 + 3);
    assert.equal(s.stats.failures, 0);
    await s.close();
    const r = await reopen(path);
    const back = [...r.rows()];
    assert.deepEqual(
      back.map((x) => x.rowid),
      rows.filter((_, i) => i !== 4).map((e) => e.rowid),
    );
    assert.deepEqual(
      back.map((x) => x.raw),
      rows.filter((_, i) => i !== 4).map((e) => e.raw),
    );
    assert.deepEqual(
      r.evictedMarks().sort((x, y) => x.session.localeCompare(y.session)),
      [
        { session: 'sess-a', pos: [1, 2, 3] },
        { session: 'sess-c', pos: [0, 7, 0] },
        { session: 'sess-d', pos: [9, 9, 9] },
      ],
    );
    assert.deepEqual(
      r.bindings().sort((x, y) => x.request.localeCompare(y.request)),
      [
        { session: 'sess-a', request: 'req-1', claim: 'c'.repeat(64), offline: null },
        { session: 'sess-a', request: 'req-2', claim: 'd'.repeat(64), offline: 1234 },
      ],
    );
    assert.deepEqual(r.tokens(), [
      { id: 'a'.repeat(16), name: 'renamed', hash: 'f'.repeat(64), scopes: ['read'], created: '2026-01-01T00:00:00.000Z', revoked: '2026-03-01T00:00:00.000Z' },
      {
        id: 'b'.repeat(16),
        name: '',
        hash: '0'.repeat(64),
        scopes: ['admin'],
        created: '2026-01-02T00:00:00.000Z',
        expires: '2027-01-01T00:00:00.000Z',
        revoked: '2026-02-01T00:00:00.000Z',
      },
    ]);
    r.removeNow([1, 2, 999]);
    assert.deepEqual(
      [...r.rows()].slice(0, 2).map((x) => x.rowid),
      [3, 4],
    );
    await r.close();
    await r.close(); // idempotent
  });

  it('runs of inserts of every length around the multi-row statements (1, 7, 8, 9, 127, 128, 129, 300) keep order and bytes', async () => {
    const path = join(tmp(), 'runs.sqlite');
    const s = await SqliteStore.open(path, 'normal');
    await s.startWriter();
    let id = 1;
    const all: Entry[] = [];
    for (const len of [1, 7, 8, 9, 127, 128, 129, 300]) {
      for (let i = 0; i < len; i++) {
        const e = entry(id, `{"k":${id},"s":"${'ü'.repeat(id % 5)}"}`);
        id++;
        all.push(e);
        s.insert(e);
      }
      s.evicted(`run-${len}`, [0, len, 0]); // breaks the run
      await s.durable();
    }
    await s.close();
    const r = await reopen(path);
    const back = [...r.rows()];
    assert.equal(back.length, all.length);
    assert.deepEqual(
      back.map((x) => x.rowid),
      all.map((e) => e.rowid),
    );
    assert.deepEqual(
      back.map((x) => x.raw),
      all.map((e) => e.raw),
    );
    assert.equal(r.evictedMarks().length, 8);
    await r.close();
  });

  it('a commit whose strings are mostly 3-byte UTF-8 (the hand-off buffer must grow past twice its size) keeps every byte', async () => {
    const path = join(tmp(), 'utf8.sqlite');
    const s = await SqliteStore.open(path, 'normal');
    await s.startWriter();
    const huge = JSON.stringify({ t: '✓'.repeat(100_000) });
    const rows = [entry(1, '{"a":1}'), entry(2, huge), entry(3, JSON.stringify({ t: '日本'.repeat(30_000) })), entry(4, '{"z":0}')];
    for (const e of rows) s.insert(e);
    s.evicted('✓'.repeat(50_000), [0, 1, 0]);
    await s.durable();
    await s.close();
    const r = await reopen(path);
    assert.deepEqual(
      [...r.rows()].map((x) => x.raw),
      rows.map((e) => e.raw),
    );
    assert.deepEqual(
      r.evictedMarks().map((m) => m.session.length),
      [50_000],
    );
    await r.close();
  });

  it('durable() waits for the commit; a failed commit rejects its waiters, keeps its operations and the retry commits them', async () => {
    const path = join(tmp(), 'hook.sqlite');
    let mode: 'ok' | 'fail' | 'hold' = 'ok';
    let release: () => void = () => {};
    const s = await SqliteStore.open(path, 'full', {
      commitHook: () => {
        if (mode === 'fail') throw new Error('disk full (test)');
        if (mode === 'hold')
          return new Promise<void>((r) => {
            release = r;
          });
        return undefined;
      },
    });
    await s.startWriter();
    await s.durable(); // nothing queued: resolves
    mode = 'fail';
    s.insert(entry(1, '{"a":1}'));
    await assert.rejects(s.durable(), /disk full \(test\)/);
    assert.equal(s.stats.failures, 1);
    assert.equal(s.stats.commits, 0);
    mode = 'hold';
    s.insert(entry(2, '{"a":2}'));
    let settled = false;
    const waiting = s.durable().then(() => {
      settled = true;
    });
    for (let i = 0; i < 30 && !settled; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(settled, false, 'held: not durable yet');
    mode = 'ok';
    release();
    await waiting;
    assert.equal(s.stats.rows, 2, 'the failed insert was retried with the next commit');
    await s.close();
    const r = await reopen(path);
    assert.deepEqual(
      [...r.rows()].map((x) => x.raw),
      ['{"a":1}', '{"a":2}'],
    );
    await r.close();
  });

  it('a second writer on the same store is refused; the first keeps working', async () => {
    const path = join(tmp(), 'lock.sqlite');
    const a = await SqliteStore.open(path);
    await a.startWriter();
    a.insert(entry(1, '{"x":1}'));
    await a.durable();
    // The writer holds SQLite's exclusive lock: a second store cannot even read the schema.
    await assert.rejects(SqliteStore.open(path), /database is locked/);
    a.insert(entry(2, '{"x":2}'));
    await a.durable();
    await a.close();
    const r = await reopen(path);
    assert.equal([...r.rows()].length, 2);
    await r.close();
  });

  it('tokens: a row whose scopes are not a JSON array of strings is skipped on load', async () => {
    const path = join(tmp(), 'tok.sqlite');
    const s = await SqliteStore.open(path);
    await s.startWriter();
    s.token({ id: '1'.repeat(16), name: 'ok', hash: 'a'.repeat(64), scopes: ['read'], created: '2026-01-01T00:00:00.000Z' });
    s.token({ id: '2'.repeat(16), name: 'odd', hash: 'a'.repeat(64), scopes: [5 as unknown as string], created: '2026-01-01T00:00:00.000Z' });
    await s.durable();
    await s.close();
    const r = await reopen(path);
    assert.deepEqual(
      r.tokens().map((t) => t.id),
      ['1'.repeat(16)],
    );
    await r.close();
  });
});

describe('SqliteStore start-up and load edges', () => {
  it('a writer that cannot take the write lock (another connection holds it) is refused, naming the store and the cause', async () => {
    const path = join(tmp(), 'held.sqlite');
    const s = await SqliteStore.open(path);
    const other = new Database(path);
    other.exec('BEGIN EXCLUSIVE');
    try {
      await assert.rejects(
        s.startWriter(),
        (e: unknown) => (e as Error).message === `store ${path} cannot be opened for writing (is another relay using it?): database is locked`,
      );
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
  });

  it('a token row whose scopes are not JSON, or not all strings, is skipped on load (a store written by hand or by another version)', async () => {
    const path = join(tmp(), 'tokjson.sqlite');
    const s = await SqliteStore.open(path);
    await s.close();
    const db = new Database(path);
    const ins = db.prepare('INSERT INTO tokens (id, name, hash, scopes, created) VALUES (?, ?, ?, ?, ?)');
    ins.run('1'.repeat(16), 'bad', 'a'.repeat(64), 'read, emit', '2026-01-01T00:00:00.000Z');
    ins.run('2'.repeat(16), 'good', 'b'.repeat(64), '["read"]', '2026-01-02T00:00:00.000Z');
    ins.run('3'.repeat(16), 'mixed', 'c'.repeat(64), '["read", 5]', '2026-01-03T00:00:00.000Z');
    db.close();
    const r = await SqliteStore.open(path);
    assert.deepEqual(r.tokens(), [{ id: '2'.repeat(16), name: 'good', hash: 'b'.repeat(64), scopes: ['read'], created: '2026-01-02T00:00:00.000Z' }]);
    await r.close();
  });

  it('operations queued before the writer started are committed by it without anyone waiting; a failed commit is retried on its own', async () => {
    const path = join(tmp(), 'early.sqlite');
    let fail = false;
    const s = await SqliteStore.open(path, 'normal', { commitHook: () => (fail ? Promise.reject(new Error('disk full (test)')) : undefined) });
    s.insert(entry(1, '{"early":1}'));
    s.evicted('sess', [0, 1, 0]);
    await s.startWriter();
    await until('the early operations to commit', () => s.stats.commits === 1);
    assert.equal(s.stats.rows, 2);
    fail = true;
    s.insert(entry(2, '{"later":2}'));
    await until('a failed commit', () => s.stats.failures === 1);
    fail = false; // nobody calls durable(): the store retries the kept operations itself
    await until('the retried commit', () => s.stats.commits === 2);
    assert.equal(s.stats.rows, 3);
    await s.close();
    assert.deepEqual(await storedRaws(path), ['{"early":1}', '{"later":2}']);
  });

  it('durable() called while a commit is in flight waits for the commit of what it queued, not the one in flight', async () => {
    const path = join(tmp(), 'order.sqlite');
    const held: Array<{ release: () => void; fail: (e: Error) => void }> = [];
    let hold = false;
    const s = await SqliteStore.open(path, 'normal', {
      commitHook: () => (hold ? new Promise<void>((release, fail) => held.push({ release, fail })) : undefined),
    });
    await s.startWriter();
    hold = true;
    s.insert(entry(1, '{"n":1}'));
    const first = s.durable();
    await until('the first commit to be held', () => held.length === 1);
    s.insert(entry(2, '{"n":2}'));
    let secondDone = false;
    const second = s.durable().then(() => {
      secondDone = true;
    });
    held[0]!.release();
    await first;
    await until('the second commit to be held', () => held.length === 2);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(secondDone, false, 'not durable while its own commit is held');
    assert.equal(s.stats.rows, 1);
    held[1]!.release();
    await second;
    assert.equal(s.stats.rows, 2);
    await s.close();
  });

  it('a held commit that fails keeps its operations ahead of those queued behind it; their waiter resolves only once all are committed', async () => {
    const path = join(tmp(), 'failheld.sqlite');
    const held: Array<{ release: () => void; fail: (e: Error) => void }> = [];
    let hold = true;
    const s = await SqliteStore.open(path, 'normal', {
      commitHook: () => (hold ? new Promise<void>((release, fail) => held.push({ release, fail })) : undefined),
    });
    await s.startWriter();
    s.insert(entry(1, '{"n":1}'));
    const first = s.durable();
    await until('the commit to be held', () => held.length === 1);
    s.insert(entry(2, '{"n":2}'));
    const second = s.durable();
    hold = false;
    held[0]!.fail(new Error('disk full (test)'));
    await assert.rejects(first, /disk full/);
    await second;
    assert.equal(s.stats.rows, 2, 'both rows committed before the second waiter was answered');
    await s.close();
    assert.deepEqual(await storedRaws(path), ['{"n":1}', '{"n":2}']);
  });

  it('close() commits what is queued without anyone waiting, and gives a failing last batch one more try', async () => {
    const path = join(tmp(), 'closecommit.sqlite');
    const s = await SqliteStore.open(path, 'normal');
    await s.startWriter();
    s.insert(entry(1, '{"queued":1}'));
    s.bind('s', 'r', 'c'.repeat(64), null);
    await s.close(); // nobody called durable()
    const r = await SqliteStore.open(path);
    assert.deepEqual(
      [...r.rows()].map((x) => x.raw),
      ['{"queued":1}'],
    );
    assert.equal(r.bindings().length, 1);
    await r.close();

    const path2 = join(tmp(), 'closeretry.sqlite');
    let failures = 0;
    const t = await SqliteStore.open(path2, 'normal', {
      commitHook: () => (failures-- > 0 ? Promise.reject(new Error('disk full (test)')) : undefined),
    });
    await t.startWriter();
    failures = 1;
    t.insert(entry(1, '{"retried":1}'));
    await t.close(); // the first try fails, the second commits
    assert.deepEqual(await storedRaws(path2), ['{"retried":1}']);
  });

  it('bindings, unbindings and tokens longer than the spare room of the hand-off buffer (4 KiB) are stored whole', async () => {
    const path = join(tmp(), 'longops.sqlite');
    const s = await SqliteStore.open(path, 'normal');
    await s.startWriter();
    const long = (c: string) => c.repeat(5000);
    s.bind(long('s'), long('r'), long('c'), 7);
    s.bind(long('t'), long('q'), long('d'), null);
    await s.durable();
    s.unbind(long('t'), long('q')); // alone in its batch
    await s.durable();
    s.token({ id: long('i'), name: long('n'), hash: long('h'), scopes: [long('x')], created: '2026-01-01T00:00:00.000Z', expires: long('e') });
    await s.durable();
    await s.close();
    const r = await SqliteStore.open(path);
    assert.deepEqual(r.bindings(), [{ session: long('s'), request: long('r'), claim: long('c'), offline: 7 }]);
    assert.deepEqual(r.tokens(), [
      { id: long('i'), name: long('n'), hash: long('h'), scopes: [long('x')], created: '2026-01-01T00:00:00.000Z', expires: long('e') },
    ]);
    await r.close();
  });

  it('open({ ours: true }) tightens an existing default store directory; without it the directory is left alone', async () => {
    const d = tmp();
    const dir = join(d, 'store');
    mkdirSync(dir, { mode: 0o755 });
    chmodSync(dir, 0o755);
    const a = await SqliteStore.open(join(dir, 'a.sqlite'));
    await a.close();
    assert.equal(statSync(dir).mode & 0o777, 0o755);
    const b = await SqliteStore.open(join(dir, 'a.sqlite'), 'full', { ours: true });
    await b.close();
    assert.equal(statSync(dir).mode & 0o777, 0o700);
  });

  it('a queued string far longer than the hand-off buffer first sized for it (3-byte UTF-8) is stored whole', async () => {
    const path = join(tmp(), 'grow.sqlite');
    const s = await SqliteStore.open(path, 'normal');
    await s.startWriter();
    const name = '✓'.repeat(200_000); // 200,000 UTF-16 units, 600,000 bytes: more than twice the first buffer
    s.evicted(name, [0, 1, 0]);
    await s.durable();
    await s.close();
    const r = await SqliteStore.open(path);
    assert.deepEqual(r.evictedMarks(), [{ session: name, pos: [0, 1, 0] }]);
    await r.close();
  });
});

describe('prepareStorePath', () => {
  it('an existing store and its side files written 0644 are made 0600; an existing directory is left alone unless it is the default one', () => {
    const d = tmp();
    const dir = join(d, 'mine');
    mkdirSync(dir, { mode: 0o755 });
    chmodSync(dir, 0o755);
    const file = join(dir, 'relay.sqlite');
    for (const f of [file, `${file}-wal`, `${file}-shm`, `${file}-journal`]) {
      writeFileSync(f, '');
      chmodSync(f, 0o644);
    }
    prepareStorePath(file, false);
    for (const f of [file, `${file}-wal`, `${file}-shm`, `${file}-journal`]) assert.equal(statSync(f).mode & 0o777, 0o600, f);
    assert.equal(statSync(dir).mode & 0o777, 0o755, "not the default store directory: its mode is the operator's");
    prepareStorePath(file, true);
    assert.equal(statSync(dir).mode & 0o777, 0o700, 'the default store directory is tightened even when it exists');
    const fresh = join(d, 'new', 'relay.sqlite');
    prepareStorePath(fresh, true);
    assert.equal(statSync(join(d, 'new')).mode & 0o777, 0o700);
  });

  it('a directory that cannot be created, or a dangling link where one should be, fails naming the path and the cause', () => {
    assert.throws(
      () => prepareStorePath('/proc/aep-no-such-dir/x.sqlite', false),
      (e: unknown) =>
        e instanceof RelayStartError && e.message === 'store /proc/aep-no-such-dir/x.sqlite: cannot create directory /proc/aep-no-such-dir: ENOENT',
    );
    // A dangling symlink: stat says ENOENT, mkdir says EEXIST (not an error there: someone made it);
    // the store file then cannot be created through it.
    const d = tmp();
    symlinkSync(join(d, 'nowhere'), join(d, 'link'));
    const path = join(d, 'link', 'x.sqlite');
    assert.throws(
      () => prepareStorePath(path, false),
      (e: unknown) => e instanceof RelayStartError && e.message === `store ${path}: cannot create the store file: ENOENT`,
    );
  });

  it('creates missing directories 0700 and the file 0600; names the path and the cause when it cannot', () => {
    const d = tmp();
    const file = join(d, 'x', 'y', 'z.sqlite');
    prepareStorePath(file, false);
    assert.equal(statSync(join(d, 'x')).mode & 0o777, 0o700);
    assert.equal(statSync(join(d, 'x', 'y')).mode & 0o777, 0o700);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const blocker = join(d, 'file');
    writeFileSync(blocker, '');
    assert.throws(
      () => prepareStorePath(join(blocker, 'db.sqlite'), false),
      (e: unknown) =>
        e instanceof RelayStartError &&
        e.code === 'AEP_RELAY_STORE_UNAVAILABLE' &&
        e.message === `store ${join(blocker, 'db.sqlite')}: ${blocker} is not a directory: ENOTDIR`,
    );
    assert.throws(
      () => prepareStorePath(join(blocker, 'a', 'db.sqlite'), false),
      (e: unknown) =>
        e instanceof RelayStartError && e.message.startsWith(`store ${join(blocker, 'a', 'db.sqlite')}: cannot inspect ${join(blocker, 'a')}: ENOTDIR`),
    );
    assert.throws(
      () => prepareStorePath(d, false),
      (e: unknown) => e instanceof RelayStartError && e.message === `store ${d}: cannot create the store file: EISDIR`,
    );
  });
});
