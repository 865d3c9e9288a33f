// validateFormAnswer beyond the conformance corpus: robustness on malformed fields and values,
// issue paths (JSON pointers, base path), first-wins on duplicate field ids.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { validateFormAnswer, FORM_RULES } from '@aep/protocol';
import type { FieldSpec } from '@aep/protocol';

const fields: FieldSpec[] = [
  { id: 'a/b~c', type: 'string', label: 'L', required: true },
  { id: 's', type: 'select', label: 'S', choices: [{ id: '1', label: 'one' }] },
];

test('issue paths are JSON pointers, prefixed with basePath', () => {
  const issues = validateFormAnswer(fields, { s: '9' }, { basePath: '/data/answer/values' });
  assert.deepEqual(issues.map((i) => [i.rule, i.path]), [
    ['form.required-missing', '/data/answer/values/a~1b~0c'],
    ['form.choice-forged', '/data/answer/values/s'],
  ]);
  for (const i of issues) {
    assert.equal(i.section, FORM_RULES[i.rule as keyof typeof FORM_RULES].section);
    assert.ok(i.message.startsWith(i.rule));
  }
});

test('every rule id is documented with a section and whether it is a MUST', () => {
  for (const [id, r] of Object.entries(FORM_RULES)) {
    assert.match(id, /^form\.[a-z-]+$/);
    assert.ok(r.section.length > 0 && r.meaning.length > 0 && typeof r.must === 'boolean');
  }
  assert.equal(FORM_RULES['form.required-missing'].must, true);
  assert.equal(FORM_RULES['form.choice-forged'].must, true);
});

test('duplicate field ids: the first definition wins', () => {
  const dup: FieldSpec[] = [{ id: 'x', type: 'number', label: 'n' }, { id: 'x', type: 'string', label: 's' }];
  assert.deepEqual(validateFormAnswer(dup, { x: 3 }), []);
  assert.equal(validateFormAnswer(dup, { x: 'three' })[0]?.rule, 'form.type-mismatch');
});

test('malformed fields are ignored, never a crash', () => {
  const junk = [null, 1, 'x', {}, { id: 5 }, { id: 'ok', type: 'weird', label: 'w' }, { id: 's', type: 'select', label: 'l', choices: 'nope' }];
  assert.deepEqual(validateFormAnswer(junk, { ok: 'anything' }), []);
  assert.equal(validateFormAnswer(junk, { s: 'x' })[0]?.rule, 'form.choice-forged', 'a select without usable choices accepts no id');
  assert.deepEqual(validateFormAnswer('not an array', {}), []);
});

test('never throws on arbitrary fields and values', () => {
  fc.assert(fc.property(fc.jsonValue({ maxDepth: 3 }), fc.jsonValue({ maxDepth: 3 }), fc.boolean(), (f, v, strict) => {
    const issues = validateFormAnswer(f, v, { strict });
    assert.ok(Array.isArray(issues));
    for (const i of issues) assert.ok(i.rule in FORM_RULES);
  }), { numRuns: Number(process.env['AEP_FUZZ_RUNS'] ?? 500) });
});

test('a required field answered with null is present (rule 1) but mistyped (hardening)', () => {
  assert.deepEqual(validateFormAnswer(fields, { 'a/b~c': null }, { strict: false }), []);
  assert.equal(validateFormAnswer(fields, { 'a/b~c': null })[0]?.rule, 'form.type-mismatch');
});

test('non-finite numbers are a type mismatch; min/max ignored on non-number fields', () => {
  const f: FieldSpec[] = [{ id: 'n', type: 'number', label: 'n', min: 0 }, { id: 't', type: 'string', label: 't', min: 5 } as FieldSpec];
  assert.equal(validateFormAnswer(f, { n: Infinity })[0]?.rule, 'form.type-mismatch');
  assert.deepEqual(validateFormAnswer(f, { t: 'x' }), []);
});
