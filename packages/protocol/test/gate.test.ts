// gateFormValues / structuralValues / gateAnswer details (AEP-0002 §5.3).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gateFormValues, structuralValues, gateAnswer, REDACTED_SECRET, REDACTED_PII } from '@aep/protocol';
import type { FieldSpec } from '@aep/protocol';

const fields: FieldSpec[] = [
  { id: 'name', type: 'string', label: 'Name' },
  { id: 'n', type: 'number', label: 'N' },
  { id: 'ok', type: 'boolean', label: 'OK' },
  {
    id: 'pick',
    type: 'select',
    label: 'Pick',
    other: true,
    choices: [
      { id: 'a@b.example.org', label: 'weird id' },
      { id: 'x', label: 'X' },
    ],
  },
];

test('an unknown ceiling gates like metadata (conservative)', () => {
  assert.deepEqual(gateFormValues(fields, { name: 't', n: 1 }, 'bogus' as never), { n: 1 });
});

test('values that are not an object give {}', () => {
  for (const v of [null, [], 'x', 3, undefined]) assert.deepEqual(gateFormValues(fields, v, 'full'), {});
});

test('the key __proto__ stays an own data key and never changes the prototype', () => {
  const f: FieldSpec[] = [{ id: '__proto__', type: 'number', label: 'p' }];
  const out = gateFormValues(f, JSON.parse('{"__proto__": 5}'), 'metadata');
  assert.equal(Object.getPrototypeOf(out), Object.prototype);
  assert.equal(JSON.stringify(out), '{"__proto__":5}');
  assert.equal(JSON.stringify(structuralValues(JSON.parse('{"__proto__": true, "s": "x"}'))), '{"__proto__":true}');
});

test('the input is not mutated and the result is a new object', () => {
  const values = { name: 'x', n: 1 };
  const out = gateFormValues(fields, values, 'full');
  assert.notEqual(out, values);
  assert.deepEqual(values, { name: 'x', n: 1 });
});

test('structuralValues keeps only numbers and booleans (the hop rule)', () => {
  assert.deepEqual(structuralValues({ a: 1, b: false, c: 'x', d: ['1'], e: null, f: { g: 1 } }), { a: 1, b: false });
});

test('gateAnswer at metadata: option kept, text dropped, values gated with the field_spec', () => {
  assert.deepEqual(gateAnswer({ option: 'deny', text: 'because', values: { name: 'x', n: 2, pick: 'x' } }, 'metadata', { fields }), {
    option: 'deny',
    values: { n: 2, pick: 'x' },
  });
});

test('gateAnswer without fields uses the hop rule below redacted and keeps everything at redacted+', () => {
  assert.deepEqual(gateAnswer({ values: { a: 'x', b: 1 } }, 'metadata'), { values: { b: 1 } });
  assert.deepEqual(gateAnswer({ values: { a: 'x', b: 1 } }, 'full'), { values: { a: 'x', b: 1 } });
});

test('gateAnswer at redacted runs the pipeline on text and free-text values, not on choice ids', () => {
  const a = gateAnswer({ text: 'token=abc mail me@x.org', values: { name: 'me@x.org', pick: 'a@b.example.org', n: 3 } }, 'redacted', { fields });
  assert.deepEqual(a, { text: `token=${REDACTED_SECRET} mail ${REDACTED_PII}`, values: { name: REDACTED_PII, pick: 'a@b.example.org', n: 3 } });
  const other = gateAnswer({ values: { pick: 'call me@x.org' } }, 'redacted', { fields });
  assert.deepEqual(other, { values: { pick: `call ${REDACTED_PII}` } });
});

test('gateAnswer at full is verbatim; a non-object answer gives {}', () => {
  assert.deepEqual(gateAnswer({ option: 'a', text: 'me@x.org', values: { name: 'me@x.org' } }, 'full', { fields }), {
    option: 'a',
    text: 'me@x.org',
    values: { name: 'me@x.org' },
  });
  assert.deepEqual(gateAnswer(null, 'full'), {});
  assert.deepEqual(gateAnswer({ text: 'x' }, 'none'), {});
});
