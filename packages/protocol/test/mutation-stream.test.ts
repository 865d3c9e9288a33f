// Stream rules (AEP-0001 §7) at the edges the mutation run found unpinned (docs/testing.md): the
// dedupe window keeps recognizing redelivery and id conflicts after it grows past its first
// arrays and when it forgets the oldest entries; a terminal seen without its request still
// makes a second, different terminal a conflict; envelope-invalid events take no part in the
// stream rules of validateStream, and every issue carries its stream index.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StreamValidator, validateStream } from '@aep/protocol';

const base =
  (source: string, session: string) =>
  (i: number, extra: Record<string, unknown> = {}) => ({
    aep: '0.1',
    id: `ID${i}`,
    type: 'progress.status',
    time: '2026-08-01T09:00:00Z',
    source,
    agent: 'a',
    session,
    seq: i,
    ...extra,
  });

test('dedupe window: after growing well past its initial size every remembered id is still found', () => {
  const mk = base('aep://h/agent/a/session/g', 'g');
  const sv = new StreamValidator({ dedupeWindow: 10_000 });
  const N = 5000; // several doublings of the 1024-entry arrays and the index
  for (let i = 0; i < N; i++) assert.deepEqual(sv.push(mk(i), i), []);
  assert.equal(sv.rememberedIds, N);
  // Identical repeats are redelivery (no issue), changed ones are id conflicts: for early, middle and late ids.
  for (const i of [0, 1, 1023, 1024, 2047, 2048, 4095, N - 1]) {
    assert.deepEqual(sv.push(mk(i), N + i), [], `redelivery of ID${i}`);
    const issues = sv.push(mk(i, { data: { changed: true } }), N + i);
    assert.deepEqual(
      issues.map((x) => [x.rule, x.path, x.index]),
      [['stream.id-conflict', '/id', N + i]],
      `conflict on ID${i}`,
    );
  }
  assert.equal(sv.rememberedIds, N, 'repeats are not remembered twice');
});

test('dedupe window: the oldest ids are forgotten first, across sources; a forgotten id is new again', () => {
  const a = base('aep://h/agent/a/session/x', 'x');
  const b = base('aep://h/agent/b/session/x', 'x');
  const sv = new StreamValidator({ dedupeWindow: 3 });
  sv.push(a(1), 0);
  sv.push(b(1), 1); // same id, other source: another key
  sv.push(a(2), 2);
  assert.equal(sv.rememberedIds, 3);
  assert.deepEqual(
    sv.push(b(1, { data: { x: 1 } }), 3).map((i) => i.rule),
    ['stream.id-conflict'],
    'b/ID1 is still remembered',
  );
  sv.push(a(3), 4); // forgets a/ID1, the oldest
  assert.equal(sv.rememberedIds, 3);
  assert.deepEqual(sv.push(a(1, { seq: 10, data: { x: 1 } }), 5), [], 'a/ID1 was forgotten: not a conflict any more');
  assert.deepEqual(sv.push(b(1, { seq: 20, data: { x: 2 } }), 6), [], 'remembering a/ID1 again forgot b/ID1, the next oldest');
  assert.deepEqual(sv.push(a(2, { seq: 30, data: { x: 1 } }), 7), [], 'and b/ID1 forgot a/ID2');
  // the window is now a/ID1 (second content), b/ID1 (third), a/ID2 (second)
  assert.deepEqual(sv.push(a(1, { seq: 10, data: { x: 1 } }), 8), [], 'redelivery of the remembered a/ID1');
  assert.deepEqual(
    sv.push(a(1, { seq: 10, data: { x: 9 } }), 9).map((i) => i.rule),
    ['stream.id-conflict'],
  );
  assert.deepEqual(
    sv.push(b(1, { seq: 20, data: { x: 9 } }), 10).map((i) => i.rule),
    ['stream.id-conflict'],
  );
});

// Commands take no part in per-session state, so their source leaves with its last window entry
// and its slot is reused by the next new source.
const cmd = (source: string, id: string, data: Record<string, unknown>) => ({
  aep: '0.1',
  id,
  type: 'control.pause',
  time: '2026-08-01T09:00:00Z',
  source,
  agent: 'console',
  session: 's',
  subject: 'x',
  data,
});

test('dedupe window: a command source that left the window is new when it comes back, even after another source took its slot', () => {
  const X = 'aep://h/agent/x';
  const Y = 'aep://h/agent/y';
  const Z = 'aep://h/agent/z';
  const sv = new StreamValidator({ dedupeWindow: 2 });
  sv.push(cmd(X, 'K', { n: 1 }), 0);
  sv.push(cmd(Y, 'A', {}), 1);
  sv.push(cmd(Y, 'B', {}), 2); // forgets X/K: X has nothing left
  sv.push(cmd(Z, 'K', { n: 2 }), 3); // a new source (X's old slot) with the same id
  assert.deepEqual(sv.push(cmd(X, 'K', { n: 3 }), 4), [], 'X/K is not Z/K');
  // both are remembered, each under its own source
  assert.deepEqual(sv.push(cmd(X, 'K', { n: 3 }), 5), []);
  assert.deepEqual(sv.push(cmd(Z, 'K', { n: 2 }), 6), []);
  assert.deepEqual(
    sv.push(cmd(X, 'K', { n: 5 }), 7).map((i) => i.rule),
    ['stream.id-conflict'],
  );
  assert.deepEqual(
    sv.push(cmd(Z, 'K', { n: 5 }), 8).map((i) => i.rule),
    ['stream.id-conflict'],
  );
});

test('a session source keeps its ordering state after its ids left the window', () => {
  const old = base('aep://h/agent/old/session/s', 's');
  const other = base('aep://h/agent/other/session/s', 's');
  const sv = new StreamValidator({ dedupeWindow: 2 });
  sv.push(old(50), 0);
  sv.push(other(1), 1);
  sv.push(other(2), 2);
  assert.deepEqual(
    sv.push(old(5), 3).map((i) => i.rule),
    ['stream.seq-regression'],
  );
});

test('a terminal whose request is not in the stream still makes a second, different terminal a conflict', () => {
  const mk = base('aep://h/agent/a/session/t', 't');
  const resolved = mk(1, { type: 'attention.resolved', subject: 'REQ-ELSEWHERE', data: { resolution: 'answered' } });
  const timeout = mk(2, { type: 'attention.timeout', subject: 'REQ-ELSEWHERE' });
  assert.deepEqual(validateStream([resolved, structuredClone(resolved)]), [], 'redelivery of the same terminal');
  const issues = validateStream([resolved, timeout]);
  assert.deepEqual(
    issues.map((i) => [i.rule, i.index]),
    [['stream.attention-terminal-duplicate', 1]],
  );
  // an answer that names no request is not a terminal
  assert.deepEqual(
    validateStream([mk(1, { type: 'attention.resolved', data: { resolution: 'answered' } }), timeout]).map((i) => i.rule),
    ['attention.subject-required'],
  );
});

test('validateStream: an envelope-invalid event reports its envelope issue and takes no part in the stream rules', () => {
  const mk = base('aep://h/agent/a/session/v', 'v');
  const broken = { ...mk(9), time: 'yesterday' }; // envelope.* issue
  const issues = validateStream([mk(10), broken, mk(11)]);
  assert.ok(issues.length > 0 && issues.every((i) => i.rule.startsWith('envelope.') && i.index === 1), JSON.stringify(issues));
  // Had the broken event counted, seq 9 after 10 would be a regression and seq 11 fine; its id
  // is not remembered either, so the fixed event with the same id is not a conflict.
  assert.deepEqual(
    validateStream([mk(10), broken, mk(9)])
      .filter((i) => i.rule.startsWith('stream.'))
      .map((i) => [i.rule, i.index]),
    [['stream.seq-regression', 2]],
  );
  assert.deepEqual(
    validateStream([broken, mk(9)]).filter((i) => i.rule.startsWith('stream.')),
    [],
  );
  // indexes count every event, valid or not
  assert.deepEqual(
    validateStream([{}, {}, mk(1), mk(1, { data: { x: 1 } })])
      .filter((i) => i.rule === 'stream.id-conflict')
      .map((i) => i.index),
    [3],
  );
});
