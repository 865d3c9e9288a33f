// Form answers (AEP-0002 §5.3, AEP-0006): each rule's message names the field, the rule and the
// kind of problem, never the submitted value (docs/security.md E-nack-echo); constraints as data
// (code-point lengths, formats, item counts, integers) at their boundaries; non-strict mode keeps
// only the MUST rules. From the mutation run (docs/testing.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateFormAnswer, matchesFormat, isStringFormat, codePointLength } from '@aep/protocol';
import type { FieldSpec } from '@aep/protocol';

const fields: FieldSpec[] = [
  { id: 'n', type: 'number', label: 'N', min: 1, max: 5 },
  { id: 'lo', type: 'number', label: 'Lo', min: 0 },
  { id: 'hi', type: 'number', label: 'Hi', max: 9 },
  { id: 'b', type: 'boolean', label: 'B' },
  { id: 's', type: 'string', label: 'S' },
  {
    id: 'one',
    type: 'select',
    label: 'One',
    choices: [
      { id: 'a', label: 'A' },
      { id: 'b', label: 'B' },
    ],
  },
  {
    id: 'many',
    type: 'select',
    label: 'Many',
    multi: true,
    choices: [
      { id: 'a', label: 'A' },
      { id: 'b', label: 'B' },
      { id: 'c', label: 'C' },
    ],
  },
  { id: 'free', type: 'select', label: 'Free', other: true, choices: [{ id: 'a', label: 'A' }] },
];
const SECRET = 'hunter2-secret-value';

function messages(values: Record<string, unknown>, opts: Parameters<typeof validateFormAnswer>[2] = {}): string[][] {
  const issues = validateFormAnswer(fields, values, opts);
  for (const i of issues) assert.ok(!i.message.includes(SECRET), `${i.rule} repeats the submitted value`);
  return issues.map((i) => [i.rule, i.path, i.message]);
}

test('type mismatches name the field and the JSON type of the entry, not the entry', () => {
  const cases: [string, unknown, string][] = [
    ['n', SECRET, 'form.type-mismatch: field "n" is a number field and its entry is a string (project hardening)'],
    ['n', Infinity, 'form.type-mismatch: field "n" is a number field and its entry is a non-finite number (project hardening)'],
    ['b', 1, 'form.type-mismatch: field "b" is a boolean field and its entry is a number (project hardening)'],
    ['b', null, 'form.type-mismatch: field "b" is a boolean field and its entry is null (project hardening)'],
    ['s', [SECRET], 'form.type-mismatch: field "s" is a string field and its entry is an array (project hardening)'],
    ['s', { x: SECRET }, 'form.type-mismatch: field "s" is a string field and its entry is an object (project hardening)'],
    ['s', true, 'form.type-mismatch: field "s" is a string field and its entry is a boolean (project hardening)'],
  ];
  for (const [k, v, msg] of cases)
    assert.deepEqual(messages({ [k]: v }), [['form.type-mismatch', `/data/answer/values/${k}`, msg]], `${k}=${JSON.stringify(v)}`);
});

test('number ranges: inclusive bounds; the message says which side and the range', () => {
  assert.deepEqual(messages({ n: 1, lo: 0, hi: 9 }), []);
  assert.deepEqual(messages({ n: 5 }), []);
  assert.deepEqual(messages({ n: 0.5 }), [
    ['form.out-of-range', '/data/answer/values/n', 'form.out-of-range: field "n" takes numbers from 1 to 5, and its entry is below that (project hardening)'],
  ]);
  assert.deepEqual(messages({ n: 6 }), [
    ['form.out-of-range', '/data/answer/values/n', 'form.out-of-range: field "n" takes numbers from 1 to 5, and its entry is above that (project hardening)'],
  ]);
  assert.deepEqual(messages({ lo: -1 }), [
    [
      'form.out-of-range',
      '/data/answer/values/lo',
      'form.out-of-range: field "lo" takes numbers of at least 0, and its entry is below that (project hardening)',
    ],
  ]);
  assert.deepEqual(messages({ hi: 10 }), [
    [
      'form.out-of-range',
      '/data/answer/values/hi',
      'form.out-of-range: field "hi" takes numbers of at most 9, and its entry is above that (project hardening)',
    ],
  ]);
  assert.deepEqual(
    messages({ n: 2.5 }, { constraints: { n: { integer: true } } }).map((m) => m[2]),
    ['form.not-integer: field "n" takes whole numbers only and its entry has a fractional part'],
  );
  assert.deepEqual(messages({ n: 2 }, { constraints: { n: { integer: true } } }), []);
});

test('selects: forged ids, non-string entries, arrays for single selects, duplicates and bare strings for multi selects', () => {
  assert.deepEqual(messages({ one: SECRET }), [
    [
      'form.choice-forged',
      '/data/answer/values/one',
      'form.choice-forged: the entry of select field "one" is not one of its choice ids, and the field takes no other text (AEP-0002 §5.3 rule 2)',
    ],
  ]);
  assert.deepEqual(messages({ one: 3 }), [
    [
      'form.choice-forged',
      '/data/answer/values/one',
      'form.choice-forged: select field "one" is answered with a number; choice ids are strings (AEP-0002 §5.3 rule 2)',
    ],
  ]);
  assert.deepEqual(messages({ free: SECRET }), [], 'other text is fine on an `other` select');
  assert.deepEqual(
    messages({ free: 5 }).map((m) => m[0]),
    ['form.choice-forged'],
    'but not a non-string',
  );
  assert.deepEqual(messages({ one: ['a'] }), [
    [
      'form.array-for-single',
      '/data/answer/values/one',
      'form.array-for-single: select field "one" takes one choice; its entry is an array (project hardening)',
    ],
  ]);
  assert.deepEqual(messages({ many: ['a', 'b', 'a'] }), [
    [
      'form.duplicate-choice',
      '/data/answer/values/many/2',
      'form.duplicate-choice: multi select field "many" names the same entry twice (element 2) (project hardening)',
    ],
  ]);
  assert.deepEqual(messages({ many: 'a' }), [
    ['form.type-mismatch', '/data/answer/values/many', 'form.type-mismatch: multi select field "many" must be answered with an array (project hardening)'],
  ]);
  assert.deepEqual(
    messages({ many: ['a', SECRET] }).map((m) => [m[0], m[1]]),
    [['form.choice-forged', '/data/answer/values/many/1']],
  );
  assert.deepEqual(messages({ many: [] }), [], 'an empty multi answer with no count constraint');
});

test('item counts are inclusive and only apply to multi selects', () => {
  const c = { constraints: { many: { minItems: 1, maxItems: 2 }, one: { minItems: 2 } } };
  assert.deepEqual(messages({ many: ['a'] }, c), []);
  assert.deepEqual(messages({ many: ['a', 'b'] }, c), []);
  assert.deepEqual(messages({ many: [] }, c), [
    ['form.too-few-choices', '/data/answer/values/many', 'form.too-few-choices: field "many" needs at least 1 choices'],
  ]);
  assert.deepEqual(messages({ many: ['a', 'b', 'c'] }, c), [
    ['form.too-many-choices', '/data/answer/values/many', 'form.too-many-choices: field "many" takes at most 2 choices'],
  ]);
  assert.deepEqual(messages({ one: 'a' }, c), []);
});

test('string lengths count code points, bounds inclusive; formats are checked and named', () => {
  const c = { constraints: { s: { minLength: 2, maxLength: 3 } } };
  assert.deepEqual(messages({ s: 'ab' }, c), []);
  assert.deepEqual(messages({ s: '\u{1F600}\u{1F600}\u{1F600}' }, c), [], 'three emoji are three characters');
  assert.deepEqual(messages({ s: 'a' }, c), [['form.too-short', '/data/answer/values/s', 'form.too-short: field "s" needs at least 2 characters']]);
  assert.deepEqual(messages({ s: 'abcd' }, c), [['form.too-long', '/data/answer/values/s', 'form.too-long: field "s" takes at most 3 characters']]);
  assert.deepEqual(messages({ s: SECRET }, { constraints: { s: { format: 'email' } } }), [
    ['form.format', '/data/answer/values/s', 'form.format: field "s" must be a valid email'],
  ]);
  assert.deepEqual(messages({ s: SECRET }, { constraints: { s: { format: 'ipv4' as never } } }), [
    ['form.format', '/data/answer/values/s', 'form.format: field "s" must be a valid value of its format'],
  ]);
  assert.deepEqual(messages({ s: 'a@b' }, { constraints: { s: { format: 'email' } } }), []);
  assert.deepEqual(messages({ s: 'x' }, { constraints: { s: 'not an object' as never } }), [], 'malformed constraints are ignored');
  assert.deepEqual(messages({ s: 'x' }, { constraints: null as never }), []);
  assert.equal(codePointLength('a\u{1F600}'), 2);
  assert.equal(codePointLength('\uD83D'), 1);
  assert.equal(codePointLength('\uD83Dx'), 2);
  assert.equal(codePointLength('\uD83D\uD83D'), 2);
  assert.equal(codePointLength(''), 0);
});

test('formats: each known format at its edges; unknown names match nothing', () => {
  const cases: [string, string, boolean][] = [
    ['email', 'a@b', true],
    ['email', 'a b@c', false],
    ['email', '@b', false],
    ['email', 'a@', false],
    ['email', 'a@b@c', false],
    ['email', 'x a@b', false],
    ['uri', 'https://x', true],
    ['uri', 'urn:a', true],
    ['uri', '1a:b', false],
    ['uri', 'a:b c', false],
    ['uri', 'no-colon', false],
    ['uri', ' a:b', false],
    ['date', '2026-08-01', true],
    ['date', '2026-8-01', false],
    ['date', '2026-08-01x', false],
    ['date', 'x2026-08-01', false],
    ['date-time', '2026-08-01T09:00Z', true],
    ['date-time', '2026-08-01 09:00:00.5+02:00', true],
    ['date-time', '2026-08-01t09:00:00z', true],
    ['date-time', '2026-08-01T09:00:00', false],
    ['date-time', '2026-08-01T09:00:00.Z', false],
    ['date-time', '2026-08-01T09Z', false],
    ['date-time', '2026-08-01T09:00:00+0200', false],
    ['ipv4', '1.2.3.4', false],
    ['toString', 'x', false],
    ['__proto__', 'x', false],
  ];
  for (const [f, s, want] of cases) assert.equal(matchesFormat(f, s), want, `${f} ${s}`);
  assert.ok(isStringFormat('email') && isStringFormat('date-time') && !isStringFormat('toString') && !isStringFormat(5));
});

test('non-strict mode keeps the MUST rules only: required, choice ids, values an object', () => {
  assert.deepEqual(
    validateFormAnswer(fields, { n: 'x', b: 1, s: 2, one: ['a'], many: 'a', zz: 1 }, { strict: false }).map((i) => i.rule),
    [],
  );
  assert.deepEqual(
    validateFormAnswer(fields, { one: 'zz' }, { strict: false }).map((i) => i.rule),
    ['form.choice-forged'],
  );
  assert.deepEqual(validateFormAnswer(fields, { s: 'a' }, { strict: false, constraints: { s: { minLength: 5 } } }), [], 'constraints are strict-only');
  assert.deepEqual(
    validateFormAnswer(fields, [], { strict: false }).map((i) => [i.rule, i.message]),
    [['form.values-not-object', 'form.values-not-object: `values` must be a JSON object keyed by field id (AEP-0002 §5.3)']],
  );
  assert.deepEqual(
    validateFormAnswer(fields, { zz: SECRET, yy: 1 }).map((i) => [i.rule, i.path, i.message]),
    [['form.unknown-key', '/data/answer/values', 'form.unknown-key: 2 keys of values match no field id of the request (project hardening)']],
  );
  assert.deepEqual(
    validateFormAnswer(fields, { zz: 1 }).map((i) => i.message),
    ['form.unknown-key: one key of values matches no field id of the request (project hardening)'],
  );
});
