// The stream validator's allocation-free verdict of the two form MUST rules (issue 19) must be
// exactly the full validator's: it may skip `validateFormAnswer` only when that would report
// neither `form.required-missing` nor `form.choice-forged` (what `aep validate` flags).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { validateFormAnswer, indexFields } from '@aep/protocol';
import type { FieldSpec } from '@aep/protocol';
import { formAnswerMustHold } from '../src/forms.js';

function fullVerdict(fields: unknown, values: Record<string, unknown>): boolean {
  return !validateFormAnswer(fields, values, { strict: false }).some((i) => i.rule === 'form.required-missing' || i.rule === 'form.choice-forged');
}

const ids = fc.constantFrom('1', '2', '3', 'zz', 'a', '__proto__', 'toString', 'a/b~c', '');
const choice = fc.oneof(
  { weight: 6, arbitrary: fc.record({ id: ids, label: fc.string({ maxLength: 3 }) }) },
  { weight: 1, arbitrary: fc.record({ id: fc.integer(), label: fc.string({ maxLength: 3 }) }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 1 }) },
);
const field = fc.record(
  {
    id: ids,
    type: fc.constantFrom('string', 'number', 'boolean', 'select', 'select', 'other'),
    label: fc.string({ maxLength: 3 }),
    required: fc.option(fc.oneof(fc.boolean(), fc.constant('yes' as unknown as boolean)), { nil: undefined }),
    multi: fc.option(fc.boolean(), { nil: undefined }),
    other: fc.option(fc.oneof(fc.boolean(), fc.constant(1 as unknown as boolean)), { nil: undefined }),
    choices: fc.option(
      fc.oneof({ weight: 5, arbitrary: fc.array(choice, { maxLength: 4 }) }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 1 }) as fc.Arbitrary<never> }),
      { nil: undefined },
    ),
  },
  { requiredKeys: ['id', 'type', 'label'] },
);
const fieldsArb = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.array(fc.oneof({ weight: 8, arbitrary: field as fc.Arbitrary<unknown> }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 1 }) }), {
      maxLength: 6,
    }),
  },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
);
const entry = fc.oneof(ids, fc.array(fc.oneof(ids, fc.integer(), fc.constant(null)), { maxLength: 4 }), fc.jsonValue({ maxDepth: 1 }));

/** A plausible answer: an entry for most fields, chosen from the field's own choices. */
function answerFor(fields: unknown, pick: number[]): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  if (!Array.isArray(fields)) return values;
  fields.forEach((f: unknown, i) => {
    if (typeof f !== 'object' || f === null || Array.isArray(f)) return;
    const spec = f as FieldSpec;
    if (typeof spec.id !== 'string') return;
    const n = pick[i % pick.length] ?? 0;
    const cs = Array.isArray(spec.choices)
      ? (spec.choices as unknown[]).filter((c): c is { id: string } => typeof c === 'object' && c !== null && typeof (c as { id?: unknown }).id === 'string')
      : [];
    if (spec.type === 'select')
      values[spec.id] = cs.length === 0 ? 'x' : spec.multi === true ? cs.slice(0, 1 + (n % cs.length)).map((c) => c.id) : cs[n % cs.length]!.id;
    else if (spec.type === 'number') values[spec.id] = n;
    else if (spec.type === 'boolean') values[spec.id] = n % 2 === 0;
    else values[spec.id] = 'text';
  });
  return values;
}

test('formAnswerMustHold agrees with validateFormAnswer (strict: false) on random fields and values', () => {
  fc.assert(
    fc.property(fieldsArb, fc.dictionary(ids, entry, { maxKeys: 6 }), (fields, values) => {
      assert.equal(formAnswerMustHold(indexFields(fields), values), fullVerdict(fields, values));
    }),
    { numRuns: 3000 },
  );
});

test('formAnswerMustHold agrees on answers built from the request, then mutated', () => {
  const mutation = fc.oneof(
    fc.record({ op: fc.constant('delete' as const), key: ids }),
    fc.record({ op: fc.constant('set' as const), key: ids, value: entry }),
    fc.record({ op: fc.constant('none' as const) }),
  );
  fc.assert(
    fc.property(fieldsArb, fc.array(fc.nat(7), { minLength: 1, maxLength: 6 }), fc.array(mutation, { maxLength: 3 }), (fields, pick, muts) => {
      const values = answerFor(fields, pick);
      for (const m of muts) {
        if (m.op === 'delete') delete values[m.key];
        else if (m.op === 'set') Object.defineProperty(values, m.key, { value: m.value, enumerable: true, writable: true, configurable: true });
      }
      assert.equal(formAnswerMustHold(indexFields(fields), values), fullVerdict(fields, values));
    }),
    { numRuns: 3000 },
  );
});

test('formAnswerMustHold: the cases the property relies on, by hand', () => {
  const fields: FieldSpec[] = [
    { id: 'r', type: 'string', label: 'R', required: true },
    { id: 's', type: 'select', label: 'S', choices: [{ id: '1', label: 'one' }], multi: true },
    { id: 'o', type: 'select', label: 'O', other: true, choices: [] },
  ];
  const byId = indexFields(fields);
  assert.equal(formAnswerMustHold(byId, { r: 'x', s: ['1'], o: 'free' }), true);
  assert.equal(formAnswerMustHold(byId, { s: ['1'] }), false); // required missing
  assert.equal(formAnswerMustHold(byId, { r: 'x', s: ['1', '2'] }), false); // forged choice
  assert.equal(formAnswerMustHold(byId, { r: 'x', o: 3 }), false); // non-string even with other
  assert.equal(formAnswerMustHold(byId, { r: 'x', s: [], z: 1 }), true); // unknown keys are hardening only
});
