// Random forms and random answers for the differential tests of issue 13 ("the same answers
// through the engine, the adapter, the bridge and the inbox give the same verdicts"). Shared:
// conformance/test/answer-path.test.ts runs them through validateFormAnswer, the attention
// engine (over a real relay and over an AttentionPort) and the adapter's and bridge's answer
// hooks; the inbox's client-side hints can join by importing these arbitraries.
//
//   import { mcpCase, aepCase, refusalOrJunkAnswer } from '../../conformance/support/answer-cases.js';
//
// Answers are biased toward the edges where copies of the rules used to disagree: integers
// given fractions, strings at their length bounds, formats, item counts, duplicates, arrays for
// single selects, mistyped entries, unknown keys, missing required fields.
import fc from 'fast-check';
import type { FieldSpec } from '@aep/protocol';

/** One flat MCP `requestedSchema` property (MCP 2025-06-18 / 2025-11-25 shapes). */
export type McpProperty = Record<string, unknown>;

/** A random elicitation: the `elicitation/create` params and its schema. */
export interface McpCase {
  params: { message: string; requestedSchema: { type: 'object'; properties: Record<string, McpProperty>; required: string[] } };
  /** A random answer (`answer.values`) for it. */
  values: Record<string, unknown>;
}

/** A random AEP form (`fields`, as an emitter offers them) and a random answer. */
export interface AepCase {
  fields: FieldSpec[];
  values: Record<string, unknown>;
}

// Property keys, including ones that are JSON-pointer-hostile or prototype names.
const KEYS = ['note', 'count', 'ratio', 'ok', 'tier', 'days', 'a/b', 'x~y', 'toString', 'constructor'] as const;
const STRING_FORMATS = ['email', 'uri', 'date', 'date-time'] as const;
const FORMAT_SAMPLES = [
  'a@b',
  'bob@example.org',
  'no at sign',
  'https://example.org/x',
  'mailto:x',
  'not a uri',
  '2026-01-01',
  '2026-13-45',
  '2026-01-01T09:00:00Z',
  '2026-01-01 09:00',
  'yesterday',
  '',
];
const TEXT_SAMPLES = ['', 'a', 'ab', 'abc', 'abcd', 'abcdefgh', '😀', '😀😀😀', ' padded ', 'password=hunter2'];

const intIn = (lo: number, hi: number) => fc.integer({ min: lo, max: hi });

/** A random flat property of every kind the mapping supports, with random constraints. */
export const mcpProperty: fc.Arbitrary<McpProperty> = fc.oneof(
  // string, maybe with lengths and a format
  fc
    .record({
      minLength: fc.option(intIn(0, 4), { nil: undefined }),
      span: fc.option(intIn(0, 5), { nil: undefined }),
      format: fc.option(fc.constantFrom(...STRING_FORMATS), { nil: undefined }),
      title: fc.option(fc.constantFrom('Note', 'Your name', 'Contact'), { nil: undefined }),
    })
    .map(({ minLength, span, format, title }) =>
      clean({
        type: 'string',
        title,
        minLength,
        maxLength: span === undefined ? undefined : (minLength ?? 0) + span,
        format,
      }),
    ),
  // integer / number with bounds
  fc
    .record({
      type: fc.constantFrom('integer', 'number'),
      minimum: fc.option(fc.oneof(intIn(-3, 5), fc.constantFrom(0.5, 1.5)), { nil: undefined }),
      span: fc.option(intIn(0, 10), { nil: undefined }),
    })
    .map(({ type, minimum, span }) => clean({ type, minimum, maximum: span === undefined ? undefined : (minimum ?? 0) + span })),
  fc.constant({ type: 'boolean', title: 'OK?' }),
  // single-select enums: plain, with enumNames, titled oneOf
  fc.constantFrom<McpProperty>(
    { type: 'string', enum: ['s', 'm', 'l'] },
    { type: 'string', title: 'Tier', enum: ['s', 'l'], enumNames: ['Small', 'Large'] },
    {
      type: 'string',
      oneOf: [
        { const: 'eu', title: 'Europe' },
        { const: 'us', title: 'US' },
      ],
    },
  ),
  // multi-selects with item counts
  fc
    .record({
      titled: fc.boolean(),
      minItems: fc.option(intIn(0, 2), { nil: undefined }),
      span: fc.option(intIn(0, 2), { nil: undefined }),
    })
    .map(({ titled, minItems, span }) =>
      clean({
        type: 'array',
        items: titled
          ? {
              anyOf: [
                { const: 'mon', title: 'Monday' },
                { const: 'wed', title: 'Wednesday' },
                { const: 'fri', title: 'Friday' },
              ],
            }
          : { type: 'string', enum: ['mon', 'wed', 'fri'] },
        minItems,
        maxItems: span === undefined ? undefined : (minItems ?? 0) + span,
      }),
    ),
);

function clean(o: Record<string, unknown>): McpProperty {
  const out: McpProperty = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
  return out;
}

const junk = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer({ min: -2, max: 400 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom('x', '3', 'true'),
  fc.constant({}),
  fc.constant([]),
);

const VALID_FORMAT: Record<string, string[]> = {
  email: ['bob@example.org', 'a@b'],
  uri: ['https://example.org/x', 'mailto:x'],
  date: ['2026-01-01'],
  'date-time': ['2026-01-01T09:00:00Z'],
};

/** A value that satisfies `p` (as far as a random one can). */
function validMcpValue(p: McpProperty): fc.Arbitrary<unknown> {
  switch (p['type']) {
    case 'string': {
      if (Array.isArray(p['enum'])) return fc.constantFrom(...(p['enum'] as string[]));
      if (Array.isArray(p['oneOf'])) return fc.constantFrom('eu', 'us');
      if (typeof p['format'] === 'string') return fc.constantFrom(...VALID_FORMAT[p['format']]!);
      const min = typeof p['minLength'] === 'number' ? p['minLength'] : 0;
      const max = typeof p['maxLength'] === 'number' ? p['maxLength'] : min + 6;
      return fc.string({ minLength: min, maxLength: max, unit: 'grapheme-ascii' });
    }
    case 'integer':
    case 'number': {
      const lo = typeof p['minimum'] === 'number' ? p['minimum'] : -3;
      const hi = typeof p['maximum'] === 'number' ? p['maximum'] : lo + 10;
      return p['type'] === 'integer'
        ? fc.integer({ min: Math.ceil(lo), max: Math.max(Math.ceil(lo), Math.floor(hi)) })
        : fc.double({ min: lo, max: hi, noNaN: true });
    }
    case 'boolean':
      return fc.boolean();
    case 'array': {
      const min = typeof p['minItems'] === 'number' ? p['minItems'] : 0;
      const max = typeof p['maxItems'] === 'number' ? p['maxItems'] : 3;
      return fc.subarray(['mon', 'wed', 'fri'], { minLength: Math.min(min, 3), maxLength: Math.min(max, 3) });
    }
    default:
      return fc.constant(null);
  }
}

/** A value for `p`: mostly valid, often at an edge, sometimes junk. */
export function mcpValue(p: McpProperty): fc.Arbitrary<unknown> {
  return fc.oneof({ weight: 5, arbitrary: validMcpValue(p) }, { weight: 3, arbitrary: edgeMcpValue(p) }, { weight: 1, arbitrary: junk });
}

/** A value at (or just past) an edge of `p`. */
function edgeMcpValue(p: McpProperty): fc.Arbitrary<unknown> {
  switch (p['type']) {
    case 'string': {
      if (Array.isArray(p['enum'])) return fc.constantFrom('x', 'S', ['s']);
      if (Array.isArray(p['oneOf'])) return fc.constantFrom('Europe', ['eu']);
      return fc.oneof(fc.constantFrom(...TEXT_SAMPLES, ...FORMAT_SAMPLES), fc.string({ maxLength: 10 }));
    }
    case 'integer':
    case 'number': {
      const lo = typeof p['minimum'] === 'number' ? p['minimum'] : -3;
      const hi = typeof p['maximum'] === 'number' ? p['maximum'] : lo + 10;
      return fc.oneof(
        fc.integer({ min: Math.floor(lo) - 1, max: Math.ceil(hi) + 1 }),
        // A fraction within the bounds: fine for a number, not for an integer (issue 13).
        { weight: 3, arbitrary: fc.integer({ min: Math.ceil(lo), max: Math.max(Math.ceil(lo), Math.floor(hi) - 1) }).map((n) => n + 0.5) },
        fc.constantFrom(lo, hi, 2.5, 3.5, -0),
      );
    }
    case 'array':
      return fc.constantFrom(['mon', 'mon'], ['sun'], ['mon', 'wed', 'fri'], [], 'mon', [1]);
    default:
      return junk;
  }
}

/** Rarely `one of values`, mostly undefined. */
const rarely = <T>(values: readonly T[]) => fc.oneof({ weight: 9, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom(...values) });

/** A random elicitation (1-5 properties, a random required subset) and a random answer for it. */
export const mcpCase: fc.Arbitrary<McpCase> = fc
  .uniqueArray(fc.constantFrom(...KEYS), { minLength: 1, maxLength: 5 })
  .chain((keys) => fc.tuple(fc.constant(keys), fc.array(mcpProperty, { minLength: keys.length, maxLength: keys.length }), fc.subarray(keys)))
  .chain(([keys, props, required]) => {
    const properties: Record<string, McpProperty> = {};
    keys.forEach((k, i) => {
      properties[k] = props[i]!;
    });
    // An entry is present most of the time (a missing required one is a rejection), absent sometimes.
    const entries = keys.map((k) => fc.option(mcpValue(properties[k]!), { nil: undefined, freq: 6 }).map((v) => [k, v] as const));
    return fc.tuple(fc.tuple(...entries), rarely(['zz', 'password'])).map(([pairs, extra]) => {
      const values: Record<string, unknown> = {};
      for (const [k, v] of pairs) if (v !== undefined) Object.defineProperty(values, k, { value: v, enumerable: true, writable: true, configurable: true });
      if (extra !== undefined) values[extra] = 'unknown key';
      return { params: { message: 'Fill in the form', requestedSchema: { type: 'object' as const, properties, required } }, values };
    });
  });

const CHOICES = [
  { id: '1', label: 'One' },
  { id: '2', label: 'Two' },
  { id: '3', label: 'Three' },
];

/** A random AEP field of every type, including AskUserQuestion's select with `other` on every field. */
export const aepField = (id: string): fc.Arbitrary<FieldSpec> =>
  fc.oneof(
    fc.record({ required: fc.boolean() }).map(({ required }) => ({ id, type: 'string' as const, label: `String ${id}`, ...(required ? { required } : {}) })),
    fc
      .record({ required: fc.boolean(), min: fc.option(intIn(-2, 3), { nil: undefined }), max: fc.option(intIn(3, 9), { nil: undefined }) })
      .map(({ required, min, max }) => ({
        id,
        type: 'number' as const,
        label: `Number ${id}`,
        ...(required ? { required } : {}),
        ...(min !== undefined ? { min } : {}),
        ...(max !== undefined ? { max } : {}),
      })),
    fc.record({ required: fc.boolean() }).map(({ required }) => ({ id, type: 'boolean' as const, label: `Boolean ${id}`, ...(required ? { required } : {}) })),
    fc.record({ required: fc.boolean(), multi: fc.boolean(), other: fc.boolean() }).map(({ required, multi, other }) => ({
      id,
      type: 'select' as const,
      label: `Select ${id}`,
      choices: CHOICES,
      ...(required ? { required } : {}),
      ...(multi ? { multi } : {}),
      ...(other ? { other } : {}),
    })),
  );

/** A value biased toward the edges of an AEP field. */
export function aepValue(f: FieldSpec): fc.Arbitrary<unknown> {
  switch (f.type) {
    case 'string':
      return fc.oneof({ weight: 3, arbitrary: fc.string({ maxLength: 8 }) }, junk);
    case 'number':
      return fc.oneof({ weight: 3, arbitrary: fc.integer({ min: -4, max: 12 }) }, fc.double({ min: -4, max: 12, noNaN: true }), junk);
    case 'boolean':
      return fc.oneof({ weight: 3, arbitrary: fc.boolean() }, junk);
    default:
      return fc.oneof(
        { weight: 2, arbitrary: fc.constantFrom('1', '2', '3') },
        { weight: 2, arbitrary: fc.subarray(['1', '2', '3']) },
        fc.constantFrom('free text', '4', ['1', '1'], ['1', 'free'], [2]),
        junk,
      );
  }
}

/** A random AEP form of 1-5 fields (1-based index ids, as AskUserQuestion uses) and a random answer. */
export const aepCase: fc.Arbitrary<AepCase> = fc
  .integer({ min: 1, max: 5 })
  .chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => aepField(String(i + 1)))))
  .chain((fields) => fc.tuple(fc.constant(fields), fc.tuple(...fields.map((f) => fc.option(aepValue(f), { nil: undefined, freq: 5 }))), rarely(['9'])))
  .map(([fields, vals, extra]) => {
    const values: Record<string, unknown> = {};
    fields.forEach((f, i) => {
      if (vals[i] !== undefined) values[f.id] = vals[i];
    });
    if (extra !== undefined) values[extra] = '1';
    return { fields, values };
  });

/** AskUserQuestion-shaped forms (Annex A pin): selects, `required` and `other` on every field, `multi` only where true. */
export const askUserQuestionCase: fc.Arbitrary<AepCase> = fc
  .array(fc.boolean(), { minLength: 1, maxLength: 4 })
  .chain((multis) => {
    const fields: FieldSpec[] = multis.map((multi, i) => ({
      id: String(i + 1),
      type: 'select',
      label: `H${i + 1}: Question ${i + 1}?`,
      required: true,
      other: true,
      choices: CHOICES,
      ...(multi ? { multi: true } : {}),
    }));
    return fc.tuple(fc.constant(fields), fc.tuple(...fields.map((f) => fc.option(aepValue(f), { nil: undefined, freq: 5 }))));
  })
  .map(([fields, vals]) => {
    const values: Record<string, unknown> = {};
    fields.forEach((f, i) => {
      if (vals[i] !== undefined) values[f.id] = vals[i];
    });
    return { fields, values };
  });

/**
 * A non-values answer every form path must judge alike: the refusals every form accepts
 * (contract C2), text naming one, and options/text no form accepts.
 */
export const refusalOrJunkAnswer: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  fc.constantFrom<Record<string, unknown>>(
    { option: 'decline' },
    { option: 'cancel' },
    { option: 'decline', text: 'not now' },
    { text: ' Cancel ' },
    { text: 'DECLINE' },
  ),
  fc.constantFrom<Record<string, unknown>>({ option: 'maybe' }, { text: 'sure' }, {}, { option: 7 }, { text: ['x'] }),
);
