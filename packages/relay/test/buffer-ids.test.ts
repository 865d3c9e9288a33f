// The replay buffer's dedupe index and session lists, by what they promise (buffer.ts, issue
// 20's mutation run, survivors of run A): ids of up to 36 Latin-1 characters (ULIDs, UUIDs) are
// held inline and only longer or wider ones go to the side map, which keeps the ids of held
// Events only (an evicted Event's id leaves it); the dedupe table is at most half full and
// doubles only when one more Event would make it more (so it stays under 4x the most Events
// held at once); a session's newest sequenced Event is looked up in that session's held Events
// only, never in a slot its list consumed (since reused by another session). Answers (dedupe,
// replayed ids and bytes) are checked alongside (`idStats`).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ReplayBuffer, type Entry } from '../src/buffer.js';

let row = 1;
function ev(session: string | null, id: string, seq: number, opts: { positioned?: boolean; sub?: number; agent?: string } = {}): Entry {
  const raw = JSON.stringify({ id, seq });
  return {
    rowid: row++,
    source: 'src',
    id,
    session,
    pos: [0, seq, opts.sub ?? 0],
    positioned: opts.positioned ?? session !== null,
    type: 't',
    raw,
    bytes: Buffer.byteLength(raw),
    rawRank: 1,
    ...(opts.agent !== undefined ? { agent: opts.agent } : {}),
  };
}

/** The ids held for `session`, in order, with their bytes. */
function replayed(b: ReplayBuffer, session: string): Array<[string, string]> {
  const part = b.snapshotAll().find((p) => p.session === session);
  if (!part) return [];
  return b.read(part, null, 1000).entries.map((e) => [e.id, e.raw]);
}

const ulid = '01J9ZQ8X7R4M2K6T3V5W8Y1B0C'; // 26
const uuid = '3f2b8c1e-9a4d-4e7b-8c6f-1d2e3f4a5b6c'; // 36
const latin1 = `caf\u00e9-\u00ff-${'x'.repeat(29)}`; // 36, U+00E9 and U+00FF: Latin-1
const long37 = 'y'.repeat(37);
const wide = 'id-\u0100'; // U+0100: not Latin-1
const emoji = 'id-\u{1F600}';

describe('ReplayBuffer: where ids are held', () => {
  it('ids of up to 36 Latin-1 characters are held inline; longer or wider ones in the side map, and only while held', () => {
    const b = new ReplayBuffer({ depth: 6, maxSessions: 10, totalBytes: 1 << 30 }, null);
    const inline = [ulid, uuid, latin1, 'a', ''];
    for (const [k, id] of inline.entries()) assert.equal(b.admit(ev('s', id, k + 1)), 'admitted');
    assert.equal(b.idStats.sideIds, 0, 'ULIDs, UUIDs and other short Latin-1 ids need no side map');
    const side = [long37, wide, emoji];
    for (const [k, id] of side.entries()) assert.equal(b.admit(ev('t', id, k + 1)), 'admitted');
    assert.equal(b.idStats.sideIds, 3);
    // Dedupe and replay answer from both places.
    for (const id of [...inline, ...side]) {
      assert.equal(b.has('src', id), true, `held: ${id}`);
      assert.equal(b.admit(ev('u', id, 1)), 'duplicate', `redelivery of ${id}`);
    }
    assert.equal(b.has('src', 'y'.repeat(36)), false, 'a prefix of a side-map id');
    assert.equal(b.has('src', uuid.slice(0, 35)), false, 'a prefix of an inline id');
    assert.deepEqual(
      replayed(b, 's').map(([id]) => id),
      inline,
    );
    assert.deepEqual(
      replayed(b, 't').map(([id, raw]) => [id, JSON.parse(raw).id]),
      side.map((id) => [id, id]),
    );
    // Session t's Events are evicted by newer ones with short ids in the same slots: their side-map ids go.
    for (let k = 0; k < 6; k++) b.admit(ev('t', `short-${k}`, 10 + k));
    assert.deepEqual(
      replayed(b, 't').map(([id]) => id),
      Array.from({ length: 6 }, (_, k) => `short-${k}`),
    );
    assert.equal(b.idStats.sideIds, 0, 'evicted Events leave no id behind');
    for (const id of side) assert.equal(b.has('src', id), false, `evicted: ${id}`);
    assert.equal(b.admit(ev('t', long37, 20)), 'admitted', 'an evicted long id is admitted again');
    assert.equal(b.idStats.sideIds, 1);
  });

  it('churn of long ids: the side map holds exactly the long ids of held Events', () => {
    const b = new ReplayBuffer({ depth: 4, maxSessions: 3, totalBytes: 1 << 30 }, null);
    for (let i = 0; i < 2000; i++) {
      const session = `s${i % 5}`; // 5 sessions, 3 held: whole sessions go too
      const long = i % 3 !== 0;
      const id = long ? `${'L'.repeat(40)}-${i}` : `S-${i}`;
      assert.equal(b.admit(ev(session, id, i)), 'admitted');
      let longHeld = 0;
      for (const s of ['s0', 's1', 's2', 's3', 's4']) for (const [x] of replayed(b, s)) if (x.length > 36) longHeld++;
      assert.equal(b.idStats.sideIds, longHeld, `after Event ${i}`);
    }
    assert.ok(b.heldEvents <= 12);
  });
});

describe('ReplayBuffer: the dedupe table', () => {
  it('is at most half full, and doubles only when one more Event would make it more than half full', () => {
    const b = new ReplayBuffer({ depth: 100_000, maxSessions: 10, totalBytes: 1 << 30 }, null);
    const start = b.idStats.table;
    let peak = 0;
    let growths = 0;
    let table = start;
    const step = (n: number, session: string): void => {
      for (let i = 0; i < n; i++) {
        b.admit(ev(session, `${session}-${row}`, row));
        peak = Math.max(peak, b.heldEvents);
        const t = b.idStats.table;
        assert.ok(b.heldEvents * 2 <= t, `${b.heldEvents} held in a table of ${t}`);
        if (t !== table) {
          growths++;
          assert.equal(t, table * 2, 'it doubles');
          assert.ok(t < 4 * peak, `grown to ${t} for ${peak} held: more than half full only with this Event`);
          table = t;
        }
      }
    };
    step(5000, 'a');
    assert.ok(growths >= 2, `${growths} growths`);
    // Shrinking held counts do not grow it again until the peak is passed.
    for (const s of ['b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l']) step(2000, s); // sessions evicted (10 held)
    assert.ok(b.idStats.table < 4 * peak);
    assert.equal(b.has('src', 'a-1'), false);
    assert.equal(b.has('src', `l-${row - 1}`), true);
  });
});

describe("ReplayBuffer: a session's newest sequenced Event", () => {
  it('is searched among the held Events of that session only: a consumed slot reused by another session is not it', () => {
    const b = new ReplayBuffer({ depth: 3, maxSessions: 10, totalBytes: 1 << 30 }, null);
    b.admit(ev('a', 'a1', 1, { agent: 'agent-a' }));
    assert.equal(b.lastPositioned('a')?.id, 'a1');
    // Three seq-less Events (commands) of session a: a1 is evicted by the depth.
    for (let k = 1; k <= 3; k++) b.admit(ev('a', `c${k}`, 1, { positioned: false, sub: k }));
    assert.deepEqual(
      replayed(b, 'a').map(([id]) => id),
      ['c1', 'c2', 'c3'],
    );
    // Session b's sequenced Event takes the slot a1 had.
    b.admit(ev('b', 'b1', 7, { agent: 'agent-b' }));
    assert.equal(b.lastPositioned('b')?.id, 'b1');
    assert.equal(b.lastPositioned('a'), undefined, 'session a holds no sequenced Event');
    // A sequenced Event of a again: it is the answer, with its own agent.
    b.admit(ev('a', 'a2', 2, { agent: 'agent-a2' }));
    const last = b.lastPositioned('a');
    assert.deepEqual([last?.id, last?.session, last?.agent], ['a2', 'a', 'agent-a2']);
  });
});
