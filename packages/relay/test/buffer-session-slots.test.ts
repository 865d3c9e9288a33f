// A session's position list (buffer.ts SessionBuf): evictions consume its head, and the consumed
// head is reused before the list grows, so its memory stays near the session's depth.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ReplayBuffer, type Entry } from '../src/buffer.js';

let row = 1;
function ev(session: string | null, seq: number, raw: string): Entry {
  const id = `q${row}`;
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

describe("ReplayBuffer: a session's position list", () => {
  it('stays near its depth however many Events pass through it (the consumed head is reused, not grown past)', () => {
    const b = new ReplayBuffer({ depth: 8, maxSessions: 10, totalBytes: 1 << 30 }, null);
    const base = b.sessionSlots; // the agent-scoped list
    for (let i = 0; i < 5000; i++) b.admit(ev('s', i, `{"i":${i}}`));
    assert.equal(b.heldEvents, 8);
    assert.ok(b.sessionSlots - base <= 16, `${b.sessionSlots - base} slots for a depth of 8`);
    const part = b.snapshotAll().find((p) => p.session === 's')!;
    assert.deepEqual(
      b.read(part, null, 100).entries.map((e) => e.raw),
      Array.from({ length: 8 }, (_, k) => `{"i":${4992 + k}}`),
    );
  });
});
