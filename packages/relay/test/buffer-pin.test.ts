// Pinned Events (core.ts `load`): a row made honest at load keeps its honest bytes in memory for
// good, because the stored bytes predate capture enforcement and are never served. And the
// agent-scoped bucket's eviction mark: a reader of agent-scoped Events is told about a gap.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Held, ReplayBuffer, type BufferSink, type Entry } from '../src/buffer.js';

/** A sink that keeps the bytes (as the durable store does): the buffer holds none in memory. */
class Keeper implements BufferSink {
  readonly keepsBytes = true;
  insert(): void {}
  remove(): void {}
  evicted(): void {}
}
let row = 1;
function ev(session: string | null, seq: number, raw: string): Entry {
  const id = `p${row}`;
  return {
    rowid: row++,
    source: 'src',
    id,
    session,
    pos: [0, seq, 0],
    positioned: session !== null,
    type: 't',
    raw,
    bytes: Buffer.byteLength(raw),
    rawRank: 1,
  };
}

/** The first held Event of session s as the buffer holds it now (a fresh view). */
function now(b: ReplayBuffer): Entry {
  const part = b.snapshotAll().find((p) => p.session === 's')!;
  return b.read(part, null, 1).entries[0]!;
}

describe('ReplayBuffer.pin', () => {
  it('puts the honest bytes in memory once; a spill leaves them; an evicted or foreign entry is left alone', () => {
    const b = new ReplayBuffer({ depth: 2, maxSessions: 10, totalBytes: 1 << 30 }, new Keeper());
    b.admit(ev('s', 0, '{"stored":"dishonest"}'), false);
    const h = b.lastAdmitted!;
    assert.equal(h.inMemory, false, 'a loaded row of a durable store is not in memory');
    assert.equal(b.heldBytes, 22);
    b.pin(h, '{"honest":"é"}');
    assert.equal(h.inMemory, true);
    assert.equal(now(b).raw, '{"honest":"é"}');
    assert.equal(b.heldBytes, 15, 'the byte total counts the honest bytes');
    assert.equal(b.arenaStats.live, Buffer.byteLength('{"honest":"é"}'));
    b.spill(h);
    assert.equal(now(b).raw, '{"honest":"é"}', 'pinned: never spilled');
    b.pin(h, '{"other":1}');
    assert.equal(now(b).raw, '{"honest":"é"}', 'already in memory: not put again');
    assert.equal(b.arenaStats.live, Buffer.byteLength('{"honest":"é"}'));
    b.pin({ ...h, raw: 'x' } as Entry, 'x');
    assert.equal(b.arenaStats.live, Buffer.byteLength('{"honest":"é"}'), 'not a Held: ignored');
    // Evict it (depth 2), then pin the stale object: nothing is put.
    b.admit(ev('s', 1, '{"a":1}'), false);
    b.admit(ev('s', 2, '{"b":2}'), false);
    assert.equal(h.inMemory, false);
    assert.equal(b.arenaStats.live, 0, 'its bytes left with it');
    assert.equal(b.heldBytes, 14, 'and its count (the honest one) with them');
    b.pin(h, '{"late":1}');
    assert.equal(b.arenaStats.live, 0, 'an evicted entry is not pinned');
    // A new Event in the evicted one's slot is not pinned by the stale object either.
    b.admit(ev('s', 3, '{"c":3}'), false);
    const fresh = b.lastAdmitted!;
    assert.equal(fresh instanceof Held && fresh.slot === h.slot, true, 'the slot was reused');
    b.pin(h, '{"late":2}');
    assert.equal(fresh.inMemory, false);
  });

  it('the default raw of pin is the entry as held (a --memory relay pins what it has)', () => {
    const b = new ReplayBuffer({ depth: 2, maxSessions: 10, totalBytes: 1 << 30 }, null);
    b.admit(ev('s', 0, '{"k":"v"}'));
    const h = b.lastAdmitted!;
    const before = b.arenaStats.live;
    b.pin(h);
    assert.equal(b.arenaStats.live, before, 'in memory already: nothing added');
    b.spill(h);
    assert.equal(h.raw, '{"k":"v"}');
  });
});

describe('ReplayBuffer: agent-scoped evictions', () => {
  it('a reader of agent-scoped Events whose next ones were evicted is told about the gap; the mark only moves forward', () => {
    const b = new ReplayBuffer({ depth: 2, maxSessions: 10, totalBytes: 1 << 30 }, null);
    for (let i = 1; i <= 2; i++) b.admit(ev(null, i, `{"a":${i}}`));
    const [part] = b.snapshotAll();
    assert.equal(part!.session, null);
    assert.equal(part!.evictedAtStart, null);
    const first = b.read(part!, null, 1);
    assert.deepEqual(
      first.entries.map((e) => e.raw),
      ['{"a":1}'],
    );
    assert.equal(first.gap, false);
    // Two more: 1 and 2 are evicted, and the reader had not read 2 yet.
    b.admit(ev(null, 3, '{"a":3}'));
    b.admit(ev(null, 4, '{"a":4}'));
    assert.deepEqual(b.read(part!, first.entries[0]!.pos, 10), { entries: [], gap: true });
    // A fresh snapshot starts after the mark: no gap.
    const [again] = b.snapshotAll();
    assert.deepEqual(again!.evictedAtStart, [0, 2, 0]);
    assert.deepEqual(
      b.read(again!, null, 10).entries.map((e) => e.raw),
      ['{"a":3}', '{"a":4}'],
    );
    // An older position arriving later and evicted at once does not move the mark back.
    b.admit(ev(null, 0, '{"a":0}'));
    const [third] = b.snapshotAll();
    assert.deepEqual(third!.evictedAtStart, [0, 2, 0]);
  });
});

describe('ReplayBuffer: a stale Held view', () => {
  it('an evicted Event whose slot now holds another one reads nothing: not in memory, raw and copyRaw throw', () => {
    const b = new ReplayBuffer({ depth: 1, maxSessions: 10, totalBytes: 1 << 30 }, null);
    b.admit(ev('s', 0, '{"old":1}'));
    const old = b.lastAdmitted!;
    assert.equal(old.raw, '{"old":1}');
    b.admit(ev('t', 0, '{"other":2}')); // another slot
    b.admit(ev('s', 1, '{"new":3}')); // evicts old; its slot is the one reused next
    b.admit(ev('u', 0, '{"reuse":4}'));
    const reuse = b.lastAdmitted!;
    assert.equal(reuse instanceof Held && old instanceof Held && reuse.slot === old.slot, true, 'the slot was reused');
    assert.equal(old.inMemory, false);
    assert.throws(() => old.raw, /held in the store only/);
    assert.throws(() => old.copyRaw(Buffer.alloc(64), 0), /held in the store only/);
    assert.equal(reuse.raw, '{"reuse":4}');
  });
});

describe('ReplayBuffer: resuming a session that is gone', () => {
  it('from its last evicted position or later: nothing to send and no gap, until it is evicted again after the snapshot', () => {
    const b = new ReplayBuffer({ depth: 10, maxSessions: 1, totalBytes: 1 << 30 }, null);
    b.admit(ev('s', 4, '{"s":4}'));
    b.admit(ev('s', 5, '{"s":5}'));
    b.admit(ev('t', 0, '{"t":0}')); // evicts session s: its tombstone is at seq 5
    const [late] = b.snapshotFrom([{ session: 's', epoch: 0, seq: 5 }]);
    assert.deepEqual(late, { session: 's', after: [0, 5, 0], until: null, evictedAtStart: [0, 5, 0] });
    assert.deepEqual(b.read(late!, null, 10), { entries: [], gap: false });
    const [early] = b.snapshotFrom([{ session: 's', epoch: 0, seq: 4 }]);
    assert.deepEqual(early!.exhausted, { epoch: 0, seq: 6 }, 'the marker tells what was evicted before the snapshot');
    assert.deepEqual(b.read(early!, null, 10), { entries: [], gap: false });
    // The session comes back and is evicted again after the snapshot: now a gap.
    b.admit(ev('s', 6, '{"s":6}'));
    b.admit(ev('t', 1, '{"t":1}'));
    assert.deepEqual(b.read(early!, null, 10), { entries: [], gap: true });
    assert.deepEqual(b.read(late!, null, 10), { entries: [], gap: true });
    assert.deepEqual(b.snapshotFrom([{ session: 'never', epoch: 0, seq: 0 }]), [], 'an unknown session: nothing, no marker');
  });
});

describe('ReplayBuffer.admitRaw: what a sink sees of an arriving Event', () => {
  it('its exact bytes from a request body at an offset, as text and copied', () => {
    const seen: Array<[string, string]> = [];
    const sink: BufferSink = {
      insert(e: Entry): void {
        const copy = Buffer.alloc(e.bytes + 2, '#');
        const n = e.copyRaw!(copy, 1);
        seen.push([e.raw, copy.toString('utf8', 0, n + 2)]);
      },
      remove(): void {},
      evicted(): void {},
    };
    const b = new ReplayBuffer({ depth: 10, maxSessions: 10, totalBytes: 1 << 30 }, sink);
    const body = Buffer.from('[{"é":1}]\n{"b":2}\n');
    b.admitRaw(1, 'src', 'x1', 's', [0, 0, 0], true, 't', 1, body, Buffer.byteLength('{"é":1}'), undefined, 1);
    b.admitRaw(2, 'src', 'x2', 's', [0, 1, 0], true, 't', 1, '{"s":"ü"}', Buffer.byteLength('{"s":"ü"}'));
    assert.deepEqual(seen, [
      ['{"é":1}', '#{"é":1}#'],
      ['{"s":"ü"}', '#{"s":"ü"}#'],
    ]);
  });
});

describe('ReplayBuffer: views and reads at the edges', () => {
  it("a held Event's view: long and non-Latin-1 ids, the positioned flag, the agent", () => {
    const b = new ReplayBuffer({ depth: 10, maxSessions: 10, totalBytes: 1 << 30 }, null);
    const long = 'L'.repeat(40);
    b.admit({ ...ev('s', 0, '{"a":0}'), id: long });
    b.admit({ ...ev('s', 1, '{"a":1}'), id: 'ü✓' });
    b.admit({ ...ev('s', 2, '{"a":2}'), positioned: false, agent: 'ag' });
    const part = b.snapshotAll().find((p) => p.session === 's')!;
    const got = b.read(part, null, 10).entries;
    assert.deepEqual(
      got.map((e) => [e.id, e.positioned, e.agent]),
      [
        [long, true, undefined],
        ['ü✓', true, undefined],
        [got[2]!.id, false, 'ag'],
      ],
    );
    assert.match(got[2]!.id, /^p\d+$/);
  });

  it('lastAdmitted is null when the Event just admitted was evicted at once', () => {
    const b = new ReplayBuffer({ depth: 1, maxSessions: 10, totalBytes: 1 << 30 }, null);
    b.admit(ev('s', 5, '{"s":5}'));
    assert.equal(b.lastAdmitted?.raw, '{"s":5}');
    b.admit(ev('s', 1, '{"s":1}')); // older than the one held: evicted as it arrives (depth 1)
    assert.equal(b.lastAdmitted, null);
  });

  it('spilling a stale view leaves the Event that now occupies its slot alone', () => {
    const b = new ReplayBuffer({ depth: 1, maxSessions: 10, totalBytes: 1 << 30 }, null);
    b.admit(ev('s', 0, '{"old":1}'));
    const old = b.lastAdmitted!;
    b.admit(ev('t', 0, '{"other":2}'));
    b.admit(ev('s', 1, '{"new":3}')); // evicts old
    b.admit(ev('u', 0, '{"reuse":4}')); // takes old's slot
    const reuse = b.lastAdmitted!;
    const live = b.arenaStats.live;
    b.spill(old);
    assert.equal(b.arenaStats.live, live);
    assert.equal(reuse.raw, '{"reuse":4}');
  });

  it('a reader ahead of the evictions made after its snapshot sees no gap; behind them it does', () => {
    const b = new ReplayBuffer({ depth: 3, maxSessions: 10, totalBytes: 1 << 30 }, null);
    for (let i = 1; i <= 4; i++) b.admit(ev('s', i, `{"s":${i}}`)); // 1 evicted
    const part = b.snapshotAll().find((p) => p.session === 's')!;
    assert.deepEqual(part.evictedAtStart, [0, 1, 0]);
    const first = b.read(part, null, 2);
    assert.deepEqual(
      first.entries.map((e) => e.raw),
      ['{"s":2}', '{"s":3}'],
    );
    b.admit(ev('s', 5, '{"s":5}'));
    b.admit(ev('s', 6, '{"s":6}')); // 2 and 3 evicted: behind the reader
    const next = b.read(part, first.entries[1]!.pos, 10);
    assert.deepEqual({ raws: next.entries.map((e) => e.raw), gap: next.gap }, { raws: ['{"s":4}'], gap: false });
    b.admit(ev('s', 7, '{"s":7}')); // 4 evicted: the reader had not read it
    assert.deepEqual(b.read(part, first.entries[1]!.pos, 10), { entries: [], gap: true });
  });
});
