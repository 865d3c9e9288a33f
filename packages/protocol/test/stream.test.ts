import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { validateStream, StreamValidator, fingerprint, fingerprintText } from '@aep/protocol';
import { fingerprintAscii } from '../src/stream.js';

const SRC = 'aep://h/agent/bot/session/s1';
let n = 0;
function ev(type: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  n++;
  return { aep: '0.1', id: `ID${String(n).padStart(4, '0')}`, type, time: '2026-08-01T09:00:00Z', source: SRC, agent: 'bot', session: 's1', seq: n, ...extra };
}
const rules = (issues: { rule: string }[]) => issues.map((i) => i.rule).sort();

test('a clean stream with redelivery, gaps, epoch bump and events after the end is valid', () => {
  const a = ev('session.started', { seq: 0 });
  const b = ev('run.started', { seq: 5, run: 'r1' });
  const c = ev('run.finished', { seq: 6, run: 'r1' });
  const d = ev('progress.status', { seq: 0, epoch: 1 });
  const end = ev('session.ended', { seq: 1, epoch: 1 });
  const late = ev('tool.completed', { seq: 2, epoch: 1, data: { tool: { name: 'Bash' } } });
  assert.deepEqual(validateStream([a, b, structuredClone(b), c, c, d, end, structuredClone(end), late]), []);
});

test('same (source, id) with different content is stream.id-conflict; another source may reuse the id', () => {
  const a = ev('progress.status', { seq: 1 });
  const b = { ...a, seq: 2 };
  const other = { ...a, source: 'aep://other/agent/x/session/s1' };
  assert.deepEqual(rules(validateStream([a, other])), []);
  const issues = validateStream([a, b]);
  assert.deepEqual(rules(issues), ['stream.id-conflict']);
  assert.equal(issues[0]!.index, 1);
});

test('seq regression, duplicate position and epoch regression are per (source, session)', () => {
  assert.deepEqual(rules(validateStream([ev('progress.status', { seq: 5 }), ev('progress.status', { seq: 3 })])), ['stream.seq-regression']);
  assert.deepEqual(rules(validateStream([ev('progress.status', { seq: 5 }), ev('progress.status', { seq: 5 })])), ['stream.position-duplicate']);
  assert.deepEqual(rules(validateStream([ev('progress.status', { seq: 0, epoch: 2 }), ev('progress.status', { seq: 9, epoch: 1 })])), [
    'stream.epoch-regression',
  ]);
  // Same session string from another emitter is another session (AEP-0001 §5.2).
  assert.deepEqual(rules(validateStream([ev('progress.status', { seq: 5 }), ev('progress.status', { seq: 3, source: 'aep://b/agent/y/session/s1' })])), []);
  // Foreign events carry no seq and do not take part in ordering.
  assert.deepEqual(
    rules(validateStream([ev('progress.status', { seq: 5 }), { ...ev('control.pause'), seq: undefined }].map((e) => JSON.parse(JSON.stringify(e)) as unknown))),
    [],
  );
});

test('a second distinct run terminal and a second distinct session.ended are caught across epochs', () => {
  assert.deepEqual(
    rules(validateStream([ev('run.finished', { run: 'r', seq: 1 }), ev('run.failed', { run: 'r', seq: 0, epoch: 1, data: { reason: 'error' } })])),
    ['stream.run-terminal-duplicate'],
  );
  assert.deepEqual(rules(validateStream([ev('session.ended', { seq: 1 }), ev('session.ended', { seq: 2 })])), ['stream.session-ended-duplicate']);
});

test('attention lifecycle: terminal exclusivity and requests closed before session.ended', () => {
  const req = ev('attention.requested', { data: { kind: 'permission', prompt: 'p' } });
  const res = ev('attention.resolved', { subject: req['id'], data: { resolution: 'answered' } });
  const tmo = ev('attention.timeout', { subject: req['id'] });
  assert.deepEqual(rules(validateStream([req, res, tmo])), ['stream.attention-terminal-duplicate']);
  const req2 = ev('attention.requested', { data: { kind: 'input', prompt: 'p' } });
  const end = ev('session.ended');
  assert.deepEqual(rules(validateStream([req2, end])), ['stream.attention-open-at-session-end']);
  const req3 = ev('attention.requested', { data: { kind: 'input', prompt: 'p' } });
  assert.deepEqual(
    rules(validateStream([req3, ev('attention.resolved', { subject: req3['id'], data: { resolution: 'dismissed' } }), ev('session.ended')])),
    [],
  );
});

test('two different acks for one command are stream.ack-conflict', () => {
  assert.deepEqual(rules(validateStream([ev('control.accepted', { cause: 'CMD1' }), ev('control.rejected', { cause: 'CMD1', data: { reason: 'busy' } })])), [
    'stream.ack-conflict',
  ]);
});

const FIELDS = [
  { id: '1', type: 'string', label: '1', required: true },
  { id: '2', type: 'number', label: '2' },
  {
    id: '3',
    type: 'select',
    label: '3',
    choices: [
      { id: 'a', label: 'a' },
      { id: 'b', label: 'b' },
    ],
  },
  { id: '4', type: 'select', label: '4', other: true, multi: true, choices: [{ id: 'x', label: 'x' }] },
];

test('AEP-0006: an answered form is checked against its request (required field, forged choice)', () => {
  const req = ev('attention.requested', { data: { kind: 'form', prompt: 'p', fields: FIELDS } });
  const ans = (values: Record<string, unknown>) => ev('attention.answered', { subject: req['id'], capture: 'redacted', data: { answer: { values } } });
  assert.deepEqual(rules(validateStream([req, ans({ '1': 'txt', '2': 3, '3': 'a', '4': ['x', 'free'] })])), []);
  assert.deepEqual(rules(validateStream([req, ans({ '2': 3 })])), ['form.required-missing']);
  assert.deepEqual(rules(validateStream([req, ans({ '1': 'x', '3': 'zzz' })])), ['form.choice-forged']);
});

test('capture honesty of values at metadata needs the request: string field and other text are leaks', () => {
  const req = ev('attention.requested', { data: { kind: 'form', prompt: 'p', fields: FIELDS.map((f) => ({ ...f, required: false })) } });
  const ans = (values: Record<string, unknown>) => ev('attention.answered', { subject: req['id'], data: { answer: { values } } });
  assert.deepEqual(rules(validateStream([req, ans({ '2': 3, '3': 'a', '4': ['x'] })])), []);
  assert.deepEqual(rules(validateStream([req, ans({ '1': 'secret' })])), ['capture.values-free-text']);
  assert.deepEqual(rules(validateStream([req, ans({ '4': ['x', 'free text'] })])), ['capture.values-free-text']);
  // the command (foreign emitter, other source) is checked too, looked up by session + subject
  const cmd = {
    aep: '0.1',
    id: 'CMD9',
    type: 'control.attention.respond',
    subject: req['id'],
    time: '2026-08-01T09:00:00Z',
    source: 'aep://desk/agent/console',
    agent: 'console',
    session: 's1',
    data: { answer: { values: { '1': 'leak' } } },
  };
  assert.deepEqual(rules(validateStream([req, cmd])), ['capture.values-free-text']);
});

test('memory: the dedupe window is bounded', () => {
  const sv = new StreamValidator({ dedupeWindow: 100 });
  for (let i = 0; i < 1000; i++) sv.push(ev('progress.status', { seq: 10_000 + i }), i);
  assert.equal(sv.rememberedIds, 100);
});

test('fingerprint is content-sensitive and survives 100k-deep nesting', () => {
  assert.equal(fingerprint({ a: [1, 'x', null, true] }), fingerprint(JSON.parse('{"a":[1,"x",null,true]}')));
  assert.notEqual(fingerprint({ a: 1 }), fingerprint({ a: '1' }));
  assert.notEqual(fingerprint({ a: 1, b: 2 }), fingerprint({ b: 2, a: 1 }));
  const deep = JSON.parse('['.repeat(100_000) + ']'.repeat(100_000)) as unknown;
  assert.equal(typeof fingerprint(deep), 'number');
});

test('push never throws and ignores envelope-invalid events', () => {
  const sv = new StreamValidator();
  for (const x of [null, 1, 'x', [], {}, { aep: '0.1' }]) assert.deepEqual(sv.push(x, 0), []);
});

test('fingerprintText is exact on bytes, chunk-safe on long text and surrogate pairs', () => {
  assert.equal(fingerprintText('{"a":1}'), fingerprintText('{"a":1}'));
  assert.notEqual(fingerprintText('{"a":1}'), fingerprintText('{"a": 1}'));
  const long = 'x'.repeat(200_000) + '\u{1F600}'.repeat(50_000) + 'y';
  assert.equal(fingerprintText(long), fingerprintText(long.slice(0)));
  assert.notEqual(fingerprintText(long), fingerprintText(long.slice(0, -1) + 'z'));
  assert.notEqual(fingerprintText('x'.repeat(65_535) + '\u{1F600}'), fingerprintText('x'.repeat(65_535) + '\u{1F601}'));
  assert.equal(typeof fingerprintText(''), 'number');
});

// `aep validate` hashes the line bytes it read instead of re-encoding the decoded text (issue 19).
test('fingerprintAscii over the bytes of an ASCII text equals fingerprintText of the text; any non-ASCII byte gives -1', () => {
  const text = fc.oneof(
    fc.string({ unit: fc.integer({ min: 0, max: 0x7f }).map((c) => String.fromCharCode(c)), maxLength: 40 }),
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.string({ unit: 'grapheme', maxLength: 20 }),
  );
  fc.assert(
    fc.property(text, fc.uint8Array({ maxLength: 9 }), fc.uint8Array({ maxLength: 9 }), (s, before, after) => {
      // The text sits anywhere in a larger buffer (any alignment), between arbitrary bytes.
      const bytes = Buffer.concat([Buffer.from(before), Buffer.from(s), Buffer.from(after)]);
      const start = before.length;
      const end = start + Buffer.byteLength(s);
      const ascii = [...s].every((ch) => ch.charCodeAt(0) < 0x80);
      assert.equal(fingerprintAscii(bytes, start, end), ascii ? fingerprintText(s) : -1);
    }),
    { numRuns: Number(process.env['AEP_FUZZ_RUNS'] ?? 1000) },
  );
  // Past the 65,536-unit steps of fingerprintText, at every remainder modulo 4.
  for (const n of [65_535, 65_536, 65_537, 65_538, 65_539, 200_003]) {
    const s = 'ab{"c":1}'.repeat(Math.ceil(n / 9)).slice(0, n);
    const bytes = Buffer.from('x' + s);
    assert.equal(fingerprintAscii(bytes, 1, 1 + n), fingerprintText(s));
  }
  assert.equal(fingerprintAscii(Buffer.from('x'), 0, 0), fingerprintText(''));
});

test('raw mode: a repeat must be byte-identical (AEP-0001 §7.4)', () => {
  const sv = new StreamValidator({ rawFingerprints: true });
  const e = ev('progress.status', { seq: 100 });
  const a = JSON.stringify(e);
  assert.deepEqual(sv.push(e, 0, { raw: a }), []);
  assert.deepEqual(sv.push(JSON.parse(a) as unknown, 1, { raw: a }), []);
  assert.deepEqual(
    sv.push(JSON.parse(a) as unknown, 2, { raw: a.replace(':100', ': 100') }).map((i) => i.rule),
    ['stream.id-conflict'],
  );
});

test('memory: closed units per session are bounded; open requests are kept', () => {
  const sv = new StreamValidator({ dedupeWindow: 100 });
  let i = 0;
  const base = (type: string, extra: Record<string, unknown>) => ({
    aep: '0.1',
    id: `M${i}`,
    type,
    time: '2026-08-01T09:00:00Z',
    source: 'aep://m/agent/a/session/m',
    agent: 'a',
    session: 'm',
    seq: i++,
    ...extra,
  });
  const open = base('attention.requested', { data: { kind: 'input', prompt: 'p' } });
  sv.push(open, 0);
  for (let k = 0; k < 25_000; k++) {
    sv.push(base('control.accepted', { cause: `C${k}` }), i);
    sv.push(base('run.finished', { run: `R${k}` }), i);
  }
  // 25,000 acks and 25,000 run terminals: at most 10,000 of each kind are remembered.
  assert.ok(sv.footprint.closedUnits <= 20_000, `closed units held: ${sv.footprint.closedUnits}`);
  assert.ok(sv.footprint.closedUnits >= 18_000, `closed units held: ${sv.footprint.closedUnits}`);
  assert.equal(sv.footprint.openRequests, 1);
  assert.deepEqual(
    sv.push(base('session.ended', {}), i).map((x) => x.rule),
    ['stream.attention-open-at-session-end'],
  );
});
