// Property: the replay buffer agrees with a naive model on what a resume delivers and on when
// the replay-exhausted marker fires (AEP-0003 §5, §7).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ReplayBuffer, cmpPos, type Entry, type Pos } from '../src/buffer.js';

const runs = Number(process.env['AEP_FUZZ_RUNS'] ?? 300);

function entry(rowid: number, session: string, epoch: number, seq: number, id: string): Entry {
  const raw = `{"id":"${id}","session":"${session}","epoch":${epoch},"seq":${seq}}`;
  return { rowid, source: 'src', id, session, pos: [epoch, seq, 0], positioned: true, type: 'progress.status', raw, bytes: raw.length, rawRank: 1 };
}

describe('ReplayBuffer vs a model', () => {
  it('resume = held Events strictly after the position, ascending; marker iff something after it was evicted', () => {
    const arrival = fc.array(
      fc.record({
        session: fc.constantFrom('a', 'b', 'c'),
        epoch: fc.integer({ min: 0, max: 2 }),
        seq: fc.integer({ min: 0, max: 30 }),
        dupOf: fc.option(fc.nat(40), { nil: undefined }),
      }),
      { maxLength: 80 },
    );
    fc.assert(
      fc.property(
        arrival,
        fc.integer({ min: 1, max: 10 }),
        fc.constantFrom('a', 'b', 'c'),
        fc.integer({ min: 0, max: 2 }),
        fc.integer({ min: 0, max: 30 }),
        (arr, depth, rs, re, rseq) => {
          const buf = new ReplayBuffer({ depth, maxSessions: 10, totalBytes: 1 << 30 }, null);
          // Model: per session, every distinct admitted Event, and the evicted ones.
          const admitted: Array<{ id: string; session: string; pos: Pos; evicted: boolean }> = [];
          const ids: string[] = [];
          let row = 1;
          for (const a of arr) {
            const id = a.dupOf !== undefined && a.dupOf < ids.length ? ids[a.dupOf]! : `e${row}`;
            const e = entry(row++, a.session, a.epoch, a.seq, id);
            const r = buf.admit(e);
            const known = admitted.find((x) => x.id === id && !x.evicted);
            assert.equal(r, known ? 'duplicate' : 'admitted');
            if (!known) {
              ids.push(id);
              admitted.push({ id, session: a.session, pos: e.pos, evicted: false });
              // Model eviction: keep the `depth` highest positions (stable by arrival among equals).
              const live = admitted.filter((x) => x.session === a.session && !x.evicted);
              if (live.length > depth) {
                const sorted = [...live].sort((x, y) => cmpPos(x.pos, y.pos) || admitted.indexOf(x) - admitted.indexOf(y));
                for (const x of sorted.slice(0, live.length - depth)) x.evicted = true;
              }
            }
          }
          const req: Pos = [re, rseq, 0];
          const parts = buf.snapshotFrom([{ session: rs, epoch: re, seq: rseq }]);
          const all = admitted.filter((x) => x.session === rs);
          if (all.length === 0) {
            assert.equal(parts.length, 0);
            return;
          }
          const part = parts[0]!;
          const expected = all
            .filter((x) => !x.evicted && cmpPos(x.pos, req) > 0)
            .sort((x, y) => cmpPos(x.pos, y.pos) || admitted.indexOf(x) - admitted.indexOf(y));
          assert.deepEqual(
            buf.read(part, null, Infinity).entries.map((e) => e.id),
            expected.map((x) => x.id),
          );
          const evictedAfter = all.some((x) => x.evicted && cmpPos(x.pos, req) > 0);
          assert.equal(part.exhausted !== undefined, evictedAfter);
          if (part.exhausted) {
            const firstHeld = all.filter((x) => !x.evicted).sort((x, y) => cmpPos(x.pos, y.pos))[0];
            if (firstHeld) assert.deepEqual(part.exhausted, { epoch: firstHeld.pos[0], seq: firstHeld.pos[1] });
          }
        },
      ),
      { numRuns: runs },
    );
  });

  it('dedupe is on (source, id): the same id from two sources is two Events; eviction unindexes exactly one', () => {
    const buf = new ReplayBuffer({ depth: 2, maxSessions: 10, totalBytes: 1 << 30 }, null);
    const a = entry(1, 's', 0, 0, 'X');
    const b = { ...entry(2, 's', 0, 1, 'X'), source: 'other' };
    assert.equal(buf.admit(a), 'admitted');
    assert.equal(buf.admit(b), 'admitted');
    assert.equal(buf.admit({ ...a, rowid: 3 }), 'duplicate');
    assert.equal(buf.heldEvents, 2);
    buf.admit(entry(4, 's', 0, 2, 'Y')); // evicts a (lowest position)
    assert.equal(buf.has('src', 'X'), false);
    assert.equal(buf.has('other', 'X'), true);
    assert.equal(buf.heldEvents, 2);
    assert.equal(buf.admit({ ...a, rowid: 5 }), 'admitted', 'an evicted Event may come back');
  });

  it('the session cap and the byte cap hold after every admission', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 20 }), fc.integer({ min: 0, max: 50 })), { maxLength: 200 }),
        fc.integer({ min: 1, max: 5 }),
        (arr, maxSessions) => {
          const totalBytes = 2000;
          const buf = new ReplayBuffer({ depth: 1000, maxSessions, totalBytes }, null);
          let row = 1;
          for (const [s, seq] of arr) {
            buf.admit(entry(row, `s${s}`, 0, seq, `e${row}`));
            row++;
            assert.ok(buf.sessionCount <= maxSessions);
            assert.ok(buf.heldBytes <= totalBytes);
          }
        },
      ),
      { numRuns: runs },
    );
  });

  it('raw bytes held off the heap stay exact through slab turnover and compaction (issue 19)', () => {
    // Interleaved sessions with different depths leave sparse slabs behind (the quiet sessions pin
    // old bytes); past the compaction threshold they are moved. Sizes span small, multi-byte
    // UTF-8 and the dedicated-slab path (> 256 KiB). Every held Event must read back exactly.
    let compactions = 0;
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1 << 30 }), (seed) => {
        let x = seed;
        const rnd = (n: number) => {
          x = (x * 1103515245 + 12345) & 0x7fffffff;
          return x % n;
        };
        const buf = new ReplayBuffer({ depth: 40, maxSessions: 6, totalBytes: 3 << 20 }, null);
        const expected = new Map<string, string>();
        const sent: Array<{ id: string; raw: string }> = [];
        for (let row = 1; row <= 900; row++) {
          const session = `s${rnd(8)}`;
          const size = rnd(50) === 0 ? 300_000 + rnd(1000) : 200 + rnd(12_000);
          const id = `e${row}`;
          const pad = (rnd(3) === 0 ? 'é€' : 'ab').repeat(size >> 1);
          const raw = `{"id":"${id}","session":"${session}","pad":"${pad}"}`;
          const e: Entry = {
            rowid: row,
            source: 'src',
            id,
            session,
            pos: [0, row, 0],
            positioned: true,
            type: 'progress.status',
            raw,
            bytes: Buffer.byteLength(raw),
            rawRank: 1,
          };
          buf.admit(e);
          sent.push({ id, raw });
          expected.set(id, raw);
        }
        let held = 0;
        for (const part of buf.snapshotAll()) {
          for (const got of buf.read(part, null, Infinity).entries) {
            held++;
            assert.equal(got.raw, expected.get(got.id), `raw bytes of ${got.id}`);
            const copy = Buffer.alloc(got.bytes);
            assert.equal(got.copyRaw?.(copy, 0), got.bytes);
            assert.equal(copy.toString('utf8'), expected.get(got.id));
          }
        }
        assert.equal(held, buf.heldEvents);
        assert.ok(held > 0 && held < sent.length, 'the run evicted something and held something');
        const a = buf.arenaStats;
        compactions += a.compactions;
        assert.ok(a.allocated <= a.live * 1.15 + (10 << 20), `arena ${a.allocated} bytes for ${a.live} live`);
      }),
      { numRuns: Math.min(runs, 20) },
    );
    assert.ok(compactions > 0, 'the runs exercised compaction');
  });
});
