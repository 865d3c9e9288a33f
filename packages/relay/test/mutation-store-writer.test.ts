// The durable store's writer thread when things go wrong (issue 20, the mutation run's store
// target): SQLite refusing a commit inside the writer (not the test hook), the writer thread
// dying with a commit in flight, reads by row id before and after the writer starts, and the
// commit callback the replay buffer relies on to drop bytes from memory (issue 19). Real SQLite
// files, the real writer thread; the only faults injected are ones the thread can really meet
// (a constraint failure, an uncaught exception in its message handler).
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { SqliteStore } from '../src/store.js';
import { storeEntry, until } from './support/store.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function storePath(name: string): string {
  const d = mkdtempSync(join(tmpdir(), 'aep-mwriter-'));
  dirs.push(d);
  return join(d, name);
}
const entry = storeEntry;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
/** The writer thread (private): the tests inject faults into it the way a real failure would. */
const writerOf = (s: SqliteStore): Worker => (s as unknown as { worker: Worker }).worker;
const settled = <T>(p: Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: Error }> =>
  p.then(
    (value) => ({ ok: true as const, value }),
    (error: Error) => ({ ok: false as const, error }),
  );

describe('SqliteStore writer thread faults', () => {
  it('a commit SQLite refuses in the writer rejects its waiters with the cause, is retried on its own, and close() still ends', async () => {
    const path = storePath('refused.sqlite');
    const s = await SqliteStore.open(path);
    await s.startWriter();
    s.insert(entry(1, '{"a":1}'));
    await s.durable();
    assert.deepEqual(s.stats, { commits: 1, rows: 1, failures: 0 });
    // The same row id again: the writer's INSERT fails its PRIMARY KEY, the transaction rolls back.
    s.insert(entry(1, '{"a":"again"}'));
    s.insert(entry(2, '{"a":2}'));
    const r = await settled(s.durable());
    assert.equal(r.ok, false);
    assert.match(!r.ok ? r.error.message : '', /UNIQUE constraint failed: seg\.id/);
    assert.equal(s.stats.commits, 1, 'no commit counted for the refused batch');
    assert.equal(s.stats.rows, 1);
    // Nobody calls the store again: the kept operations are retried by the store itself.
    await until('a retry of the refused batch', () => s.stats.failures >= 2);
    const later = await settled(s.durable());
    assert.equal(later.ok, false, 'still refused: the kept operations are the same');
    await s.close(); // one last try, then the writer stops; never hangs on a batch that cannot commit
    const back = await SqliteStore.open(path);
    assert.deepEqual(
      [...back.rows()].map((x) => [x.rowid, x.raw]),
      [[1, '{"a":1}']],
      'the rolled-back batch left nothing half-written',
    );
    await back.close();
  });

  it('the writer thread dying with a commit in flight rejects the waiters and pending reads; afterwards every call fails fast or is a no-op', async () => {
    const path = storePath('dies.sqlite');
    let hold = false;
    let release: () => void = () => {};
    const s = await SqliteStore.open(path, 'full', {
      commitHook: () => (hold ? new Promise<void>((r) => (release = r)) : undefined),
    });
    await s.startWriter();
    s.insert(entry(1, '{"kept":1}'));
    await s.durable();
    hold = true;
    s.insert(entry(2, '{"lost":2}'));
    const inflight = settled(s.durable());
    await sleep(50);
    s.insert(entry(3, '{"queued":3}'));
    const queued = settled(s.durable());
    const w = writerOf(s);
    const exited = new Promise((r) => w.once('exit', r));
    // An uncaught exception in the writer's message handler (a message it cannot read): the
    // thread reports an 'error' and exits, as it would on any bug or native failure.
    w.postMessage(null);
    const read = settled(s.fetch([1])); // queued behind the fatal message: never answered by the thread
    await exited;
    const a = await inflight;
    const b = await queued;
    const c = await read;
    assert.equal(a.ok, false, 'the waiter of the batch in flight is answered, not left hanging');
    assert.equal(b.ok, false, 'a waiter queued behind it too');
    assert.equal(c.ok, false, 'and the pending read');
    assert.match(!a.ok ? a.error.message : '', /Cannot read properties of null/, "the waiters get the thread's own error");
    release(); // the held commit goes on after the thread died: it must not be posted anywhere
    await sleep(20);
    await assert.rejects(s.durable(), /the store writer thread stopped/);
    await assert.rejects(s.fetch([1]), /the store writer thread stopped/);
    const before = { ...s.stats };
    s.insert(entry(4, '{"after":4}'));
    s.remove(entry(1, '{"kept":1}'));
    s.evicted('s', [0, 1, 0]);
    s.evicted('s', null);
    s.bind('s', 'r', 'c'.repeat(64), null);
    s.unbind('s', 'r');
    s.token({ id: 'a'.repeat(16), name: 'n', hash: 'f'.repeat(64), scopes: ['read'], created: '2026-01-01T00:00:00.000Z' });
    await assert.rejects(s.durable(), /the store writer thread stopped/, 'nothing queued after the death makes the store look healthy');
    assert.deepEqual(s.stats, before);
    const t0 = Date.now();
    await s.close();
    assert.ok(Date.now() - t0 < 4000, 'close() does not wait for an answer from a thread that is gone');
    const back = await SqliteStore.open(path);
    assert.deepEqual(
      [...back.rows()].map((x) => x.raw),
      ['{"kept":1}'],
    );
    await back.close();
  });

  it('reads by row id: from the database before the writer starts, from the writer after, in order, null for a missing row; refused once closed', async () => {
    const path = storePath('reads.sqlite');
    const s = await SqliteStore.open(path);
    await s.startWriter();
    const rows = [entry(1, '{"n":1}'), entry(2, '{"n":"二"}'), entry(3, '{"n":3}')];
    for (const e of rows) s.insert(e);
    await s.durable();
    const got = await s.fetch([3, 99, 1, 2]);
    assert.deepEqual(
      got.map((b) => (b ? b.toString('utf8') : null)),
      ['{"n":3}', null, '{"n":1}', '{"n":"二"}'],
    );
    assert.deepEqual(await s.fetch([]), []);
    await s.close();
    const r = await SqliteStore.open(path);
    const loaded = await r.fetch([2, 7]);
    assert.deepEqual(
      loaded.map((b) => (b ? b.toString('utf8') : null)),
      ['{"n":"二"}', null],
    );
    await r.close();
    await assert.rejects(r.fetch([1]), /store closed/);
  });

  it('rows not committed yet are read back from memory: queued, in the held commit, after a failed one; then from the disk', async () => {
    const path = storePath('committed.sqlite');
    let mode: 'ok' | 'hold' | 'fail' = 'ok';
    let release: () => void = () => {};
    const s = await SqliteStore.open(path, 'full', {
      commitHook: () => {
        if (mode === 'fail') throw new Error('disk full (test)');
        if (mode === 'hold') return new Promise<void>((r) => (release = r));
        return undefined;
      },
    });
    const text = (bs: Array<Buffer | null>) => bs.map((b) => (b === null ? null : b.toString('utf8')));
    await s.startWriter();
    mode = 'fail';
    s.insert(entry(1, '{"a":"é1"}'));
    assert.deepEqual(text(await s.fetch([1, 9])), ['{"a":"é1"}', null], 'queued: from memory; unknown: null');
    s.evicted('s', [0, 0, 0]);
    await assert.rejects(s.durable(), /disk full/);
    assert.deepEqual(text(await s.fetch([1])), ['{"a":"é1"}'], 'a failed commit keeps its rows (queued again)');
    mode = 'hold';
    s.insert(entry(2, '{"a":2}'));
    s.bind('s', 'r', 'c'.repeat(64), 5);
    const done = s.durable();
    await sleep(150); // the retry of the failed batch goes out with this one, and is held
    assert.deepEqual(text(await s.fetch([2, 1])), ['{"a":2}', '{"a":"é1"}'], 'in the held commit: from memory');
    mode = 'ok';
    release();
    await done;
    s.insert(entry(3, '{"a":3}'));
    await s.durable();
    assert.deepEqual(text(await s.fetch([3, 1, 2])), ['{"a":3}', '{"a":"é1"}', '{"a":2}'], 'committed: from the disk');
    assert.equal(s.stats.rows, 5, 'insert, eviction mark, insert, binding, then insert: each committed once');
    await s.close();
    const r = await SqliteStore.open(path);
    assert.deepEqual(
      [...r.rows()].map((x) => [x.rowid, x.raw]),
      [
        [1, '{"a":"é1"}'],
        [2, '{"a":2}'],
        [3, '{"a":3}'],
      ],
    );
    await r.close();
  });
});
