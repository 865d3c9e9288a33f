// Form answers, second pass (AEP-0002 §5.3, AEP-0006, docs/testing.md "Mutation testing"): the
// string formats refuse anything that is not the whole value in the format (no prefix, no
// trailer), string constraints count Unicode code points at the exact surrogate boundaries, a
// one-sided length constraint checks only its side, non-strict mode adds no hardening issue,
// and the two refusal options every form accepts are exactly `decline` and `cancel`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateFormAnswer, matchesFormat, codePointLength, pointer, FORM_DECLINE_OPTION, FORM_CANCEL_OPTION, FORM_REFUSAL_OPTIONS } from '@aep/protocol';
import type { FieldSpec, FormConstraints } from '@aep/protocol';

const S: FieldSpec[] = [{ id: 's', type: 'string', label: 'S' }];
const rules = (values: Record<string, unknown>, constraints: FormConstraints, strict = true): string[] =>
  validateFormAnswer(S, values, { constraints, strict }).map((i) => i.rule);

test('email: a local part of several characters is accepted, one without a domain or with spaces is not', () => {
  for (const ok of ['ab@x.y', 'first.last+tag@example.org', 'a@b']) {
    assert.deepEqual(rules({ s: ok }, { s: { format: 'email' } }), [], ok);
    assert.equal(matchesFormat('email', ok), true, ok);
  }
  for (const bad of ['@x.y', 'ab@', 'a b@x.y', 'ab@x y', 'a@b@c', 'ab']) {
    assert.deepEqual(rules({ s: bad }, { s: { format: 'email' } }), ['form.format'], bad);
  }
});

test('date-time form answers: the whole value is the timestamp, fractions of any length, nothing before or after', () => {
  const fmt = { s: { format: 'date-time' as const } };
  for (const ok of ['2026-01-01T00:00Z', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00.5Z', '2026-01-01T00:00:00.123456+02:00', '2026-01-01 00:00-05:30']) {
    assert.deepEqual(rules({ s: ok }, fmt), [], ok);
  }
  for (const bad of [
    'xx2026-01-01T00:00Z',
    ' 2026-01-01T00:00Z',
    '2026-01-01T00:00Zjunk',
    '2026-01-01T00:00Z ',
    '2026-01-01T00:00:00+02:00x',
    '2026-01-01T00:00:00.Z',
    '2026-01-01T00:00:00.12a3Z',
  ]) {
    assert.deepEqual(rules({ s: bad }, fmt), ['form.format'], bad);
  }
});

test('codePointLength: a surrogate pair is one code point only when a high surrogate (D800-DBFF) precedes a low one (DC00-DFFF)', () => {
  const cases: [string, number][] = [
    ['', 0],
    ['abc', 3],
    ['\u{1F600}', 1],
    ['a\u{1F600}b', 3],
    ['\uD800\uDC00', 1], // lowest pair
    ['\uDBFF\uDFFF', 1], // highest pair
    ['\uD800\uDFFF', 1],
    ['\uDBFF\uDC00', 1],
    ['\uD83D', 1], // lone high surrogate at the end
    ['\uD83Da', 2], // high surrogate followed by a non-surrogate
    ['\uD800\uE000', 2], // high surrogate followed by the first code unit past the low range
    ['\uD800\uDBFF', 2], // two high surrogates
    ['a\uDC00', 2], // lone low surrogate after an ordinary character
    ['\uDC00\uDC00', 2], // two lone low surrogates
    ['\uE000\uDC00', 2], // a private-use character followed by a lone low surrogate
    ['\uD7FF\uDC00', 2], // the last code unit before the surrogates, then a lone low one
  ];
  for (const [text, n] of cases) {
    assert.equal(codePointLength(text), n, JSON.stringify(text));
    assert.equal(codePointLength(text), [...text].length, `${JSON.stringify(text)} as the string iterator counts`);
  }
});

test('minLength/maxLength count code points: an emoji is one, a lone surrogate is one', () => {
  // One emoji = 2 UTF-16 units, one code point.
  assert.deepEqual(rules({ s: '\u{1F600}' }, { s: { maxLength: 1 } }), []);
  assert.deepEqual(rules({ s: '\u{1F600}\u{1F600}' }, { s: { maxLength: 1 } }), ['form.too-long']);
  assert.deepEqual(rules({ s: '\u{1F600}\u{1F600}' }, { s: { minLength: 3 } }), ['form.too-short']);
  assert.deepEqual(rules({ s: '\uD800\uDC00' }, { s: { minLength: 2 } }), ['form.too-short']);
  // A lone low surrogate after a character is a code point of its own.
  assert.deepEqual(rules({ s: 'a\uDC00' }, { s: { minLength: 2, maxLength: 2 } }), []);
  assert.deepEqual(rules({ s: 'a\uDC00' }, { s: { maxLength: 1 } }), ['form.too-long']);
  assert.deepEqual(rules({ s: '\uD800\uE000' }, { s: { maxLength: 1 } }), ['form.too-long']);
});

test('a one-sided length constraint checks only its side', () => {
  assert.deepEqual(rules({ s: 'abcdef' }, { s: { minLength: 2 } }), []);
  assert.deepEqual(rules({ s: 'a' }, { s: { minLength: 2 } }), ['form.too-short']);
  assert.deepEqual(rules({ s: 'abcdef' }, { s: { maxLength: 2 } }), ['form.too-long']);
  assert.deepEqual(rules({ s: 'ab' }, { s: { maxLength: 2 } }), []);
});

test('constraints given as something other than a plain object of objects are ignored', () => {
  const fn = Object.assign(() => undefined, { s: { minLength: 5 } });
  for (const c of [fn, 'ss', 5, null, undefined, { s: 'minLength' }]) {
    assert.deepEqual(rules({ s: 'a' }, c as unknown as FormConstraints), [], String(c));
  }
});

test('an own entry that is undefined is named as undefined, not as "a undefined"', () => {
  const issues = validateFormAnswer(S, { s: undefined });
  assert.deepEqual(
    issues.map((i) => i.message),
    ['form.type-mismatch: field "s" is a string field and its entry is undefined (project hardening)'],
  );
});

const MANY: FieldSpec[] = [
  {
    id: 'm',
    type: 'select',
    label: 'M',
    multi: true,
    choices: [
      { id: 'a', label: 'A' },
      { id: 'b', label: 'B' },
    ],
  },
];

test('non-strict mode reports no duplicate choices (hardening), only the MUST rules', () => {
  assert.deepEqual(validateFormAnswer(MANY, { m: ['a', 'a'] }, { strict: false }), []);
  assert.deepEqual(
    validateFormAnswer(MANY, { m: ['a', 'a'] }).map((i) => [i.rule, i.path]),
    [['form.duplicate-choice', '/data/answer/values/m/1']],
  );
});

test('repeated non-string elements of a multi select are forged choices, not duplicates', () => {
  assert.deepEqual(
    validateFormAnswer(MANY, { m: [1, 1] }).map((i) => [i.rule, i.path]),
    [
      ['form.choice-forged', '/data/answer/values/m/0'],
      ['form.choice-forged', '/data/answer/values/m/1'],
    ],
  );
});

test('a multi select answered with a non-string scalar is a forged choice only (the array rule is for strings)', () => {
  assert.deepEqual(
    validateFormAnswer(MANY, { m: 5 }).map((i) => i.rule),
    ['form.choice-forged'],
  );
  assert.deepEqual(
    validateFormAnswer(MANY, { m: 'a' }).map((i) => i.rule),
    ['form.type-mismatch'],
  );
});

test('pointer joins several parts with nothing between them, each escaped (RFC 6901)', () => {
  assert.equal(pointer('/base', 'a', 'b/c', 'd~e', 0), '/base/a/b~1c/d~0e/0');
  assert.equal(pointer('', 'x', 'y'), '/x/y');
  assert.equal(pointer('/base'), '/base');
});

test('the refusal options every form accepts are exactly decline and cancel (docs/decisions.md "Declining a form")', () => {
  assert.equal(FORM_DECLINE_OPTION, 'decline');
  assert.equal(FORM_CANCEL_OPTION, 'cancel');
  assert.deepEqual(FORM_REFUSAL_OPTIONS, ['decline', 'cancel']);
});
