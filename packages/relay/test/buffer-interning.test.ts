// The replay buffer's interned strings (issue 19's columnar index): sources, agents and types are
// held once and counted; an index whose last user went is reused for another string. The
// per-session fast path ("same source as this session's last Event") must never hand out an
// index that now names another string: that would attribute an Event to the wrong emitter and
// break `(source, id)` dedupe (AEP-0001 §7.4).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ReplayBuffer, type Entry } from '../src/buffer.js';

let row = 1;
function ev(session: string | null, seq: number, id: string, source: string, bytes = 0, agent?: string): Entry {
  const base = `{"id":"${id}","seq":${seq}}`;
  const raw = bytes > base.length + 8 ? `${base.slice(0, -1)},"p":"${'x'.repeat(bytes - base.length - 7)}"}` : base;
  return {
    rowid: row++,
    source,
    id,
    session,
    pos: [0, seq, 0],
    positioned: session !== null,
    type: 'progress.status',
    raw,
    bytes: raw.length,
    rawRank: 1,
    ...(agent !== undefined ? { agent } : {}),
  };
}
function held(b: ReplayBuffer): Array<[string | null, string, string, string | undefined]> {
  const out: Array<[string | null, string, string, string | undefined]> = [];
  for (const part of b.snapshotAll()) for (const e of b.read(part, null, 1000).entries) out.push([e.session, e.source, e.id, e.agent]);
  return out;
}

describe('ReplayBuffer: interned sources and agents', () => {
  it('an agent-scoped Event from the source of an evicted one, after its index was reused, keeps its own source (dedupe stays exact)', () => {
    const b = new ReplayBuffer({ depth: 100, maxSessions: 100, totalBytes: 1000 }, null);
    b.admit(ev(null, 0, 'a1', 'urn:A', 100, 'agent-A'));
    // Over the byte cap: the agent-scoped Event goes, and with it the last use of urn:A and agent-A.
    b.admit(ev('s', 0, 's1', 'urn:S', 950));
    assert.equal(b.has('urn:A', 'a1'), false);
    // Another emitter and agent take the freed indexes.
    b.admit(ev('t', 0, 't1', 'urn:C', 40, 'agent-C'));
    assert.equal(b.admit(ev(null, 0, 'a2', 'urn:A', 30, 'agent-A')), 'admitted');
    assert.equal(b.has('urn:A', 'a2'), true, '(urn:A, a2) is held');
    assert.equal(b.has('urn:C', 'a2'), false, 'not under the emitter that reused the index');
    assert.equal(b.admit(ev(null, 0, 'a2', 'urn:A', 30, 'agent-A')), 'duplicate');
    assert.deepEqual(
      held(b).filter((h) => h[2] === 'a2' || h[2] === 't1'),
      [
        [null, 'urn:A', 'a2', 'agent-A'],
        ['t', 'urn:C', 't1', 'agent-C'],
      ],
    );
  });

  it("a session whose newest admission was evicted at once (out of order, over depth) keeps the next Event's source exact", () => {
    const b = new ReplayBuffer({ depth: 1, maxSessions: 100, totalBytes: 1 << 30 }, null);
    b.admit(ev('s', 5, 'x5', 'urn:X'));
    // Arrives before seq 5: inserted at the head, then evicted by the depth of 1 (last use of urn:B).
    b.admit(ev('s', 1, 'b1', 'urn:B', 0, 'agent-B'));
    assert.equal(b.has('urn:B', 'b1'), false);
    b.admit(ev('u', 0, 'c1', 'urn:C', 0, 'agent-C'));
    b.admit(ev('s', 6, 'b6', 'urn:B', 0, 'agent-B'));
    assert.equal(b.has('urn:B', 'b6'), true);
    assert.equal(b.has('urn:C', 'b6'), false);
    // Sessions in least-recently-written order.
    assert.deepEqual(held(b), [
      ['u', 'urn:C', 'c1', 'agent-C'],
      ['s', 'urn:B', 'b6', 'agent-B'],
    ]);
  });

  it('a source shared by several sessions stays known while any of them holds one of its Events', () => {
    const b = new ReplayBuffer({ depth: 1, maxSessions: 100, totalBytes: 1 << 30 }, null);
    b.admit(ev('s1', 0, 'x1', 'urn:shared', 0, 'agent'));
    b.admit(ev('s2', 0, 'x2', 'urn:shared', 0, 'agent'));
    b.admit(ev('s3', 0, 'x3', 'urn:shared', 0, 'agent'));
    b.admit(ev('s1', 1, 'y1', 'urn:other', 0, 'agent-2')); // evicts x1
    assert.deepEqual(
      ['x1', 'x2', 'x3'].map((id) => b.has('urn:shared', id)),
      [false, true, true],
    );
    b.admit(ev('s2', 1, 'y2', 'urn:other', 0, 'agent-2')); // evicts x2
    assert.deepEqual(
      ['x2', 'x3'].map((id) => b.has('urn:shared', id)),
      [false, true],
    );
    b.admit(ev('s4', 0, 'x4', 'urn:shared', 0, 'agent'));
    assert.deepEqual(
      held(b).map((h) => h.join(' ')),
      ['s3 urn:shared x3 agent', 's1 urn:other y1 agent-2', 's2 urn:other y2 agent-2', 's4 urn:shared x4 agent'],
    );
  });

  it('the 65th interned string (the first past the initial counts), used twice, stays held until its last use goes', () => {
    const b = new ReplayBuffer({ depth: 1, maxSessions: 1000, totalBytes: 1 << 30 }, null);
    // 64 strings of each kind fill the initial counts exactly: the shared ones get index 64.
    for (let i = 0; i < 64; i++) b.admit({ ...ev(`s${i}`, 0, `a${i}`, `urn:src:${i}`, 0, `agent-${i}`), type: `x.type${i}` });
    b.admit({ ...ev('p', 0, 'p0', 'urn:late', 0, 'agent-late'), type: 'late.type' });
    b.admit({ ...ev('q', 0, 'q0', 'urn:late', 0, 'agent-late'), type: 'late.type' });
    b.admit({ ...ev('p', 1, 'p1', 'urn:p', 0, 'agent-p'), type: 'p.type' }); // evicts p0
    assert.equal(b.has('urn:late', 'p0'), false);
    assert.equal(b.has('urn:late', 'q0'), true);
    const q = b.snapshotAll().find((part) => part.session === 'q')!;
    const [e] = b.read(q, null, 10).entries;
    assert.deepEqual([e!.source, e!.agent, e!.type], ['urn:late', 'agent-late', 'late.type']);
  });

  it('an Event without an agent leaves the agents alone when evicted; a new agent after it is held', () => {
    const b = new ReplayBuffer({ depth: 1, maxSessions: 100, totalBytes: 1 << 30 }, null);
    b.admit(ev('s', 0, 'n0', 'urn:n')); // no agent
    b.admit(ev('s', 1, 'n1', 'urn:n')); // evicts n0
    b.admit(ev('t', 0, 'g0', 'urn:g', 0, 'agent-g'));
    b.admit(ev('u', 0, 'g1', 'urn:g', 0, 'agent-g'));
    b.admit(ev('t', 1, 'g2', 'urn:g', 0, 'agent-h')); // evicts g0: agent-g is still used by g1
    assert.deepEqual(
      held(b).map((h) => h.join(' ')),
      ['s urn:n n1 ', 'u urn:g g1 agent-g', 't urn:g g2 agent-h'],
    );
  });

  it('strings nothing held uses any more are released, and their indexes reused', () => {
    const b = new ReplayBuffer({ depth: 1, maxSessions: 2, totalBytes: 1 << 30 }, null);
    for (let i = 0; i < 10; i++) b.admit({ ...ev(`s${i}`, 0, `a${i}`, `urn:src:${i}`, 0, `agent-${i}`), type: `x.type${i}` });
    // Two sessions held (the others were evicted as least recently written), one Event each.
    const two = { strings: 2, indexes: 3 };
    assert.deepEqual(b.internStats, { sources: two, agents: two, types: two });
    b.admit({ ...ev('s9', 1, 'b9', 'urn:src:9', 0, 'agent-9'), type: 'x.type9' }); // evicts a9, same strings
    assert.deepEqual(b.internStats, { sources: two, agents: two, types: two });
    b.admit(ev(null, 0, 'z', 'urn:src:8')); // agent-scoped, no agent
    assert.deepEqual(b.internStats, { sources: two, agents: two, types: { strings: 3, indexes: 3 } });
  });

  it('hundreds of sources, agents and types: each Event reads back its own, released ones are forgotten and reused', () => {
    const b = new ReplayBuffer({ depth: 1, maxSessions: 1000, totalBytes: 1 << 30 }, null);
    for (let i = 0; i < 300; i++) b.admit({ ...ev(`s${i}`, 0, `a${i}`, `urn:src:${i}`, 0, `agent-${i}`), type: `x.type${i}` });
    for (let i = 0; i < 300; i++) assert.equal(b.has(`urn:src:${i}`, `a${i}`), true, `source ${i}`);
    // Depth 1: a second Event per session evicts the first (and its source, agent and type).
    for (let i = 0; i < 300; i++) b.admit({ ...ev(`s${i}`, 1, `b${i}`, `urn:new:${i}`, 0, `agent-new-${i}`), type: `y.type${i}` });
    for (let i = 0; i < 300; i += 37) {
      assert.equal(b.has(`urn:src:${i}`, `a${i}`), false);
      assert.equal(b.has(`urn:new:${i}`, `b${i}`), true);
    }
    const all = [];
    for (const part of b.snapshotAll()) for (const e of b.read(part, null, 10).entries) all.push(`${e.session} ${e.source} ${e.id} ${e.agent} ${e.type}`);
    assert.equal(all.length, 300);
    for (let i = 0; i < 300; i++) assert.equal(all[i], `s${i} urn:new:${i} b${i} agent-new-${i} y.type${i}`);
  });
});
