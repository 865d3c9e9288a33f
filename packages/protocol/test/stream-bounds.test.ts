// What the stream validator holds stays within its stated bounds (AEP-0001 §7.4 redelivery
// detection on endless streams; `aep validate` on large files, issue 19): the dedupe window
// allocates at most `dedupeWindow` entries and keeps short Latin-1 ids off the heap; a source
// leaves with its last window entry and its slot number is reused; requests closed are dropped
// from the foreign-command index; closed units per session stop at CLOSED_PER_SESSION, the
// oldest tenth forgotten at once; an unusable `dedupeWindow` means the default one.
// Issue 20, the mutation run of stream.ts (docs/testing.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StreamValidator, CLOSED_PER_SESSION } from '@aep/protocol';

const TIME = '2026-08-01T09:00:00Z';
const progress = (id: string, seq: number, extra: Record<string, unknown> = {}) => ({
  aep: '0.1',
  id,
  type: 'progress.status',
  time: TIME,
  source: 'aep://h/agent/a/session/s',
  agent: 'a',
  session: 's',
  seq,
  ...extra,
});
const rules = (issues: { rule: string }[]) => issues.map((i) => i.rule);

test('the window allocates no more entries than it may hold', () => {
  for (const w of [1, 3, 100, 4095, 4097]) {
    const sv = new StreamValidator({ dedupeWindow: w });
    for (let i = 0; i < w + 10; i++) sv.push(progress(`I${i}`, i), i);
    const f = sv.footprint;
    assert.equal(f.ids, w, `window ${w}: held`);
    assert.equal(f.allocatedIds, w, `window ${w}: allocated`);
  }
});

test('ids of up to 40 characters below U+0100 are kept as bytes; longer or wider ones as strings, and only while held', () => {
  const sv = new StreamValidator({ dedupeWindow: 4 });
  let seq = 0;
  const push = (id: string) => assert.deepEqual(sv.push(progress(id, ++seq, { data: { seq } }), seq), [], id);
  push('a'.repeat(40));
  push('\u00ff'.repeat(40)); // U+00FF is still one byte
  push('x1');
  assert.equal(sv.footprint.stringIds, 0, 'all three fit the byte blocks');
  push('b'.repeat(41)); // too long
  push('\u0100'); // above U+00FF (evicts the first)
  assert.equal(sv.footprint.stringIds, 2);
  // Short ids reuse the entries the long ones held: their strings go with them.
  for (let i = 0; i < 4; i++) push(`s${i}`); // one turn of the ring: every entry reused once
  assert.equal(sv.footprint.stringIds, 0, 'no string is kept for an entry that now holds a short id');
  assert.equal(sv.footprint.ids, 4);
  // And each kind of id is still recognized after all that reuse.
  const ids = ['c'.repeat(40), 'd'.repeat(41), '\u0101z', 'e'];
  for (const id of ids) push(id);
  for (const id of ids) assert.deepEqual(rules(sv.push(progress(id, 999, { data: { changed: true } }), 99)), ['stream.id-conflict'], id);
});

test('an id of exactly 40 characters stored over a reused entry leaves its neighbours intact', () => {
  // The byte slots are 40 wide and adjacent: writing one character too many would overwrite the
  // first character of the next entry's id, and that id would no longer be recognized.
  const sv = new StreamValidator({ dedupeWindow: 3 });
  let seq = 0;
  const push = (id: string, data: unknown = { seq }) => rules(sv.push(progress(id, ++seq, { data }), seq));
  push('A0');
  push('B0');
  push('C0');
  assert.deepEqual(push('Z'.repeat(40)), []); // reuses entry 0, next to B0's entry
  assert.deepEqual(push('B0', { changed: true }), ['stream.id-conflict'], 'B0 is still held, byte for byte');
  assert.deepEqual(push('Y'.repeat(39)), []); // reuses entry 1
  assert.deepEqual(push('C0', { changed: true }), ['stream.id-conflict']);
});

test('a source leaves with its last window entry; its slot number goes to the next new source', () => {
  const sv = new StreamValidator({ dedupeWindow: 4 });
  // Commands from 100 consoles: no session state, so each source lives only in the window.
  for (let k = 0; k < 100; k++) {
    const cmd = {
      aep: '0.1',
      id: `C${k}`,
      type: 'control.pause',
      time: TIME,
      source: `aep://desk/agent/console${k}`,
      agent: 'console',
      session: 's',
      subject: 'x',
    };
    assert.deepEqual(sv.push(cmd, k), []);
    const f = sv.footprint;
    assert.equal(f.sources, Math.min(k + 1, 4), `after ${k + 1} consoles`);
    assert.ok(f.sourceSlots <= 5, `slot numbers are reused (${f.sourceSlots} after ${k + 1})`);
  }
  // A source with a session stays (its ordering state is live), whatever the window forgot.
  assert.deepEqual(sv.push(progress('P0', 1), 100), []);
  for (let k = 0; k < 10; k++)
    sv.push({ aep: '0.1', id: `D${k}`, type: 'control.pause', time: TIME, source: `aep://desk/agent/d${k}`, agent: 'd', session: 's', subject: 'x' }, 101 + k);
  assert.equal(sv.footprint.sources, 4 + 1);
  assert.deepEqual(rules(sv.push(progress('P1', 1), 111)), ['stream.position-duplicate'], 'the session kept its position');
});

test('a closed request leaves the index foreign commands are checked against', () => {
  const sv = new StreamValidator();
  const base = { aep: '0.1', time: TIME, source: 'aep://h/agent/a/session/s', agent: 'a', session: 's' };
  sv.push(
    { ...base, id: 'R1', seq: 1, type: 'attention.requested', data: { kind: 'form', prompt: 'p', fields: [{ id: 'f', type: 'string', label: 'f' }] } },
    0,
  );
  sv.push({ ...base, id: 'R2', seq: 2, type: 'attention.requested', data: { kind: 'input', prompt: 'p' } }, 1);
  assert.equal(sv.footprint.openRequests, 2);
  sv.push({ ...base, id: 'T1', seq: 3, type: 'attention.resolved', subject: 'R1', data: { outcome: 'answered' } }, 2);
  sv.push({ ...base, id: 'T2', seq: 4, type: 'attention.timeout', subject: 'R2' }, 3);
  assert.equal(sv.footprint.openRequests, 0);
});

test(`closed units: ${CLOSED_PER_SESSION} per session are all remembered; one more forgets the oldest tenth`, () => {
  const mk = (sv: StreamValidator) => {
    let seq = 0;
    return (run: number, type = 'run.finished') =>
      rules(
        sv.push(
          { aep: '0.1', id: `E${seq}`, type, time: TIME, source: 'aep://h/agent/a/session/s', agent: 'a', session: 's', seq: ++seq, run: `R${run}` },
          seq,
        ),
      );
  };
  // Exactly CLOSED_PER_SESSION: the very first is still remembered.
  const a = mk(new StreamValidator());
  for (let r = 1; r <= CLOSED_PER_SESSION; r++) a(r);
  assert.deepEqual(a(1, 'run.failed'), ['stream.run-terminal-duplicate'], 'the first of 10,000 is remembered');
  // One more: runs 1..1001 are forgotten (down to 9,000), 1002.. still remembered.
  const b = mk(new StreamValidator());
  for (let r = 1; r <= CLOSED_PER_SESSION + 1; r++) b(r);
  assert.deepEqual(b(CLOSED_PER_SESSION - 8999, 'run.failed'), [], 'run 1001 was forgotten');
  assert.deepEqual(b(CLOSED_PER_SESSION - 8998, 'run.failed'), ['stream.run-terminal-duplicate'], 'run 1002 is remembered');
  assert.deepEqual(b(CLOSED_PER_SESSION + 1, 'run.failed'), ['stream.run-terminal-duplicate'], 'the newest is remembered');
});

test(`closed requests: ${CLOSED_PER_SESSION} per session are all remembered; one more forgets the oldest tenth, never an open one`, () => {
  const mk = (sv: StreamValidator) => {
    let seq = 0;
    const push = (extra: Record<string, unknown>) =>
      rules(sv.push({ aep: '0.1', id: `E${seq}`, time: TIME, source: 'aep://h/agent/a/session/s', agent: 'a', session: 's', seq: ++seq, ...extra }, seq));
    return {
      open: (r: number) => push({ type: 'attention.requested', id: `Q${r}`, data: { kind: 'input', prompt: 'p' } }),
      close: (r: number, type = 'attention.resolved') =>
        push(type === 'attention.resolved' ? { type, subject: `Q${r}`, data: { outcome: 'answered' } } : { type, subject: `Q${r}` }),
    };
  };
  const a = mk(new StreamValidator());
  for (let r = 1; r <= CLOSED_PER_SESSION; r++) a.close(r);
  assert.deepEqual(a.close(1, 'attention.timeout'), ['stream.attention-terminal-duplicate'], 'the first of 10,000 is remembered');
  const b = mk(new StreamValidator());
  b.open(0); // stays open through every eviction
  for (let r = 1; r <= CLOSED_PER_SESSION + 1; r++) b.close(r);
  assert.deepEqual(b.close(1001, 'attention.timeout'), [], 'request 1001 was forgotten');
  assert.deepEqual(b.close(1002, 'attention.timeout'), ['stream.attention-terminal-duplicate'], 'request 1002 is remembered');
  assert.deepEqual(b.close(0), [], 'the open request was kept: its first terminal is not a duplicate');
});

test('an unusable dedupeWindow (0, negative, fractional, NaN, infinite) means the default window', () => {
  for (const w of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
    const sv = new StreamValidator({ dedupeWindow: w });
    for (let i = 0; i < 5; i++) assert.deepEqual(sv.push(progress(`W${i}`, i), i), [], `window ${w}, event ${i}`);
    assert.deepEqual(rules(sv.push(progress('W0', 0, { data: { changed: true } }), 5)), ['stream.id-conflict'], `window ${w}`);
    assert.equal(sv.rememberedIds, 5);
  }
});
