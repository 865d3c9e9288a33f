// The AEP-0006 rules the stream validator applies with a request in hand, at their edges:
// - form.required-missing is waived below `redacted` exactly for the values gating removes (a
//   required string field, a required `other` select), never for structural ones, and never at
//   `redacted` or `full`; field ids holding "/" and "~" are matched through their escaped
//   pointers; every issue points at /data/answer/values/<escaped id>;
// - capture.values-free-text (AEP-0002 §5.3) flags free text at `metadata` and nothing else: a
//   valid choice id of an `other` select, a non-string entry, or a forged choice on a closed
//   select (form.choice-forged's business) is not a capture leak; among foreign commands only
//   control.attention.respond carries an answer;
// - a malformed answer (values not an object) is the single-event validator's finding, never a
//   crash that would lose the other issues of the same event;
// - validateStream keeps an event out of the stream rules only for an envelope issue.
// Issue 20, the mutation run of stream.ts (docs/testing.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StreamValidator, validateStream } from '@aep/protocol';

const TIME = '2026-08-01T09:00:00Z';
const BASE = { aep: '0.1', time: TIME, source: 'aep://h/agent/a/session/s', agent: 'a', session: 's' };
const choices = (...ids: string[]) => ids.map((id) => ({ id, label: id }));
const FIELDS = [
  { id: 'text', type: 'string', label: 'text', required: true },
  { id: 'a/b', type: 'string', label: 'slash', required: true },
  { id: 'c~d', type: 'string', label: 'tilde', required: true },
  { id: 'other', type: 'select', label: 'other', required: true, other: true, choices: choices('x', 'y') },
  { id: 'closed', type: 'select', label: 'closed', required: true, choices: choices('a', 'b') },
  { id: 'n', type: 'number', label: 'n', required: true },
  { id: 'ok', type: 'boolean', label: 'ok', required: true },
];
const request = { ...BASE, id: 'REQ', seq: 1, type: 'attention.requested', data: { kind: 'form', prompt: 'p', fields: FIELDS } };
const answer = (values: unknown, capture: string | undefined, seq = 2) => ({
  ...BASE,
  id: `ANS${seq}`,
  seq,
  type: 'attention.answered',
  subject: 'REQ',
  ...(capture === undefined ? {} : { capture }),
  data: { answer: { values } },
});
/** The stream issues of `events` (stream rules only), as "rule path". */
function streamIssues(...events: unknown[]): string[] {
  const sv = new StreamValidator();
  return events.flatMap((e, i) => sv.push(e, i).map((x) => `${x.rule} ${x.path}`));
}
const P = '/data/answer/values/';

test('a missing required field: waived below redacted only for what gating removes (string, other select)', () => {
  const structural = [`form.required-missing ${P}closed`, `form.required-missing ${P}n`, `form.required-missing ${P}ok`];
  const all = [
    `form.required-missing ${P}text`,
    `form.required-missing ${P}a~1b`,
    `form.required-missing ${P}c~0d`,
    `form.required-missing ${P}other`,
    ...structural,
  ];
  for (const capture of ['full', 'redacted']) assert.deepEqual(streamIssues(request, answer({}, capture)).sort(), all.sort(), capture);
  for (const capture of ['metadata', 'none', undefined])
    assert.deepEqual(streamIssues(request, answer({}, capture)).sort(), structural.sort(), String(capture));
  // Everything present: nothing to report at any capture.
  const complete = { text: 't', 'a/b': 's', 'c~d': 't', other: 'x', closed: 'a', n: 1, ok: true };
  assert.deepEqual(streamIssues(request, answer(complete, 'full')), []);
});

test('only a form request (kind "form") has its fields applied to the answer', () => {
  const fields = [{ id: 'text', type: 'string', label: 'text', required: true }];
  for (const kind of ['input', 'choice', 'approval']) {
    const req = { ...request, data: { kind, prompt: 'p', fields } };
    assert.deepEqual(streamIssues(req, answer({}, 'full')), [], kind);
    assert.deepEqual(streamIssues(req, answer({ text: 'secret' }, 'metadata')), [], kind);
  }
});

test('"other" waives a missing required field only on a select: a number field marked other is still structural', () => {
  const req = { ...request, data: { kind: 'form', prompt: 'p', fields: [{ id: 'n', type: 'number', label: 'n', required: true, other: true }] } };
  assert.deepEqual(streamIssues(req, answer({}, 'metadata')), [`form.required-missing ${P}n`]);
});

test('capture.values-free-text: free text at metadata, by escaped pointer, naming the field', () => {
  const sv = new StreamValidator();
  sv.push(request, 0);
  const leaks = sv.push(answer({ text: 's', 'a/b': 'secret', 'c~d': 'secret', other: ['x', 'typed'], closed: 'a', n: 1, ok: true }, 'metadata'), 1);
  assert.deepEqual(
    leaks.map((i) => [i.rule, i.path]),
    [
      ['capture.values-free-text', `${P}text`],
      ['capture.values-free-text', `${P}a~1b`],
      ['capture.values-free-text', `${P}c~0d`],
      ['capture.values-free-text', `${P}other`],
    ],
  );
  assert.match(leaks[1]!.message, /^string entry for string field "a\/b" at capture metadata/);
  assert.match(leaks[2]!.message, /field "c~d"/);
  assert.match(leaks[3]!.message, /^"other" free text for field "other" at capture metadata/);
});

test('capture.values-free-text: not for a choice id, a non-string entry, or a forged choice on a closed select', () => {
  const rulesOf = (values: Record<string, unknown>) => {
    const sv = new StreamValidator();
    sv.push(request, 0);
    return sv.push(answer({ text: undefined, n: 1, ok: true, closed: 'a', other: 'x', ...values }, 'metadata'), 1).map((i) => i.rule);
  };
  assert.deepEqual(rulesOf({ other: 'y' }), [], 'a choice id of an other select, alone');
  assert.deepEqual(rulesOf({ other: ['x', 'y'] }), [], 'choice ids in a list');
  assert.ok(!rulesOf({ other: [5] }).includes('capture.values-free-text'), 'a number is no free text (the single-event rules judge it)');
  assert.deepEqual(rulesOf({ closed: 'zzz' }), ['form.choice-forged'], 'a forged choice is not also a capture leak');
});

test('among foreign commands only control.attention.respond is checked for answer values', () => {
  const cmd = (type: string) => ({
    aep: '0.1',
    id: `C-${type}`,
    type,
    time: TIME,
    source: 'aep://desk/agent/console',
    agent: 'console',
    session: 's',
    subject: 'REQ',
    data: { answer: { values: { text: 'leak' } } },
  });
  assert.deepEqual(streamIssues(request, cmd('control.attention.respond')), [`capture.values-free-text ${P}text`]);
  assert.deepEqual(streamIssues(request, cmd('control.pause')), []);
  assert.deepEqual(streamIssues(request, cmd('control.attention.cancel')), []);
});

test('a malformed answer is left to the single-event rules and never costs the other issues of its event', () => {
  const malformed: unknown[] = [
    { answer: 'x' },
    { answer: [] },
    { answer: { values: [] } },
    { answer: { values: ['text'] } },
    { answer: { values: 'abc' } },
    { answer: { values: null } },
    { answer: { values: 7 } },
    {},
  ];
  malformed.forEach((data, k) => {
    const sv = new StreamValidator();
    sv.push(request, 0);
    sv.push({ ...BASE, id: 'LATER', seq: 50, type: 'progress.status', data: {} }, 1);
    // Each malformed answer also comes back in seq: that regression must still be reported.
    const issues = sv.push({ ...BASE, id: `BAD${k}`, seq: 3, type: 'attention.answered', subject: 'REQ', capture: 'full', data }, 2);
    assert.deepEqual(
      issues.map((i) => i.rule),
      ['stream.seq-regression'],
      JSON.stringify(data),
    );
  });
});

test('validateStream: an event with issues other than envelope ones still takes part in the stream rules', () => {
  const bad = { ...request, id: 'REQ2', data: { kind: 'form', prompt: 'p', fields: [{ id: 'f', type: 'nope', label: 'f' }] } }; // payload.enum, same seq as `request`
  const rules = validateStream([request, bad]).map((i) => i.rule);
  assert.ok(rules.includes('payload.enum'), rules.join());
  assert.ok(rules.includes('stream.position-duplicate'), rules.join());
});
