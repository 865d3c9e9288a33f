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
  assert.deepEqual(
    issues.map((i) => [i.rule, i.path]),
    [
      ['form.required-missing', '/data/answer/values/a~1b~0c'],
      ['form.choice-forged', '/data/answer/values/s'],
    ],
  );
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
  const dup: FieldSpec[] = [
    { id: 'x', type: 'number', label: 'n' },
    { id: 'x', type: 'string', label: 's' },
  ];
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
  fc.assert(
    fc.property(fc.jsonValue({ maxDepth: 3 }), fc.jsonValue({ maxDepth: 3 }), fc.boolean(), (f, v, strict) => {
      const issues = validateFormAnswer(f, v, { strict });
      assert.ok(Array.isArray(issues));
      for (const i of issues) assert.ok(i.rule in FORM_RULES);
    }),
    { numRuns: Number(process.env['AEP_FUZZ_RUNS'] ?? 500) },
  );
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

test('paths default to /data/answer/values/<id>; an unknown key is reported at values itself, never named', () => {
  const issues = validateFormAnswer(fields, { 'a/b~c': 'x', 'hunter2-secret': 1, other: 2 });
  assert.deepEqual(
    issues.map((i) => [i.rule, i.path]),
    [['form.unknown-key', '/data/answer/values']],
  );
  assert.doesNotMatch(issues[0]!.message, /hunter2|other/);
  assert.match(issues[0]!.message, /2 keys/);
  assert.deepEqual(
    validateFormAnswer(fields, 'nope').map((i) => i.path),
    ['/data/answer/values'],
  );
  assert.deepEqual(
    validateFormAnswer(fields, {}, { basePath: '' }).map((i) => i.path),
    ['/a~1b~0c'],
  );
});

test('constraints passed as data: integer, lengths (code points), format, item counts; only on entries of the right type', () => {
  const f: FieldSpec[] = [
    { id: 'n', type: 'number', label: 'n' },
    { id: 't', type: 'string', label: 't' },
    { id: 'm', type: 'string', label: 'm' },
    { id: 'd', type: 'string', label: 'd' },
    {
      id: 'k',
      type: 'select',
      label: 'k',
      multi: true,
      choices: [
        { id: 'a', label: 'A' },
        { id: 'b', label: 'B' },
        { id: 'c', label: 'C' },
      ],
    },
  ];
  const constraints = {
    n: { integer: true },
    t: { minLength: 2, maxLength: 3 },
    m: { format: 'email' as const },
    d: { format: 'date-time' as const },
    k: { minItems: 1, maxItems: 2 },
  };
  const rules = (v: Record<string, unknown>) => validateFormAnswer(f, v, { constraints }).map((i) => `${i.rule} ${i.path}`);
  assert.deepEqual(rules({ n: 3, t: 'ab', m: 'a@b', d: '2026-01-01T00:00:00Z', k: ['a'] }), []);
  assert.deepEqual(rules({ n: 2.5 }), ['form.not-integer /data/answer/values/n']);
  assert.deepEqual(rules({ t: 'a' }), ['form.too-short /data/answer/values/t']);
  assert.deepEqual(rules({ t: '😀😀😀' }), [], 'three code points fit maxLength 3');
  assert.deepEqual(rules({ t: 'abcd' }), ['form.too-long /data/answer/values/t']);
  assert.deepEqual(rules({ m: 'not-an-address' }), ['form.format /data/answer/values/m']);
  assert.deepEqual(rules({ d: 'yesterday' }), ['form.format /data/answer/values/d']);
  assert.deepEqual(rules({ k: [] }), ['form.too-few-choices /data/answer/values/k']);
  assert.deepEqual(rules({ k: ['a', 'b', 'c'] }), ['form.too-many-choices /data/answer/values/k']);
  assert.deepEqual(rules({ n: 'x' }), ['form.type-mismatch /data/answer/values/n'], 'a mistyped entry is a type mismatch only');
  assert.deepEqual(validateFormAnswer(f, { n: 2.5, t: 'a' }, { constraints, strict: false }), [], 'constraints are hardening: off with strict:false');
  // Own properties only: a constraints object inheriting junk, or naming prototype keys, checks nothing extra.
  const proto = Object.create({ n: { integer: true } }) as Record<string, unknown>;
  assert.deepEqual(validateFormAnswer(f, { n: 2.5 }, { constraints: proto as never }), []);
  assert.deepEqual(validateFormAnswer([{ id: 'toString', type: 'number', label: 'x' }], { toString: 2.5 }, { constraints: {} }), []);
});

test('property: no message and no path ever repeats a submitted value or unknown key', () => {
  const f: FieldSpec[] = [
    { id: 's', type: 'string', label: 'S', required: true },
    { id: 'n', type: 'number', label: 'N', min: 0, max: 10 },
    { id: 'b', type: 'boolean', label: 'B' },
    { id: 'c', type: 'select', label: 'C', choices: [{ id: 'x', label: 'X' }] },
    { id: 'm', type: 'select', label: 'M', multi: true, other: true, choices: [{ id: 'x', label: 'X' }] },
  ];
  const constraints = { s: { minLength: 5, maxLength: 8, format: 'email' as const }, n: { integer: true }, m: { minItems: 2, maxItems: 2 } };
  const secret = fc.string({ minLength: 2, maxLength: 12 }).map((s) => `Ω${s}`);
  const val = fc.oneof(secret, fc.double(), fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.oneof(secret, fc.integer()), { maxLength: 4 }));
  const key = fc.oneof(fc.constantFrom('s', 'n', 'b', 'c', 'm'), secret);
  fc.assert(
    fc.property(fc.dictionary(key, val, { maxKeys: 7 }), (values) => {
      const submitted: string[] = [];
      for (const [k, v] of Object.entries(values)) {
        if (k.startsWith('Ω')) submitted.push(k);
        for (const x of Array.isArray(v) ? v : [v]) if (typeof x === 'string') submitted.push(x);
      }
      for (const i of validateFormAnswer(f, values, { constraints })) {
        assert.ok(i.rule in FORM_RULES, i.rule);
        for (const s of submitted) {
          assert.ok(!i.message.includes(s), `${i.message} repeats ${s}`);
          assert.ok(!i.path.includes(s), `${i.path} names ${s}`);
        }
      }
    }),
    { numRuns: Number(process.env['AEP_FUZZ_RUNS'] ?? 500) },
  );
});
