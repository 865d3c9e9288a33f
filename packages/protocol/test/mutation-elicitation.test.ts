// MCP elicitation mapping (AEP-0002 Annex A): the schema shapes an AEP form cannot
// express are refused with a reason naming the property and the problem (never mapped to a form
// that would accept something else), and answer values are restored to MCP types, or kept as
// given for the validator to explain. Written from the mutation run (docs/testing.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { elicitationToForm, formValuesToElicitationContent, validateElicitationContent } from '@aep/protocol';

const OPTS = { agent: 'bot', capture: 'full' as const };
const schemaOf = (properties: Record<string, unknown>, required?: unknown) => ({ type: 'object', properties, ...(required !== undefined ? { required } : {}) });

function refusal(params: unknown): string {
  const r = elicitationToForm(params, OPTS);
  assert.equal(r.ok, false, JSON.stringify(params));
  return r.ok ? '' : r.reason;
}

test('unmappable schemas: each refusal names the property and what an AEP form cannot express', () => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ p: { type: 'string', enum: ['a', 'b'], enumNames: ['A'] } }, /^property "p": enumNames must be strings, one per enum value$/],
    [{ p: { type: 'string', enum: ['a'], enumNames: [1] } }, /^property "p": enumNames must be strings/],
    [{ p: { type: 'string', enum: [] } }, /^property "p": enum must be a non-empty array of strings$/],
    [{ p: { type: 'string', enum: ['a', 'a'] } }, /^property "p": enum has duplicate values$/],
    [{ p: { type: 'string', minLength: Infinity } }, /^property "p": minLength\/maxLength must be finite numbers$/],
    [{ p: { type: 'string', maxLength: '3' } }, /^property "p": minLength\/maxLength must be finite numbers$/],
    [{ p: { type: 'string', format: 'ipv4' } }, /^property "p": format "ipv4" is not one of email, uri, date, date-time$/],
    [{ p: { type: 'string', enum: ['a'], oneOf: [] } }, /^property "p" has both "enum" and "oneOf"; ambiguous choice list$/],
    [{ p: { type: 'string', default: 3 } }, /^property "p": default must be a string$/],
    [{ p: { type: 'string', oneOf: [] } }, /^property "p" oneOf must be a non-empty array of \{const, title\}$/],
    [{ p: { type: 'string', oneOf: [{ const: 1 }] } }, /^property "p" oneOf items must be \{const: string, title: string\}$/],
    [{ p: { type: 'string', oneOf: [{ const: 'a', title: 2 }] } }, /^property "p" oneOf item titles must be strings$/],
    [{ p: { type: 'string', oneOf: [{ const: 'a' }, { const: 'a' }] } }, /^property "p" oneOf has duplicate const values$/],
    [{ p: { type: 'array' } }, /^property "p": an array property needs "items" \(a multi-select enum\)$/],
    [{ p: { type: 'array', items: { type: 'string', enum: ['a'] }, minItems: -Infinity } }, /^property "p": minItems\/maxItems must be finite numbers$/],
    [{ p: { type: 'array', items: { type: 'string', enum: ['a'] }, maxItems: null } }, /^property "p": minItems\/maxItems must be finite numbers$/],
    [{ p: { type: 'array', items: { type: 'string', enum: ['a'] }, default: 'a' } }, /^property "p": default must be an array of strings$/],
    [{ p: { type: 'array', items: { enum: ['a'], anyOf: [{ const: 'a' }] } } }, /^property "p": items has both "enum" and "anyOf"; ambiguous choice list$/],
    [{ p: { type: 'array', items: { anyOf: [{ const: 'a' }, { const: 'a' }] } } }, /^property "p" items\.anyOf has duplicate const values$/],
    [{ p: { type: 'array', items: { type: 'string', enum: ['a', 'a'] } } }, /^property "p": items\.enum has duplicate values$/],
    [{ p: { type: 'array', items: { type: 'string', enum: [] } } }, /^property "p": array items must be a string enum or an anyOf of \{const, title\}$/],
    [{ p: { type: 'array', items: { type: 'number', enum: ['a'] } } }, /^property "p": array items must be a string enum/],
    [{ p: { type: 'object' } }, /^property "p" has unsupported type "object" \(flat string, number, integer, boolean or enum only\)$/],
    [{ p: { type: 'number', minimum: 5, maximum: 4 } }, /^property "p": minimum is greater than maximum$/],
    [{ p: { type: 'number', minimum: Number.NaN } }, /^property "p": minimum\/maximum must be finite numbers$/],
    [{ p: { type: 'integer', default: Infinity } }, /^property "p": default must be a number$/],
    [{ p: { type: 'boolean', default: 'yes' } }, /^property "p": default must be a boolean$/],
    [{ p: { type: 'string', title: 3 } }, /^property "p" has a non-string title$/],
    [{ p: { type: 'string', description: {} } }, /^property "p" has a non-string description$/],
    [{ p: 'string' }, /^property "p" is not an object schema$/],
    [{ '': { type: 'string' } }, /^requestedSchema has an empty property key$/],
  ];
  for (const [properties, re] of cases) assert.match(refusal({ message: 'm', requestedSchema: schemaOf(properties) }), re, JSON.stringify(properties));
  assert.match(
    refusal({ message: 'm', requestedSchema: schemaOf({ a: { type: 'string' } }, ['b']) }),
    /^requestedSchema\.required names "b", which is not a property$/,
  );
  assert.match(refusal({ message: 'm', requestedSchema: schemaOf({}, 'a') }), /^requestedSchema\.required must be an array of strings$/);
  assert.match(refusal({ message: 'm', requestedSchema: { type: 'object', properties: [] } }), /^requestedSchema\.properties must be an object$/);
  assert.match(refusal({ message: 'm', requestedSchema: { type: 'array' } }), /^requestedSchema\.type must be "object"$/);
  assert.match(refusal({ message: 'm', requestedSchema: null }), /^requestedSchema is not an object$/);
  assert.match(refusal({ mode: 'url', message: 'm', requestedSchema: schemaOf({}) }), /^elicitation mode "url" is not form mode$/);
  assert.match(refusal({ message: 1, requestedSchema: schemaOf({}) }), /^elicitation message must be a string$/);
  assert.match(refusal([]), /^elicitation params are not an object$/);
  const r = elicitationToForm({ mode: 'form', message: 'm', requestedSchema: schemaOf({}) }, OPTS);
  assert.ok(r.ok, 'mode "form" is form mode');
});

test('mappable edges: labels fall back title -> description -> key; enumNames title the choices; counts and formats are kept as constraints', () => {
  const r = elicitationToForm(
    {
      message: 'm',
      requestedSchema: schemaOf(
        {
          t: { type: 'string', title: '  ', description: 'Described', minLength: 1, maxLength: 3, format: 'email' },
          k: { type: 'string', description: ' ' },
          e: { type: 'string', enum: ['a', 'b'], enumNames: ['Alpha', 'Beta'] },
          m: { type: 'array', items: { anyOf: [{ const: 'x', title: 'Ex' }, { const: 'y' }] }, minItems: 0, maxItems: 2 },
          n: { type: 'array', items: { type: 'string', enum: ['u'] } },
        },
        ['e'],
      ),
    },
    OPTS,
  );
  assert.ok(r.ok, r.ok ? '' : r.reason);
  if (!r.ok) return;
  const byId = Object.fromEntries(r.data.fields.map((f) => [f.id, f]));
  assert.equal(byId['t']!.label, 'Described');
  assert.equal(byId['k']!.label, 'k');
  assert.deepEqual(byId['e']!.choices, [
    { id: 'a', label: 'Alpha' },
    { id: 'b', label: 'Beta' },
  ]);
  assert.equal(byId['e']!.required, true);
  assert.equal(byId['t']!.required, false);
  assert.deepEqual(byId['m']!.choices, [
    { id: 'x', label: 'Ex' },
    { id: 'y', label: 'y' },
  ]);
  assert.equal(byId['m']!.multi, true);
  assert.equal(byId['n']!.multi, true);
  assert.deepEqual(r.constraints['t'], { minLength: 1, maxLength: 3, format: 'email' });
  assert.deepEqual(r.constraints['m'], { minItems: 0, maxItems: 2 });
  assert.equal(r.constraints['n'], undefined, 'no counts, no constraint entry');
  assert.equal(r.constraints['k'], undefined);
});

const TYPED = schemaOf({
  i: { type: 'integer' },
  n: { type: 'number' },
  b: { type: 'boolean' },
  s: { type: 'string' },
  e: { type: 'string', enum: ['a', 'b'] },
  m: { type: 'array', items: { type: 'string', enum: ['x', 'y'] } },
  d: { type: 'string', default: 'dflt' },
});

test('answer values are restored to MCP types; what cannot be restored is kept as given, never dropped', () => {
  assert.deepEqual(formValuesToElicitationContent(TYPED, { i: ' -42 ', n: ' 3.5', b: 'false', s: ['one'], e: 'a', m: 'x' }, { applyDefaults: false }), {
    i: -42,
    n: 3.5,
    b: false,
    s: 'one',
    e: 'a',
    m: ['x'],
  });
  assert.deepEqual(formValuesToElicitationContent(TYPED, { i: 7, n: 0, b: true, m: ['x', 'y'] }, { applyDefaults: false }), {
    i: 7,
    n: 0,
    b: true,
    m: ['x', 'y'],
  });
  assert.deepEqual(formValuesToElicitationContent(TYPED, { i: 'true' }, { applyDefaults: false }), { i: 'true' });
  assert.deepEqual(formValuesToElicitationContent(TYPED, { i: '9007199254740993', n: '', b: 'maybe', s: ['a', 'b'], m: [1] }, { applyDefaults: false }), {
    i: '9007199254740993',
    n: '',
    b: 'maybe',
    s: ['a', 'b'],
    m: [1],
  });
  assert.deepEqual(formValuesToElicitationContent(TYPED, { i: 3.5, n: Infinity, b: 'TRUE' }, { applyDefaults: false }), { i: 3.5, n: Infinity, b: 'TRUE' });
  assert.deepEqual(formValuesToElicitationContent(TYPED, { n: 'abc' }, { applyDefaults: false }), { n: 'abc' });
  assert.deepEqual(formValuesToElicitationContent(TYPED, { b: 'true' }, { applyDefaults: false }), { b: true });
  assert.deepEqual(
    formValuesToElicitationContent(TYPED, { s: null, e: undefined, zz: 'not a property' }, { applyDefaults: false }),
    {},
    'null, absent and unknown keys are left out',
  );
  assert.deepEqual(formValuesToElicitationContent(TYPED, {}), { d: 'dflt' }, 'defaults are applied by default');
  assert.deepEqual(formValuesToElicitationContent(TYPED, { d: 'mine' }), { d: 'mine' });
  assert.deepEqual(formValuesToElicitationContent(TYPED, 'not values', { applyDefaults: false }), {});
  assert.deepEqual(formValuesToElicitationContent({ type: 'array' }, { i: 1 }), {}, 'an unmappable schema gives nothing');
});

test('validateElicitationContent: an unmappable schema is one mcp-elicitation.schema issue at the base path, with the reason', () => {
  assert.deepEqual(
    validateElicitationContent({ type: 'array' }, {}).map((i) => [i.rule, i.path]),
    [['mcp-elicitation.schema', '/data/answer/values']],
  );
  const [issue] = validateElicitationContent({ type: 'array' }, {}, { basePath: '/content' });
  assert.equal(issue!.path, '/content');
  assert.match(issue!.message, /^mcp-elicitation\.schema: the requestedSchema cannot be mapped to a form: requestedSchema\.type must be "object"$/);
});

// The messages of validateElicitationContent (what the MCP bridge's rejection shows a person):
// each names the rule and the field and says what is wrong, never the submitted value.
test('validateElicitationContent: each message names its rule and field and what is wrong, not the value', () => {
  const schema = schemaOf({
    n: { type: 'number', minimum: 1, maximum: 5 },
    lo: { type: 'number', minimum: 1 },
    hi: { type: 'integer', maximum: 5 },
    b: { type: 'boolean' },
    s: { type: 'string', minLength: 2, maxLength: 3, format: 'email' },
    e: { type: 'string', enum: ['a', 'b'] },
    m: { type: 'array', items: { type: 'string', enum: ['x', 'y', 'z'] }, minItems: 2, maxItems: 2 },
  });
  const messages = (content: Record<string, unknown>) => validateElicitationContent(schema, content).map((i) => `${i.path} ${i.message}`);
  assert.deepEqual(messages({ n: 'SECRET1', b: 'SECRET2', s: 7, m: 'SECRET3' }), [
    '/data/answer/values/n form.type-mismatch: field "n" is a number field and its entry is not a number',
    '/data/answer/values/b form.type-mismatch: field "b" is a boolean field and its entry is not a boolean',
    '/data/answer/values/s form.type-mismatch: field "s" is a string field and its entry is not a string',
    '/data/answer/values/m form.type-mismatch: multi select field "m" must be answered with an array of choice ids',
  ]);
  assert.deepEqual(messages({ n: 0, lo: 0, hi: 6.5 }), [
    '/data/answer/values/n form.out-of-range: field "n" takes numbers from 1 to 5, and its entry is below that',
    '/data/answer/values/lo form.out-of-range: field "lo" takes numbers of at least 1, and its entry is below that',
    '/data/answer/values/hi form.not-integer: field "hi" takes whole numbers only and its entry has a fractional part',
    '/data/answer/values/hi form.out-of-range: field "hi" takes numbers of at most 5, and its entry is above that',
  ]);
  assert.deepEqual(messages({ n: 9, s: 'q', e: 'SECRET4', m: ['x', 'SECRET5', 'y'] }), [
    '/data/answer/values/n form.out-of-range: field "n" takes numbers from 1 to 5, and its entry is above that',
    '/data/answer/values/s form.too-short: field "s" needs at least 2 characters',
    '/data/answer/values/s form.format: field "s" must be a valid email',
    '/data/answer/values/e form.choice-forged: the entry of select field "e" is not one of its choice ids, and the field takes no other text (AEP-0002 §5.3 rule 2)',
    '/data/answer/values/m form.choice-forged: an element of multi select field "m" is not one of its choice ids (AEP-0002 §5.3 rule 2)',
    '/data/answer/values/m form.too-many-choices: field "m" takes at most 2 choices',
  ]);
  assert.deepEqual(
    validateElicitationContent(schemaOf({ r: { type: 'string' } }, ['r']), {}).map((i) => `${i.path} ${i.message}`),
    ['/data/answer/values/r form.required-missing: required field "r" has no entry in values (AEP-0002 §5.3 rule 1)'],
  );
  assert.deepEqual(messages({ s: 'a@b.example', m: ['x'] }), [
    '/data/answer/values/s form.too-long: field "s" takes at most 3 characters',
    '/data/answer/values/m form.too-few-choices: field "m" needs at least 2 choices',
  ]);
  for (const m of [...messages({ n: 'SECRET1', e: 'SECRET4', m: ['SECRET5'] })]) assert.doesNotMatch(m, /SECRET/);
});

test('elicitationToForm: the exact form, field map and constraints of a mixed schema (nothing set that the schema does not say)', () => {
  const r = elicitationToForm(
    {
      mode: 'form',
      message: 'm',
      requestedSchema: schemaOf(
        {
          i: { type: 'integer', minimum: 1, maximum: 9 },
          lo: { type: 'number', minimum: 0 },
          hi: { type: 'number', maximum: 2 },
          eq: { type: 'number', minimum: 3, maximum: 3 },
          free: { type: 'number' },
          b: { type: 'boolean' },
          m: { type: 'array', items: { type: 'string', enum: ['x', 'y'] } },
        },
        ['i'],
      ),
    },
    OPTS,
  );
  assert.ok(r.ok);
  assert.deepEqual(r.data.fields, [
    { id: 'i', type: 'number', label: 'i', required: true, min: 1, max: 9 },
    { id: 'lo', type: 'number', label: 'lo', required: false, min: 0 },
    { id: 'hi', type: 'number', label: 'hi', required: false, max: 2 },
    { id: 'eq', type: 'number', label: 'eq', required: false, min: 3, max: 3 },
    { id: 'free', type: 'number', label: 'free', required: false },
    { id: 'b', type: 'boolean', label: 'b', required: false },
    {
      id: 'm',
      type: 'select',
      label: 'm',
      required: false,
      multi: true,
      choices: [
        { id: 'x', label: 'x' },
        { id: 'y', label: 'y' },
      ],
    },
  ]);
  assert.deepEqual(r.fieldMap, {
    i: { key: 'i', kind: 'integer' },
    lo: { key: 'lo', kind: 'number' },
    hi: { key: 'hi', kind: 'number' },
    eq: { key: 'eq', kind: 'number' },
    free: { key: 'free', kind: 'number' },
    b: { key: 'b', kind: 'boolean' },
    m: { key: 'm', kind: 'multi-enum' },
  });
  assert.deepEqual(r.constraints, { i: { integer: true } }, 'only the integer field is whole numbers only');
});

test('elicitationToForm: a number default must be a number; every capture level maps, anything else is refused by name', () => {
  assert.equal(
    refusal({ mode: 'form', message: 'm', requestedSchema: schemaOf({ x: { type: 'number', default: 'x' } }) }),
    'property "x": default must be a number',
  );
  const params = { mode: 'form', message: 'm', requestedSchema: schemaOf({ x: { type: 'string' } }) };
  for (const capture of ['none', 'metadata', 'redacted', 'full'] as const) assert.equal(elicitationToForm(params, { agent: 'bot', capture }).ok, true, capture);
  const bad = elicitationToForm(params, { agent: 'bot', capture: 'secret' as 'full' });
  assert.deepEqual(bad, { ok: false, reason: 'capture "secret" is not a capture level' });
});

test('formValuesToElicitationContent: only plain decimal text becomes a number; anything else is kept for the validator', () => {
  const schema = schemaOf({ i: { type: 'integer' }, n: { type: 'number' }, s: { type: 'string' }, e: { type: 'string', enum: ['a', 'b'] } });
  const c = (values: Record<string, unknown>) => formValuesToElicitationContent(schema, values);
  assert.deepEqual(c({ i: ' 12 ', n: ' 2.5 ' }), { i: 12, n: 2.5 });
  for (const v of ['0x10', '1e3', '12abc', 'abc12', true]) assert.deepEqual(c({ i: v }), { i: v }, JSON.stringify(v));
  for (const v of ['   ', '', 'x']) assert.deepEqual(c({ n: v }), { n: v }, JSON.stringify(v));
  assert.deepEqual(c({ s: ['one'], e: ['a'] }), { s: 'one', e: 'a' }, 'a one-element list of a single field is its element');
  assert.deepEqual(c({ s: ['one', 'two'] }), { s: ['one', 'two'] }, 'a longer list is kept for the validator');
  assert.deepEqual(c({ s: [5] }), { s: [5] }, 'a one-element list of a non-string is kept whole');
});

test('validateElicitationContent: range and length edges are inside; a fraction is refused only by an integer field; one-sided limits', () => {
  const schema = schemaOf({
    n: { type: 'number', minimum: 1, maximum: 5 },
    i: { type: 'integer' },
    short: { type: 'string', minLength: 2 },
    long: { type: 'string', maxLength: 3 },
  });
  const rules = (content: Record<string, unknown>) => validateElicitationContent(schema, content).map((i) => `${i.rule} ${i.path.split('/').pop()}`);
  assert.deepEqual(rules({ n: 1 }), [], 'minimum itself is inside');
  assert.deepEqual(rules({ n: 5 }), [], 'maximum itself is inside');
  assert.deepEqual(rules({ n: 2.5 }), [], 'a number field takes fractions');
  assert.deepEqual(rules({ i: 2.5 }), ['form.not-integer i']);
  assert.deepEqual(rules({ short: 'ab', long: 'abc' }), [], 'exactly the limits');
  assert.deepEqual(rules({ short: 'a', long: 'abcd' }), ['form.too-short short', 'form.too-long long']);
  assert.deepEqual(rules({ short: '\u{1F600}\u{1F600}', long: '\u{1F600}\u{1F600}\u{1F600}' }), [], 'code points, not UTF-16 units');
});
