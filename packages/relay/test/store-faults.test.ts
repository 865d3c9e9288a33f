// The durable store when its writer thread fails (issue 20, the mutation run's store target:
// store.ts, second pass): a thread that dies before it is ready refuses the start naming the
// store and the cause; a store whose thread died queues nothing more (a relay answering 503 does
// not grow), not even the operations of a commit the test hook fails afterwards; a read the
// thread cannot do rejects with its error and the store goes on; close() answers pending reads
// and ends even when the thread dies under it; a queue buffer grown past 16 MiB is not kept.
// Real SQLite files, the real writer thread; the faults are ones a thread can really meet (an
// exit before it is ready, an uncaught exception, a segment row it cannot decode).
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { startRelay } from '../src/index.js';
import { RelayStartError } from '../src/options.js';
import { SqliteStore } from '../src/store.js';
import { storeEntry as entry, until } from './support/store.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function storePath(name: string): string {
  const d = mkdtempSync(join(tmpdir(), 'aep-sfault-'));
  dirs.push(d);
  return join(d, name);
}
/** The writer thread (private): the tests make it fail the way a real failure would. */
const writerOf = (s: SqliteStore): Worker => (s as unknown as { worker: Worker }).worker;
/** `p`, or a failure naming `what` if it has not settled after `ms` (a hang, not a slow answer). */
async function settles<T>(p: Promise<T>, what: string, ms = 5000): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    t = setTimeout(() => reject(new Error(`${what} never settled`)), ms);
  });
  try {
    return await Promise.race([p, hang]);
  } finally {
    clearTimeout(t);
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
/** Crash the writer thread (an uncaught exception in its message handler) and wait for its exit. */
async function crash(s: SqliteStore): Promise<void> {
  const w = writerOf(s);
  const exited = new Promise((r) => w.once('exit', r));
  w.postMessage(null);
  await exited;
}
const EMPTY = { ops: 0, bytes: 0, kills: false };

describe('SqliteStore: the writer thread failing', () => {
  it('promise: a writer thread that exits before it is ready refuses the start, naming the store and the cause', async () => {
    const path = storePath('early-exit.sqlite');
    const s = await SqliteStore.open(path);
    // The thread ends before it can say it is ready (as on a native crash or an OOM kill).
    const kill = (w: Worker): void => void w.terminate();
    process.once('worker', kill);
    try {
      await settles(
        assert.rejects(s.startWriter(), (e: unknown) => {
          assert.equal((e as Error).message, `store ${path} cannot be opened for writing: store writer exited`);
          return true;
        }),
        'startWriter() with a thread that exited',
      );
    } finally {
      process.removeListener('worker', kill);
    }
    await s.close();
    const t = await SqliteStore.open(path); // nothing was left locked
    await t.startWriter();
    t.insert(entry(1, '{"n":1}'));
    await t.durable();
    await t.close();
    assert.deepEqual(await stored(path), [[1, '{"n":1}']]);
  });

  it('promise: startRelay() reports a writer that died before it was ready as unavailable, not as locked by itself', async () => {
    // Before: the writer's message suggested "another relay", which startRelay() read as a lock
    // and answered AEP_RELAY_STORE_LOCKED naming this very process as the holder.
    const path = storePath('relay-early-exit.sqlite');
    const kill = (w: Worker): void => void w.terminate();
    process.once('worker', kill);
    try {
      await settles(
        assert.rejects(startRelay({ port: 0, storePath: path }), (e: unknown) => {
          assert.ok(e instanceof RelayStartError);
          assert.equal(e.code, 'AEP_RELAY_STORE_UNAVAILABLE');
          assert.equal(e.message, `store ${path} cannot be opened for writing: store writer exited`);
          assert.equal(e.holder, undefined);
          return true;
        }),
        'startRelay() with a writer thread that exited',
      );
    } finally {
      process.removeListener('worker', kill);
    }
    const r = await startRelay({ port: 0, storePath: path }); // the lock was released
    await r.close();
  });

  it('promise: once the writer thread died, no operation is queued any more (bounded memory while every POST is answered 503)', async () => {
    const path = storePath('dead.sqlite');
    const s = await SqliteStore.open(path);
    await s.startWriter();
    for (let n = 1; n <= 3; n++) s.insert(entry(n, `{"n":${n}}`));
    await s.durable();
    assert.deepEqual(s.backlog, EMPTY);
    await crash(s);
    s.insert(entry(4, '{"n":4}'));
    s.removeRow(2);
    s.remove(entry(3, '{"n":3}'));
    s.evicted('s', [0, 1, 0]);
    s.evicted('t', null);
    s.bind('s', 'r', 'c'.repeat(64), 5);
    s.unbind('s', 'r');
    s.token({ id: 'a'.repeat(16), name: 'n', hash: 'f'.repeat(64), scopes: ['read'], created: '2026-01-01T00:00:00.000Z' });
    await assert.rejects(s.durable(), /the store writer thread stopped/);
    assert.deepEqual(s.backlog, EMPTY, 'nothing queued after the death');
    await s.close();
    assert.deepEqual(await stored(path), [
      [1, '{"n":1}'],
      [2, '{"n":2}'],
      [3, '{"n":3}'],
    ]);
  });

  it('promise: a commit held by the test hook that fails after the writer thread died is not queued again', async () => {
    const path = storePath('dead-held.sqlite');
    const held: Array<(e: Error) => void> = [];
    let hold = false;
    const s = await SqliteStore.open(path, 'full', {
      commitHook: () => (hold ? new Promise<void>((_, fail) => held.push(fail)) : undefined),
    });
    await s.startWriter();
    hold = true;
    s.insert(entry(1, '{"n":1}'));
    const waiting = s.durable().then(
      () => null,
      (e: Error) => e,
    );
    await until('the commit to be held', () => held.length === 1);
    await crash(s);
    assert.match((await waiting)?.message ?? 'resolved', /Cannot read properties of null/, 'its waiter got the thread’s error');
    assert.deepEqual(s.backlog, EMPTY);
    held[0]!(new Error('disk full (test)'));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(s.backlog, EMPTY, 'the failed batch is not put back in a queue nothing will ever send');
    assert.equal(s.stats.failures, 1, 'the failure counted once (the death), not again');
    await s.close();
  });

  it('promise: a read the writer cannot do rejects with its error; other reads and commits go on', async () => {
    const path = storePath('badread.sqlite');
    const s = await SqliteStore.open(path);
    await s.startWriter();
    for (let n = 1; n <= 3; n++) s.insert(entry(n, `{"n":${n}}`));
    await s.durable();
    await s.close();
    // A segment row its reader cannot decode (lengths stored as text: a store edited by hand).
    const db = new Database(path);
    db.prepare("UPDATE seg SET lens = 'not lengths' WHERE id = 1").run();
    db.close();
    const t = await SqliteStore.open(path);
    await t.startWriter();
    t.insert(entry(10, '{"n":10}'));
    await t.durable();
    const err = await settles(
      t.fetch([2]).then(
        () => null,
        (e: Error) => e,
      ),
      'a read of the undecodable segment',
    );
    assert.ok(err instanceof Error, 'the read is refused');
    assert.match(err.message, /is not a function/, "the writer's own error, not a generic one");
    assert.deepEqual(await t.fetch([10]), [Buffer.from('{"n":10}')]);
    t.insert(entry(11, '{"n":11}'));
    await t.durable();
    assert.deepEqual(t.stats, { commits: 2, rows: 2, failures: 0 });
    await t.close();
  });

  it("promise: close() rejects a read still waiting for the writer with 'store closed' (none is left hanging)", async () => {
    const path = storePath('closeread.sqlite');
    const s = await SqliteStore.open(path);
    await s.startWriter();
    s.insert(entry(1, '{"n":1}'));
    await s.durable();
    const read = s.fetch([1]); // committed: the writer answers it, later than close() runs
    const closing = s.close();
    await assert.rejects(read, (e: unknown) => (e as Error).message === 'store closed');
    await closing;
  });

  it('promise: close() ends even when the writer thread dies before answering it, and the committed rows stay', async () => {
    const path = storePath('closedies.sqlite');
    const s = await SqliteStore.open(path);
    await s.startWriter();
    s.insert(entry(1, '{"n":1}'));
    await s.durable();
    // The thread gets a message it cannot handle just before the close: it never answers.
    writerOf(s).postMessage(null);
    await settles(s.close(), 'close() with a writer that died', 20_000);
    assert.deepEqual(await stored(path), [[1, '{"n":1}']]);
  });

  it('promise: a queue or hand-off buffer grown past 16 MiB by a burst is not kept for reuse; small ones are (at most 2 kept)', async () => {
    const path = storePath('bufs.sqlite');
    const s = await SqliteStore.open(path, 'normal');
    await s.startWriter();
    const raw = (n: number) => JSON.stringify({ n, p: 'x'.repeat(1 << 20) });
    for (let n = 1; n <= 20; n++) s.insert(entry(n, raw(n))); // one batch of 20 MiB
    await s.durable();
    assert.ok(
      s.keptQueueBuffers.every((b) => b <= 16 << 20),
      `no kept buffer above 16 MiB: ${s.keptQueueBuffers.join(', ')}`,
    );
    // The hand-off buffer the batch went to the writer in comes back with the commit answer: the
    // same bound (before, a 20 MiB one was kept and passed back and forth for the relay's life).
    assert.ok(
      s.keptHandoffBuffers.every((b) => b <= 16 << 20),
      `no kept hand-off buffer above 16 MiB: ${s.keptHandoffBuffers.join(', ')}`,
    );
    for (let n = 21; n <= 24; n++) {
      s.insert(entry(n, `{"n":${n}}`));
      await s.durable();
    }
    assert.ok(s.keptQueueBuffers.length >= 1 && s.keptQueueBuffers.length <= 2, `small buffers are kept: ${s.keptQueueBuffers.join(', ')}`);
    assert.ok(s.keptQueueBuffers.every((b) => b <= 16 << 20));
    assert.ok(s.keptHandoffBuffers.length >= 1 && s.keptHandoffBuffers.length <= 2, `small hand-off buffers are kept: ${s.keptHandoffBuffers.join(', ')}`);
    await s.close();
    const back = await stored(path);
    assert.equal(back.length, 24);
    assert.ok(back.every(([n, r]) => r === (n <= 20 ? raw(n) : `{"n":${n}}`)));
  });
  it("promise: a read or a commit asked after close() is refused with 'store closed' at once, never left hanging (a request still in flight at shutdown)", async () => {
    for (const started of [true, false]) {
      const path = storePath(`after-close-${started}.sqlite`);
      const s = await SqliteStore.open(path);
      if (started) await s.startWriter();
      s.insert(entry(1, '{"n":1}'));
      if (started) await s.durable();
      await s.close();
      await assert.rejects(settles(s.fetch([1]), `fetch() after close() (writer started: ${started})`), /store closed/);
      s.insert(entry(2, '{"n":2}'));
      await assert.rejects(settles(s.durable(), `durable() after close() (writer started: ${started})`), /store closed/);
    }
  });
});
