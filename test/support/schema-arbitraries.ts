// fast-check arbitraries drawn from the payload schemas (the subset scripts/codegen supports),
// shared by the property tests that generate valid events (packages/protocol/test/
// property-validate.test.ts, packages/bridges/test/support/events.ts).
import fc from 'fast-check';
import { captureRank, type CaptureTree } from '@aep/protocol';

export type Schema = Record<string, unknown>;

const word = fc.stringMatching(/^[a-z0-9_-]{1,12}$/);
const text = fc.string({ minLength: 1, maxLength: 20 });

/** Values valid against `s`; `dateTime` draws the `format: date-time` strings. */
export function schemaArbitrary(s: Schema, dateTime: fc.Arbitrary<string>): fc.Arbitrary<unknown> {
  const arb = (x: Schema): fc.Arbitrary<unknown> => schemaArbitrary(x, dateTime);
  if (Array.isArray(s['enum'])) return fc.constantFrom(...(s['enum'] as unknown[]));
  const t = s['type'];
  if (Array.isArray(t)) return fc.oneof(...t.map((one) => arb({ ...s, type: one })));
  switch (t) {
    case 'string':
      return s['format'] === 'date-time' ? dateTime : text;
    case 'integer':
      return fc.integer({ min: typeof s['minimum'] === 'number' ? s['minimum'] : -1000, max: 100000 });
    case 'number':
      return fc.double({
        min: typeof s['minimum'] === 'number' ? s['minimum'] : -1e6,
        max: typeof s['maximum'] === 'number' ? s['maximum'] : 1e6,
        noNaN: true,
        noDefaultInfinity: true,
      });
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.array(arb(s['items'] as Schema), { maxLength: 3 });
    case 'object': {
      const props = (s['properties'] ?? {}) as Record<string, Schema>;
      if (Object.keys(props).length === 0) return fc.dictionary(word, fc.oneof(text, fc.integer()), { maxKeys: 2 });
      const req = new Set([...((s['required'] ?? []) as string[]), ...((((s['then'] ?? {}) as Schema)['required'] ?? []) as string[])]);
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, sub] of Object.entries(props)) model[k] = arb(sub);
      return fc.record(model, { requiredKeys: [...req].filter((k) => k in props) });
    }
  }
  throw new Error(`no arbitrary for ${JSON.stringify(s)}`);
}

/** Drops members above `rank` (AEP-0001 §8.2(a)), as an honest emitter would. */
export function pruneToCapture(v: unknown, tree: CaptureTree, rank: number): unknown {
  if (Array.isArray(v)) return tree.items ? v.map((x) => pruneToCapture(x, tree.items!, rank)) : v;
  if (typeof v !== 'object' || v === null || !tree.properties) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    const sub = tree.properties[k];
    if (sub === undefined) {
      out[k] = x;
      continue;
    }
    if (captureRank(sub.level) > rank) continue;
    out[k] = pruneToCapture(x, sub, rank);
  }
  return out;
}
