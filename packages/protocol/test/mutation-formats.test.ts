// The hand-written JSON Schema formats behind every envelope check (AEP-0001 §5.1: `time` is an
// RFC 3339 date-time with offset, `source` an absolute URI) and the code-point length of
// minLength/maxLength, at every field boundary. From the mutation run (docs/testing.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import ajvUcs2length from 'ajv/dist/runtime/ucs2length.js';
import { isDateTime, isUri } from '@aep/protocol';
// Not exported by the package: the generated validators call it (schema-runtime.ts).
import { ucs2length } from '../src/schema-runtime.js';

const RUNS = Number(process.env['AEP_FUZZ_RUNS'] ?? 1000);
const ref = (ajvUcs2length as unknown as { default: (s: string) => number }).default;

test('date-time: every field at and past its bounds (RFC 3339 §5.6)', () => {
  const ok = [
    '0000-01-01T00:00:00Z',
    '9999-12-31T23:59:59Z',
    '2026-01-31T00:00:00Z',
    '2026-04-30T00:00:00Z',
    '2026-12-31T00:00:00Z',
    '2000-02-29T00:00:00Z',
    '2024-02-29T00:00:00Z',
    '2026-02-28T00:00:00Z',
    '2026-08-01T23:59:60Z',
    '2026-08-01T09:00:00.0Z',
    '2026-08-01T09:00:00.123456789+00:00',
    '2026-08-01T09:00:00+23:59',
    '2026-08-01T09:00:00-00:00',
    '2026-08-01t09:00:00z',
    '2026-08-01 09:00:00Z',
  ];
  const bad = [
    '2026-00-01T00:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-01-00T00:00:00Z',
    '2026-01-32T00:00:00Z',
    '2026-04-31T00:00:00Z',
    '2026-06-31T00:00:00Z',
    '2026-09-31T00:00:00Z',
    '2026-11-31T00:00:00Z',
    '1900-02-29T00:00:00Z',
    '2026-02-29T00:00:00Z',
    '2100-02-29T00:00:00Z',
    '2026-02-30T00:00:00Z',
    '2026-08-01T24:00:00Z',
    '2026-08-01T09:60:00Z',
    '2026-08-01T09:00:61Z',
    '2026-08-01T09:00:00.Z',
    '2026-08-01T09:00:00.5',
    '2026-08-01T09:00:00+24:00',
    '2026-08-01T09:00:00+00:60',
    '2026-08-01T09:00:00+0000',
    '2026-08-01T09:00:00+00:000',
    '2026-08-01T09:00:00Zx',
    '2026-08-01T09:00:00ZZ',
    '2026-08-01X09:00:00Z',
    '2026/08/01T09:00:00Z',
    '2026-08/01T09:00:00Z',
    '2026-08-01T09-00:00Z',
    '2026-08-01T09:00-00Z',
    '2a26-08-01T09:00:00Z',
    '20a6-08-01T09:00:00Z',
    '2026-0a-01T09:00:00Z',
    '2026-08-0aT09:00:00Z',
    '2026-08-01T0a:00:00Z',
    '2026-08-01T09:0a:00Z',
    '2026-08-01T09:00:0aZ',
    '2026-08-01T09:00:00+0a:00',
    '2026-08-01T09:00:00+00:0a',
    '2026-08-01T09:00:00*00:00',
    '2026-08-01T09:00:0Z',
    '',
    'Z',
  ];
  for (const s of ok) assert.equal(isDateTime(s), true, s);
  for (const s of bad) assert.equal(isDateTime(s), false, s);
});

test('uri: a scheme, a colon, and no whitespace, control or never-literal character', () => {
  for (const s of ['aep://h/agent/a', 'urn:x', 'a:', 'A1+.-:x', 'http://h/p?q=1#f', 'x:%20']) assert.equal(isUri(s), true, s);
  for (const s of [
    '1a:x',
    '+a:x',
    ':x',
    'a',
    'a b:x',
    'a:b c',
    'a:\tb',
    'a:\u0000',
    'a:\u001f',
    'a:\u007f',
    'a:"',
    'a:<',
    'a:>',
    'a:\\',
    'a:^',
    'a:`',
    'a:{',
    'a:|',
    'a:}',
    'a:x\n',
    '',
  ]) {
    assert.equal(isUri(s), false, JSON.stringify(s));
  }
});

test('ucs2length counts code points exactly as ajv does (surrogate pairs once, lone surrogates once each)', () => {
  assert.equal(ucs2length(''), 0);
  assert.equal(ucs2length('abc'), 3);
  assert.equal(ucs2length('\u{1F600}'), 1);
  assert.equal(ucs2length('a\u{1F600}b'), 3);
  assert.equal(ucs2length('\uD83D'), 1);
  assert.equal(ucs2length('\uD83Da'), 2);
  assert.equal(ucs2length('\uDE00\uD83D'), 2);
  assert.equal(ucs2length('\uD83D\uD83D\uDE00'), 2);
  fc.assert(
    fc.property(fc.string({ unit: 'binary' }), (s) => ucs2length(s) === ref(s)),
    { numRuns: RUNS },
  );
});
