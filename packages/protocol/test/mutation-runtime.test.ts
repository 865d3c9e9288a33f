// The protocol's runtime helpers, from the mutation run (docs/testing.md "Mutation testing"):
// the envelope `time` check refuses every separator and digit that is not where RFC 3339 §5.6
// puts it (AEP-0001 §5.1); SHA-256 equals node:crypto's and canonical JSON equals JSON.stringify
// on arrays holding undefined or functions; monotonic ULIDs increase within a millisecond and when
// the clock goes back, advance with the clock, carry into the first random character, and refuse
// with stable codes and messages; resume tokens refuse a session that is not a string; the
// WebSocket type rule is "contains a dot"; AepError carries its name, code and message.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  AepError,
  isDateTime,
  validateEvent,
  sha256Hex,
  canonicalJson,
  digest,
  monotonicFactory,
  cryptoRandomSource,
  ulid,
  ulidTime,
  isUlid,
  formatResumeToken,
  parseResumeToken,
  isEventType,
  streamUrl,
} from '@aep/protocol';
import type { ResumePosition } from '@aep/protocol';

test('date-time: a character just below "0" in any two-digit field is refused (not read as a smaller number)', () => {
  // '/' is the code unit before '0': a digit check that forgets the lower bound of the second
  // digit would read "1/" as 9.
  const bad = [
    '2026-1/-01T09:00:00Z',
    '2026-08-1/T09:00:00Z',
    '2026-08-01T1/:00:00Z',
    '2026-08-01T09:1/:00Z',
    '2026-08-01T09:00:1/Z',
    '2/26-08-01T09:00:00Z',
    '202/-08-01T09:00:00Z',
    '2026-08-01T09:00:00+1/:00',
    '2026-08-01T09:00:00+00:1/',
    '/026-08-01T09:00:00Z',
    '2026-/8-01T09:00:00Z',
  ];
  for (const s of bad) assert.equal(isDateTime(s), false, s);
  assert.equal(isDateTime('2026-09-01T09:00:00Z'), true);
});

test('date-time: each separator is checked on its own (date dashes, time colons, the offset colon)', () => {
  for (const s of [
    '2026/08-01T09:00:00Z',
    '2026-08/01T09:00:00Z',
    '2026-08-01T09/00:00Z',
    '2026-08-01T09:00/00Z',
    '2026-08-01T09:00:00+00-00',
    '2026-08-01T09:00:00+00/00',
    '2026-08-01T09:00:00.5+00.00',
  ]) {
    assert.equal(isDateTime(s), false, s);
  }
  assert.equal(isDateTime('2026-08-01T09:00:00+00:00'), true);
  assert.equal(isDateTime('2026-08-01T09:00:00.5-12:30'), true);
});

test('date-time: month 0/13, day 0, hour 24, minute 60 and short strings are refused as the envelope time', () => {
  const EV = { aep: '0.1', id: 'E1', type: 'run.started', source: 'aep://h/agent/a', agent: 'a', session: 's', seq: 1, run: 'r' };
  assert.deepEqual(validateEvent({ ...EV, time: '2026-08-01T09:00:00Z' }), []);
  for (const time of [
    '2026-00-10T09:00:00Z',
    '2026-13-10T09:00:00Z',
    '2026-99-10T09:00:00Z',
    '2026-08-00T09:00:00Z',
    '2026-08-01T24:00:00Z',
    '2026-08-01T09:60:00Z',
    '2026-08-01T09:00Z',
    '2026-08-01T09:00:00',
    '26-08-01T09:00:00Z',
    '2026-08-01T09:00:00+0100',
    '2026-08-01T09:00:00+01',
  ]) {
    assert.deepEqual(
      validateEvent({ ...EV, time }).map((i) => [i.rule, i.path]),
      [['envelope.time', '/time']],
      time,
    );
  }
});

test('date-time: leap years are read from all four year digits', () => {
  for (const s of ['2024-02-29T00:00:00Z', '2000-02-29T00:00:00Z', '1996-02-29T00:00:00Z', '0400-02-29T00:00:00Z', '0004-02-29T00:00:00Z']) {
    assert.equal(isDateTime(s), true, s);
  }
  for (const s of ['2023-02-29T00:00:00Z', '1900-02-29T00:00:00Z', '2100-02-29T00:00:00Z', '0100-02-29T00:00:00Z', '2026-02-29T00:00:00Z']) {
    assert.equal(isDateTime(s), false, s);
  }
});

test('sha256 equals node:crypto on every length around the padding boundaries and on multi-block input', () => {
  const ref = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
  for (let n = 0; n <= 200; n++) {
    const b = Uint8Array.from({ length: n }, (_, i) => (i * 131 + n) & 0xff);
    assert.equal(sha256Hex(b), ref(b), `length ${n}`);
  }
  const big = Uint8Array.from({ length: 70_001 }, (_, i) => (i * 7919) & 0xff);
  assert.equal(sha256Hex(big), ref(big));
  for (const s of ['', 'abc', 'é\u{1F600}', 'x'.repeat(1000)]) assert.equal(sha256Hex(s), createHash('sha256').update(s, 'utf8').digest('hex'), s);
});

test('canonical JSON of arrays holding undefined or functions writes null, as JSON.stringify does', () => {
  const fn = () => 1;
  const v = [undefined, fn, 1, [undefined], { a: undefined, b: fn, c: [fn] }];
  assert.equal(canonicalJson(v), JSON.stringify(v));
  assert.equal(canonicalJson(v), '[null,null,1,[null],{"c":[null]}]');
  assert.equal(digest([undefined]), digest([null]));
  assert.equal(canonicalJson(undefined), 'null');
  assert.equal(canonicalJson(fn), 'null');
});

/** A random source that returns `values` in order (then repeats the last). */
function scripted(values: number[]): () => number {
  let i = 0;
  return () => values[Math.min(i++, values.length - 1)]!;
}

test('monotonic ULIDs: same millisecond -> the random part + 1; a later millisecond -> its own time and fresh randomness', () => {
  const f = monotonicFactory(scripted([0]));
  const a = f(1000);
  const b = f(1000);
  const c = f(2000);
  assert.equal(a, '00000000Z8' + '0000000000000000');
  assert.equal(b, '00000000Z8' + '0000000000000001');
  assert.equal(ulidTime(c), 2000);
  assert.equal(c, '00000001YG' + '0000000000000000');
  assert.ok(a < b && b < c);
});

test('monotonic ULIDs: when the clock goes back the time part stays at the last one seen and ids keep increasing', () => {
  const f = monotonicFactory(scripted([0.5]));
  const a = f(5000);
  const b = f(4000);
  const c = f(4999);
  assert.equal(ulidTime(a), 5000);
  assert.equal(ulidTime(b), 5000);
  assert.equal(ulidTime(c), 5000);
  assert.equal(a.slice(10), 'GGGGGGGGGGGGGGGG');
  assert.equal(b.slice(10), 'GGGGGGGGGGGGGGGH');
  assert.equal(c.slice(10), 'GGGGGGGGGGGGGGGJ');
  assert.ok(a < b && b < c);
  assert.ok([a, b, c].every(isUlid));
});

test('monotonic ULIDs: the increment carries through every Z into the first random character', () => {
  // First character 0, the other fifteen Z.
  const f = monotonicFactory(scripted([0, ...Array<number>(15).fill(31 / 32)]));
  const a = f(7);
  assert.equal(a.slice(10), '0ZZZZZZZZZZZZZZZ');
  assert.equal(f(7).slice(10), '1000000000000000');
});

test('monotonic ULIDs: 2^80 ids in one millisecond is AEP_ULID_OVERFLOW, with its message', () => {
  const f = monotonicFactory(scripted([0.99999]));
  assert.equal(f(9).slice(10), 'ZZZZZZZZZZZZZZZZ');
  assert.throws(
    () => f(9),
    (e: unknown) =>
      e instanceof AepError && e.name === 'AepError' && e.code === 'AEP_ULID_OVERFLOW' && e.message === 'ULID random part overflowed within one millisecond',
  );
});

test('a ULID time outside [0, 2^48-1] is AEP_ULID_TIME naming the time, also as the first call of a monotonic factory', () => {
  for (const t of [-5, -1, 2 ** 48, 1.5, NaN]) {
    const expected = { name: 'AepError', code: 'AEP_ULID_TIME', message: `ULID time must be an integer in [0, 2^48-1] ms, got ${String(t)}` };
    assert.throws(() => ulid(t, () => 0), expected, String(t));
    assert.throws(() => monotonicFactory(() => 0)(t), expected, `monotonic ${String(t)}`);
  }
});

test('cryptoRandomSource without globalThis.crypto is AEP_NO_RANDOM, with its message', () => {
  const desc = Object.getOwnPropertyDescriptor(globalThis, 'crypto')!;
  for (const replacement of [undefined, {}]) {
    Object.defineProperty(globalThis, 'crypto', { value: replacement, configurable: true, writable: true });
    try {
      assert.throws(() => cryptoRandomSource(), {
        name: 'AepError',
        code: 'AEP_NO_RANDOM',
        message: 'globalThis.crypto.getRandomValues is not available; pass a random source',
      });
    } finally {
      Object.defineProperty(globalThis, 'crypto', desc);
    }
  }
  assert.equal(typeof cryptoRandomSource()(), 'number');
});

test('formatResumeToken refuses a session that is not a non-empty string (a caller bug, AEP-0001 §7.6)', () => {
  for (const session of [5, undefined, null, {}, '']) {
    assert.throws(() => formatResumeToken({ session, epoch: 0, seq: 0 } as unknown as ResumePosition), {
      name: 'AepError',
      code: 'AEP_RESUME_INVALID',
      message: 'resume token: session must be a non-empty string (AEP-0001 §7.6)',
    });
  }
  assert.equal(formatResumeToken({ session: 'a:b', epoch: 1, seq: 2 }), 'a:b:1:2');
  for (const s of ['', ':', '::', ':1:2', '1:2', 'nocolon']) assert.equal(parseResumeToken(s), undefined, s);
});

test('isEventType: any dot makes a type an Event, also a leading one (AEP-0003 §2)', () => {
  assert.equal(isEventType('.x'), true);
  assert.equal(isEventType('run.started'), true);
  assert.equal(isEventType('hello'), false);
});

test('streamUrl without `from` carries no from parameter', () => {
  assert.equal(streamUrl('http://h:1/x?y#z'), 'http://h:1/stream');
  assert.equal(streamUrl('http://h:1', { capture: 'full' }), 'http://h:1/stream?capture=full');
  assert.equal(streamUrl('http://h:1', { from: 'all' }), 'http://h:1/stream?from=all');
});

test('AepError: an Error named AepError with its stable code and message', () => {
  const e = new AepError('AEP_X', 'the rule');
  assert.ok(e instanceof Error);
  assert.equal(e.name, 'AepError');
  assert.equal(e.code, 'AEP_X');
  assert.equal(e.message, 'the rule');
  assert.equal(String(e), 'AepError: the rule');
});
