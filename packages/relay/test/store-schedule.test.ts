// When the durable store commits (issue 20, the mutation run's store target: store.ts, second
// pass): durable() with nothing queued answers at once (before the writer starts, after close)
// and waits for a commit in flight even when nothing new was queued; operations queued while a
// commit is in flight are committed right after it without anyone waiting; a failed commit
// retried through durable() is committed once (the store's own retry then has nothing to post);
// a batch bigger than the reused hand-off buffer is stored whole. Real SQLite files, the real
// writer thread; the commit hook only holds or fails a commit.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../src/store.js';
import { storeEntry as entry, until } from './support/store.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function storePath(name: string): string {
  const d = mkdtempSync(join(tmpdir(), 'aep-sched-'));
  dirs.push(d);
  return join(d, name);
}
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
/** `p`, or a failure naming `what` if it has not settled after 5 s (a hang, not a slow answer). */
async function settles<T>(p: Promise<T>, what: string): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    t = setTimeout(() => reject(new Error(`${what} never settled`)), 5000);
  });
  try {
    return await Promise.race([p, hang]);
  } finally {
    clearTimeout(t);
  }
}
/** Every stored row as [rowid, raw], read by reopening the store. */
async function stored(path: string): Promise<Array<[number, string]>> {
  const r = await SqliteStore.open(path);
  try {
    return [...r.rows()].map((x) => [x.rowid, x.raw]);
  } finally {
    await r.close();
  }
}
/** A commit hook that holds each commit while `hold` is set; `held` lists their releases. */
function holder(): { hook: () => Promise<void> | undefined; held: Array<() => void>; set: (h: boolean) => void } {
  let hold = false;
  const held: Array<() => void> = [];
  return {
    hook: () => (hold ? new Promise<void>((r) => held.push(r)) : undefined),
    held,
    set: (h) => {
      hold = h;
    },
  };
}

describe('SqliteStore: when durable() answers', () => {
  it('promise: durable() with nothing queued resolves at once, before the writer starts and after close()', async () => {
    const path = storePath('idle.sqlite');
    const s = await SqliteStore.open(path);
    await settles(s.durable(), 'durable() on a loaded store before its writer started');
    await s.startWriter();
    s.insert(entry(1, '{"n":1}'));
    await s.durable();
    await s.close();
    // Everything queued so far was committed by close(): nothing to wait for, nothing failed.
    await settles(s.durable(), 'durable() after close()');
    assert.deepEqual(await stored(path), [[1, '{"n":1}']]);
  });

  it('promise: durable() called while a commit is in flight, with nothing queued since, waits for that commit', async () => {
    const path = storePath('inflight.sqlite');
    const h = holder();
    const s = await SqliteStore.open(path, 'full', { commitHook: h.hook });
    await s.startWriter();
    h.set(true);
    s.insert(entry(1, '{"n":1}'));
    const first = s.durable();
    await until('the commit to be held', () => h.held.length === 1);
    let done = false;
    const second = s.durable().then(() => {
      done = true;
    });
    await sleep(50);
    assert.equal(done, false, 'the row it covers is not committed yet: no answer while the commit is held');
    assert.equal(s.stats.commits, 0);
    h.set(false);
    h.held[0]!();
    await first;
    await second;
    assert.equal(s.stats.commits, 1);
    await s.close();
    assert.deepEqual(await stored(path), [[1, '{"n":1}']]);
  });

  it('promise: operations queued while a commit is in flight are committed right after it, without anyone calling durable()', async () => {
    const path = storePath('behind.sqlite');
    const h = holder();
    const s = await SqliteStore.open(path, 'full', { commitHook: h.hook });
    await s.startWriter();
    h.set(true);
    s.insert(entry(1, '{"n":1}'));
    await until('the first commit to be held', () => h.held.length === 1);
    s.insert(entry(2, '{"n":2}'));
    s.bind('s', 'r', 'c'.repeat(64), null);
    h.set(false);
    h.held[0]!();
    await until('the operations queued behind the held commit to be committed on their own', () => s.stats.commits === 2, 10_000);
    assert.equal(s.stats.rows, 3);
    await s.close();
    assert.deepEqual(await stored(path), [
      [1, '{"n":1}'],
      [2, '{"n":2}'],
    ]);
  });

  it("promise: a failed commit retried through durable() is committed once; the store's own retry then posts no empty commit", async () => {
    const path = storePath('retry.sqlite');
    let fail = true;
    const s = await SqliteStore.open(path, 'full', {
      commitHook: () => {
        if (fail) throw new Error('disk full (test)');
      },
    });
    await s.startWriter();
    s.insert(entry(1, '{"n":1}'));
    await assert.rejects(s.durable(), /disk full \(test\)/);
    fail = false;
    await s.durable(); // the kept operations go now, before the store's own retry (100 ms)
    assert.deepEqual(s.stats, { commits: 1, rows: 1, failures: 1 });
    await sleep(300); // the store's own retry comes due meanwhile and finds nothing queued
    await s.durable();
    assert.deepEqual(s.stats, { commits: 1, rows: 1, failures: 1 }, '/healthz commits counts commits of operations, not empty ones');
    await s.close();
    assert.deepEqual(await stored(path), [[1, '{"n":1}']]);
  });

  it('promise: a batch bigger than the hand-off buffer kept from an earlier commit (256 KiB) is stored whole, byte for byte', async () => {
    const path = storePath('bigger.sqlite');
    const s = await SqliteStore.open(path);
    await s.startWriter();
    s.insert(entry(1, '{"n":1}'));
    await s.durable(); // its hand-off buffer (256 KiB) comes back and is kept for the next batch
    const big = (n: number) => JSON.stringify({ n, p: 'é✓'.repeat(20_000) + String(n).repeat(40_000) });
    for (let n = 2; n <= 4; n++) s.insert(entry(n, big(n))); // ~500 KiB in one batch
    await s.durable();
    s.insert(entry(5, '{"n":5}'));
    await s.durable();
    await s.close();
    assert.deepEqual(await stored(path), [
      [1, '{"n":1}'],
      [2, big(2)],
      [3, big(3)],
      [4, big(4)],
      [5, '{"n":5}'],
    ]);
  });

  it('promise: rows read back after their commit form a plain array, in the order asked (null for a row not stored)', async () => {
    const path = storePath('reads.sqlite');
    const s = await SqliteStore.open(path);
    await s.startWriter();
    s.insert(entry(1, '{"n":1}'));
    s.insert(entry(2, '{"n":2}'));
    await s.durable();
    s.insert(entry(3, '{"n":3}')); // queued: answered from memory, the others by the writer
    assert.deepEqual(await s.fetch([2, 9, 3, 1]), [Buffer.from('{"n":2}'), null, Buffer.from('{"n":3}'), Buffer.from('{"n":1}')]);
    await s.close();
  });
});
