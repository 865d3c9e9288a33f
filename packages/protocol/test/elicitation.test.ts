// MCP elicitation <-> AEP form mapping (AEP-0002 Annex A; docs/integrations.md §3).
// The pinned shapes live in conformance/mappings/mcp-elicitation.json; this file covers the
// options, the capture boundary (property-based) and the content validator.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { elicitationToForm, formValuesToElicitationContent, validateElicitationContent, validateFormAnswer, RULES, FORM_RULES } from '@aep/protocol';

const schema = {
  type: 'object',
  properties: {
    name: { type: 'string', title: 'Your name for /home/alice', minLength: 2, maxLength: 5 },
    mail: { type: 'string', format: 'email' },
    age: { type: 'integer', title: 'Age', minimum: 0, maximum: 150 },
    ok: { type: 'boolean', title: 'OK?' },
    pick: {
      type: 'string',
      oneOf: [
        { const: 'a', title: 'Alpha' },
        { const: 'b', title: 'Beta' },
      ],
    },
    many: { type: 'array', items: { type: 'string', enum: ['x', 'y', 'z'] }, minItems: 1, maxItems: 2 },
  },
  required: ['name', 'age'],
};

test('at redacted, prompt and every label go through the given pipeline', () => {
  const seen: string[] = [];
  const r = elicitationToForm(
    { message: 'Hello /home/alice', requestedSchema: schema },
    {
      agent: 'bot',
      capture: 'redacted',
      redact: (s) => {
        seen.push(s);
        return s.replace('/home/alice', '~');
      },
    },
  );
  assert.ok(r.ok);
  if (!r.ok) return;
  assert.equal(r.data.prompt, 'Hello ~');
  assert.equal(r.data.fields[0]?.label, 'Your name for ~');
  assert.deepEqual(r.data.fields.find((f) => f.id === 'pick')?.choices, [
    { id: 'a', label: 'Alpha' },
    { id: 'b', label: 'Beta' },
  ]);
  assert.ok(seen.includes('Hello /home/alice'));
  assert.ok(seen.includes('Alpha') && seen.includes('Beta'), 'choice labels are redacted too');
});

test('at redacted without a given pipeline the protocol redact() is applied', () => {
  const r = elicitationToForm({ message: 'Mail alice@example.com about /home/alice/x', requestedSchema: schema }, { agent: 'bot', capture: 'redacted' });
  assert.ok(r.ok);
  if (!r.ok) return;
  assert.ok(!r.data.prompt.includes('alice@example.com'), r.data.prompt);
  assert.ok(!r.data.prompt.includes('/home/alice'), r.data.prompt);
  assert.ok(!r.data.fields[0]?.label.includes('/home/alice'), r.data.fields[0]?.label);
});

test('at full the pipeline is not applied (real text)', () => {
  const r = elicitationToForm({ message: 'Hello /home/alice', requestedSchema: schema }, { agent: 'bot', capture: 'full', redact: () => 'X' });
  assert.ok(r.ok);
  if (r.ok) assert.equal(r.data.prompt, 'Hello /home/alice');
});

test('a bad capture level or params shape is refused with a reason', () => {
  assert.equal(elicitationToForm({ message: 'm', requestedSchema: schema }, { agent: 'a', capture: 'loud' as never }).ok, false);
  for (const bad of [null, 3, 'x', [], { requestedSchema: schema }, { message: 'm' }, { message: 'm', requestedSchema: { type: 'object' } }]) {
    const r = elicitationToForm(bad, { agent: 'a', capture: 'full' });
    assert.equal(r.ok, false, JSON.stringify(bad));
    if (!r.ok) assert.ok(r.reason.length > 0);
  }
});

test('an empty properties object maps to a form with no fields (a confirmation)', () => {
  const r = elicitationToForm({ message: 'Continue?', requestedSchema: { type: 'object', properties: {} } }, { agent: 'a', capture: 'metadata' });
  assert.ok(r.ok);
  if (r.ok) assert.equal(r.data.prompt, 'a requests input (0 fields)');
});

// Arbitrary flat schemas with secret-bearing titles and messages.
const secret = fc.string({ minLength: 1, maxLength: 12 }).map((s) => `SECRET<${s}>`);
const key = fc.stringMatching(/^[a-z][a-z0-9_]{0,8}$/);
const prop = fc.oneof(
  fc.record({ type: fc.constant('string'), title: secret }),
  fc.record({ type: fc.constantFrom('number', 'integer'), title: secret, minimum: fc.integer({ min: -5, max: 0 }), maximum: fc.integer({ min: 1, max: 9 }) }),
  fc.record({ type: fc.constant('boolean'), title: secret, default: fc.boolean() }),
  fc.uniqueArray(key, { minLength: 1, maxLength: 4 }).chain((vals) =>
    fc.record({
      type: fc.constant('string'),
      title: secret,
      enum: fc.constant(vals),
      enumNames: fc.constant(vals.map((v) => `SECRET<${v}>`)),
    }),
  ),
  fc.uniqueArray(key, { minLength: 1, maxLength: 4 }).map((vals) => ({
    type: 'array',
    description: 'SECRET<d>',
    items: { anyOf: vals.map((v) => ({ const: v, title: `SECRET<${v}>` })) },
  })),
);
const arbSchema = fc.dictionary(key, prop, { minKeys: 0, maxKeys: 6 }).chain((properties) =>
  fc.record({
    type: fc.constant('object'),
    properties: fc.constant(properties),
    required: fc.subarray(Object.keys(properties)),
  }),
);

test('property: at metadata no authored text reaches prompt or labels; ids are keys/enum values', () => {
  fc.assert(
    fc.property(arbSchema, secret, (s, message) => {
      const r = elicitationToForm({ message, requestedSchema: s }, { agent: 'bot', capture: 'metadata' });
      assert.ok(r.ok, r.ok ? '' : r.reason);
      if (!r.ok) return;
      const text = JSON.stringify(r.data);
      assert.ok(!text.includes('SECRET'), text);
      assert.equal(r.data.prompt, `bot requests input (${Object.keys(s.properties).length} fields)`);
      for (const f of r.data.fields) {
        assert.equal(f.label, f.id);
        assert.equal(f.required, s.required.includes(f.id));
        assert.equal('other' in f, false, 'MCP enums are closed: no other');
        for (const c of f.choices ?? []) assert.equal(c.label, c.id);
      }
      assert.deepEqual(r.data.respond_via, ['control']);
    }),
    { numRuns: Number(process.env['AEP_FUZZ_RUNS'] ?? 300) },
  );
});

test('property: the mapping never throws on arbitrary input', () => {
  fc.assert(
    fc.property(fc.anything(), fc.anything(), (params, values) => {
      const r = elicitationToForm(params, { agent: 'a', capture: 'full' });
      assert.equal(typeof r.ok, 'boolean');
      const c = formValuesToElicitationContent((params as { requestedSchema?: unknown } | null)?.requestedSchema, values);
      assert.equal(typeof c, 'object');
      assert.ok(Array.isArray(validateElicitationContent((params as { requestedSchema?: unknown } | null)?.requestedSchema, c)));
    }),
    { numRuns: Number(process.env['AEP_FUZZ_RUNS'] ?? 300) },
  );
});

test('validateElicitationContent accepts a valid answer', () => {
  const content = formValuesToElicitationContent(schema, { name: 'bob', mail: 'b@x.io', age: 30, ok: true, pick: 'a', many: ['x'] });
  assert.deepEqual(validateElicitationContent(schema, content), []);
  assert.deepEqual(content, { name: 'bob', mail: 'b@x.io', age: 30, ok: true, pick: 'a', many: ['x'] });
});

test('validateElicitationContent names each broken constraint with the form rule ids, at /data/answer/values/<key>', () => {
  const cases: Array<[Record<string, unknown>, string, string]> = [
    [{ age: 3 }, 'form.required-missing', 'name'],
    [{ name: 'bob', age: 3.5 }, 'form.not-integer', 'age'],
    [{ name: 'bob', age: 151 }, 'form.out-of-range', 'age'],
    [{ name: 'bob', age: -1 }, 'form.out-of-range', 'age'],
    [{ name: 'b', age: 1 }, 'form.too-short', 'name'],
    [{ name: 'bobbybob', age: 1 }, 'form.too-long', 'name'],
    [{ name: 'bob', age: 1, mail: 'nope' }, 'form.format', 'mail'],
    [{ name: 'bob', age: 1, ok: 'yes' }, 'form.type-mismatch', 'ok'],
    [{ name: 'bob', age: 1, pick: 'c' }, 'form.choice-forged', 'pick'],
    [{ name: 'bob', age: 1, many: ['x', 'q'] }, 'form.choice-forged', 'many'],
    [{ name: 'bob', age: 1, many: [] }, 'form.too-few-choices', 'many'],
    [{ name: 'bob', age: 1, many: ['x', 'y', 'z'] }, 'form.too-many-choices', 'many'],
  ];
  for (const [content, rule, key] of cases) {
    const issues = validateElicitationContent(schema, content);
    assert.deepEqual(
      issues.map((i) => [i.rule, i.path]),
      [[rule, `/data/answer/values/${key}`]],
      JSON.stringify(content),
    );
    for (const i of issues) {
      assert.ok(i.rule in RULES, i.rule);
      assert.equal(i.section, FORM_RULES[i.rule as keyof typeof FORM_RULES].section);
      assert.ok(i.message.startsWith(`${i.rule}: `), i.message);
      for (const v of Object.values(content)) if (typeof v === 'string' && v.length > 1) assert.ok(!i.message.includes(v), `${i.message} repeats ${v}`);
    }
  }
  assert.deepEqual(
    validateElicitationContent(schema, { age: 3 }, { basePath: '' }).map((i) => i.path),
    ['/name'],
  );
  assert.deepEqual(
    validateElicitationContent({ type: 'nope' }, {}).map((i) => i.rule),
    ['mcp-elicitation.schema'],
  );
});

test('elicitationToForm returns the constraints a field_spec cannot carry, per field id', () => {
  const r = elicitationToForm({ message: 'm', requestedSchema: schema }, { agent: 'a', capture: 'full' });
  assert.ok(r.ok);
  if (!r.ok) return;
  assert.deepEqual(r.constraints, {
    name: { minLength: 2, maxLength: 5 },
    mail: { format: 'email' },
    age: { integer: true },
    many: { minItems: 1, maxItems: 2 },
  });
  // The same at every capture level (constraints are structural).
  const m = elicitationToForm({ message: 'm', requestedSchema: schema }, { agent: 'a', capture: 'metadata' });
  assert.ok(m.ok && JSON.stringify(m.constraints) === JSON.stringify(r.constraints));
});

test('issue 13: a non-integer for an optional or required MCP integer is refused as not an integer, never dropped', () => {
  const s = { type: 'object', properties: { note: { type: 'string' }, count: { type: 'integer' }, need: { type: 'integer' } }, required: ['need'] };
  const r = elicitationToForm({ message: 'm', requestedSchema: s }, { agent: 'a', capture: 'full' });
  assert.ok(r.ok);
  if (!r.ok) return;
  // The emitter's check, with the constraints as data.
  assert.deepEqual(
    validateFormAnswer(r.data.fields, { note: 'hi', count: 2.5, need: 1 }, { constraints: r.constraints }).map((i) => [i.rule, i.path]),
    [['form.not-integer', '/data/answer/values/count']],
  );
  assert.deepEqual(
    validateFormAnswer(r.data.fields, { need: 3.5 }, { constraints: r.constraints }).map((i) => [i.rule, i.path]),
    [['form.not-integer', '/data/answer/values/need']],
  );
  // The content path agrees: the value is kept as given and named.
  const content = formValuesToElicitationContent(s, { note: 'hi', count: 2.5, need: 1 });
  assert.deepEqual(content, { note: 'hi', count: 2.5, need: 1 });
  assert.deepEqual(
    validateElicitationContent(s, content).map((i) => i.rule),
    ['form.not-integer'],
  );
  const req = validateElicitationContent(s, formValuesToElicitationContent(s, { need: 3.5 }));
  assert.deepEqual(
    req.map((i) => i.rule),
    ['form.not-integer'],
  );
  assert.doesNotMatch(req[0]!.message, /missing/);
});

test('an emoji counts as one character for minLength/maxLength (JSON Schema code points)', () => {
  const s = { type: 'object', properties: { e: { type: 'string', maxLength: 2 } } };
  assert.deepEqual(validateElicitationContent(s, { e: '😀😀' }), []);
});

test('formValuesToElicitationContent keeps values it cannot restore (so the check names them) and can skip defaults', () => {
  const s = { type: 'object', properties: { n: { type: 'integer', default: 4 }, b: { type: 'boolean' }, e: { type: 'string', enum: ['x'] } } };
  assert.deepEqual(formValuesToElicitationContent(s, { b: 'maybe', e: ['x'] }), { n: 4, b: 'maybe', e: 'x' });
  assert.deepEqual(formValuesToElicitationContent(s, { n: 2.5 }, { applyDefaults: false }), { n: 2.5 });
  assert.deepEqual(formValuesToElicitationContent(s, { n: '7', b: 'true' }), { n: 7, b: true });
  assert.deepEqual(formValuesToElicitationContent(s, {}, { applyDefaults: false }), {});
  assert.deepEqual(
    validateElicitationContent(s, formValuesToElicitationContent(s, { b: 'maybe' })).map((i) => i.rule),
    ['form.type-mismatch'],
  );
});

test('a "__proto__" property key stays an ordinary own key end to end', () => {
  const s = JSON.parse('{"type":"object","properties":{"__proto__":{"type":"integer"}},"required":["__proto__"]}') as unknown;
  const r = elicitationToForm({ message: 'm', requestedSchema: s }, { agent: 'a', capture: 'full' });
  assert.ok(r.ok);
  if (!r.ok) return;
  assert.equal(r.data.fields[0]?.id, '__proto__');
  assert.deepEqual(Object.keys(r.fieldMap), ['__proto__']);
  const content = formValuesToElicitationContent(s, JSON.parse('{"__proto__":"7"}'));
  assert.deepEqual(Object.keys(content), ['__proto__']);
  assert.equal(Object.getPrototypeOf(content), Object.prototype);
  assert.deepEqual(validateElicitationContent(s, content), []);
});
