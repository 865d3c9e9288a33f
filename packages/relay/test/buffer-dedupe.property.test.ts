// The replay buffer's dedupe index (issue 19's columnar index): an open-addressing table of slots
// keyed by the id's FNV-1a hash, backward-shift deletion, ids inline up to 36 Latin-1 characters
// and in a side map otherwise. Checked against a model (a Set of `(source, id)` keys and FIFO
// sessions) on any sequence of admissions and evictions, with ids chosen to collide: every id of
// the pool hashes to one of the table's last three cells or first three (so probes and deletions
// wrap around the end of the table), the same ids under two sources, ids of 36 and 37 characters
// and ids with characters above U+00FF.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ReplayBuffer } from '../src/buffer.js';

const runs = Number(process.env['AEP_FUZZ_RUNS'] ?? 300);

/** The buffer's hash (FNV-1a over UTF-16 code units), to pick ids that land where we want. */
function hashId(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h | 0;
}
/** The dedupe table's initial size (it doubles past half full; the pool stays far below). */
const TABLE = 2048;

/** `n` ids made of `prefix` and a counter (zero-padded to `len` characters when given) whose home cell is in `cells`. */
function idsAt(prefix: string, cells: number[], n: number, len?: number): string[] {
  const out: string[] = [];
  for (let k = 0; out.length < n; k++) {
    const id = len === undefined ? `${prefix}${k}` : `${prefix}${String(k).padStart(len - prefix.length, '0')}`;
    if (cells.includes(hashId(id) & (TABLE - 1))) out.push(id);
  }
  return out;
}
const END = [TABLE - 3, TABLE - 2, TABLE - 1];
const START = [0, 1, 2];
const POOL = [
  ...idsAt('e', END, 10),
  ...idsAt('s', START, 5),
  // 36 characters (inline) and 37 (side map) at the same cells.
  ...idsAt('L', END, 3, 36),
  ...idsAt('M', END, 3, 37),
  // Above U+00FF: never inline, whatever the length.
  ...idsAt('✓', END.concat(START), 4),
];
const SOURCES = ['urn:a', 'urn:b'];

describe('ReplayBuffer dedupe index against a model (property)', () => {
  it('the pool of ids collides at the end and the start of the table', () => {
    assert.deepEqual(
      POOL.map((id) => id.length).filter((n) => n >= 36),
      [36, 36, 36, 37, 37, 37],
    );
    const cells = new Set(POOL.map((id) => hashId(id) & (TABLE - 1)));
    for (const c of [...END, ...START]) assert.ok(cells.has(c), `an id at cell ${c}`);
  });

  it('has() and duplicate verdicts equal the model after every admission (evictions in any order)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4 }),
        fc.array(fc.record({ id: fc.constantFrom(...POOL), source: fc.constantFrom(...SOURCES), session: fc.integer({ min: 0, max: 3 }) }), {
          minLength: 1,
          maxLength: 80,
        }),
        (depth, ops) => {
          const b = new ReplayBuffer({ depth, maxSessions: 100, totalBytes: 1 << 30 }, null);
          const sessions = new Map<number, string[]>();
          const held = new Set<string>();
          let seq = 0;
          for (const op of ops) {
            const key = `${op.source} ${op.id}`;
            const dup = held.has(key);
            const got = b.admit({
              rowid: ++seq,
              source: op.source,
              id: op.id,
              session: `s${op.session}`,
              pos: [0, seq, 0],
              positioned: true,
              type: 't',
              raw: `{"id":${JSON.stringify(op.id)}}`,
              bytes: 0,
              rawRank: 1,
            });
            assert.equal(got, dup ? 'duplicate' : 'admitted', key);
            if (!dup) {
              const q = sessions.get(op.session) ?? [];
              sessions.set(op.session, q);
              q.push(key);
              held.add(key);
              while (q.length > depth) held.delete(q.shift()!);
            }
            for (const s of SOURCES) for (const id of POOL) assert.equal(b.has(s, id), held.has(`${s} ${id}`), `${s} ${id}`);
          }
          assert.equal(b.heldEvents, held.size);
        },
      ),
      { numRuns: runs },
    );
  });
  it('ids with the same 32-bit hash are told apart (different lengths, same length, the side map), under each source', () => {
    // FNV-1a collisions: a known pair of different lengths, and pairs found by search.
    const pairs = [
      ['costarring', 'liquid'],
      ['id-00335786', 'id-01074240'],
      ['é0000000000000000000000000000000000214246', 'é0000000000000000000000000000000001155780'],
    ] as const;
    for (const [a, b] of pairs) assert.equal(hashId(a), hashId(b), `${a} / ${b} collide`);
    const buf = new ReplayBuffer({ depth: 10, maxSessions: 100, totalBytes: 1 << 30 }, null);
    let seq = 0;
    const admit = (source: string, id: string) =>
      buf.admit({ rowid: ++seq, source, id, session: 's', pos: [0, seq, 0], positioned: true, type: 't', raw: '{}', bytes: 2, rawRank: 1 });
    for (const [a, b] of pairs) {
      assert.equal(admit('urn:a', a), 'admitted');
      assert.equal(buf.has('urn:a', b), false, `${b} is not ${a}`);
      assert.equal(admit('urn:a', b), 'admitted');
      assert.equal(admit('urn:a', a), 'duplicate');
      assert.equal(admit('urn:a', b), 'duplicate');
      assert.equal(buf.has('urn:b', a), false, 'another source');
    }
    assert.equal(buf.has('urn:unknown', 'liquid'), false, 'an unknown source');
  });

  it('past half full the table doubles and every held id is still found, and only those', () => {
    const b = new ReplayBuffer({ depth: 100_000, maxSessions: 100, totalBytes: 1 << 30 }, null);
    const N = 5000; // the table doubles at 1,024 and 2,048 held and again at 4,096
    for (let i = 0; i < N; i++) {
      const got = b.admit({
        rowid: i + 1,
        source: `urn:${i % 3}`,
        id: `n${i}`,
        session: `s${i % 7}`,
        pos: [0, i, 0],
        positioned: true,
        type: 't',
        raw: '{}',
        bytes: 2,
        rawRank: 1,
      });
      assert.equal(got, 'admitted');
    }
    for (let i = 0; i < N; i++) {
      assert.equal(b.has(`urn:${i % 3}`, `n${i}`), true, `n${i}`);
      assert.equal(b.has(`urn:${(i + 1) % 3}`, `n${i}`), false);
    }
    assert.equal(b.has('urn:0', `n${N}`), false);
    assert.equal(b.heldEvents, N);
  });
});
