// The generated standalone validators (src/generated/validators.ts, ajv output rewritten to ESM)
// behave exactly like ajv compiling the schemas at run time: same verdict and same error
// locations, on the conformance corpus and on random values. Also pins the generated registry
// and type lists against schemas/registry.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import fc from 'fast-check';
import Ajv2020 from 'ajv/dist/2020.js';
import { envelope, PAYLOAD_VALIDATORS } from '../src/generated/validators.js';
import { isDateTime, isUri, TYPE_REGISTRY, AEP_CORE_TYPES, AEP_MANDATORY_TYPES, NACK_REASONS, CATEGORY_REGISTRY } from '@aep/protocol';

const RUNS = Number(process.env['AEP_FUZZ_RUNS'] ?? 1000);
const root = new URL('../../../', import.meta.url);
const readJson = (p: string) => JSON.parse(readFileSync(new URL(p, root), 'utf8')) as Record<string, unknown>;
type V = ((d: unknown) => boolean) & { errors?: { schemaPath: string; instancePath: string }[] | null };

const ajv = new Ajv2020.default({ strict: true, strictRequired: false, allowUnionTypes: true, allErrors: true });
for (const kw of ['x-aep-capture', 'x-aep-exception', 'x-aep-rule']) ajv.addKeyword({ keyword: kw });
ajv.addFormat('date-time', isDateTime);
ajv.addFormat('uri', isUri);

const pairs: [string, V, V][] = [['envelope', ajv.compile(readJson('schemas/aep-event.schema.json')) as V, envelope as unknown as V]];
for (const r of TYPE_REGISTRY) {
  if (!r.schema) continue;
  pairs.push([r.type, ajv.compile(readJson(`schemas/types/${r.schema}`)) as V, (PAYLOAD_VALIDATORS as unknown as Record<string, V>)[r.type]!]);
}

function same(name: string, runtime: V, gen: V, x: unknown): void {
  const a = runtime(x);
  const b = gen(x);
  assert.equal(b, a, `${name}: verdict differs for ${JSON.stringify(x)}`);
  const locs = (v: V) => (v.errors ?? []).map((e) => `${e.schemaPath} ${e.instancePath}`).sort();
  assert.deepEqual(locs(gen), locs(runtime), `${name}: errors differ for ${JSON.stringify(x)}`);
}

const corpus: Record<string, unknown>[] = [];
for (const f of readdirSync(new URL('conformance/valid/', root))) {
  for (const l of readFileSync(new URL(`conformance/valid/${f}`, root), 'utf8').split('\n')) if (l) corpus.push(JSON.parse(l) as Record<string, unknown>);
}
for (const c of readJson('conformance/invalid/cases.json')['cases'] as { events?: unknown[] }[]) {
  for (const e of c.events ?? []) if (typeof e === 'object' && e !== null && !Array.isArray(e)) corpus.push(e as Record<string, unknown>);
}

test('generated validators equal run-time compiled ones on the conformance corpus', () => {
  let checked = 0;
  for (const e of corpus) {
    same('envelope', pairs[0]![1], pairs[0]![2], e);
    const p = pairs.find(([n]) => n === e['type']);
    if (p && e['data'] !== undefined) {
      same(p[0], p[1], p[2], e['data']);
      checked++;
    }
  }
  assert.ok(checked > 60);
});

test('generated validators equal run-time compiled ones on random values', () => {
  const value = fc.oneof(
    fc.anything(),
    fc.dictionary(
      fc.constantFrom(
        'tool',
        'kind',
        'prompt',
        'fields',
        'answer',
        'reason',
        'by',
        'status',
        'cost',
        'duration_ms',
        'aep',
        'id',
        'type',
        'seq',
        'session',
        'x_y',
      ),
      fc.anything(),
      { maxKeys: 5 },
    ),
  );
  fc.assert(
    fc.property(fc.integer({ min: 0, max: pairs.length - 1 }), value, (i, x) => {
      const [name, runtime, gen] = pairs[i]!;
      same(name, runtime, gen, x);
    }),
    { numRuns: RUNS },
  );
});

test('generated registry and type lists match schemas/registry', () => {
  const types = readJson('schemas/registry/types.json')['types'] as { type: string; status: string }[];
  assert.equal(types.length, 46);
  assert.deepEqual(
    [...AEP_CORE_TYPES],
    types.map((t) => t.type),
  );
  assert.deepEqual(
    [...AEP_MANDATORY_TYPES],
    types.filter((t) => t.status === 'mandatory').map((t) => t.type),
  );
  assert.equal(AEP_MANDATORY_TYPES.length, 14);
  assert.equal(types.filter((t) => t.status === 'reserved').length, 2);
  assert.deepEqual([...NACK_REASONS], ['unsupported', 'unauthorized', 'busy', 'refused', 'invalid']);
  assert.equal(CATEGORY_REGISTRY.length, 14);
});
