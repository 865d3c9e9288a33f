// Capture enforcement as properties of the relay's gating functions (capture.ts), many runs:
// whatever a sender declares, no string above a subscriber's ceiling (nor above the declared
// level) survives ingest + fan-out; unannotated members reach only `full`; an honest Event is
// kept as the very same object (so its raw bytes are forwarded).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { CAPTURE_TREES, type CaptureTree } from '@aep/protocol';
import { gateFor, makeHonest, rawRank } from '../src/capture.js';
import { LEVELS, eventArb, forbiddenTags, rank, type Level } from './capture-gen.js';

const RUNS = Number(process.env['AEP_FUZZ_RUNS'] ?? 400);

test('no canary above min(ceiling, declared) and no unannotated member below full survives ingest + fan-out', () => {
  fc.assert(
    fc.property(eventArb('prop'), fc.option(fc.constantFrom(...LEVELS), { nil: undefined }), ({ ev, declared }, ceiling) => {
      const stored = makeHonest(ev);
      const out = ceiling === undefined ? stored : gateFor(stored, ceiling);
      const text = JSON.stringify(out);
      for (const tag of forbiddenTags(declared, ceiling))
        assert.ok(!text.includes(tag), `${tag} in ${text} (declared ${declared}, ceiling ${String(ceiling)})`);
      // The raw shortcut is only taken when gating would change nothing.
      if (ceiling !== undefined && rank(ceiling) >= rawRank(stored)) assert.equal(gateFor(stored, ceiling), stored);
    }),
    { numRuns: RUNS },
  );
});

/** Honest by the annotations alone (an independent reading of AEP-0001 §8.2(a)). */
function honest(value: unknown, t: CaptureTree, declared: number): boolean {
  if (t.exception === 'values')
    return declared >= 2 || (typeof value === 'object' && value !== null && Object.values(value).every((v) => typeof v === 'number' || typeof v === 'boolean'));
  if (Array.isArray(value)) return !t.items || value.every((v) => honest(v, t.items!, declared));
  if (typeof value !== 'object' || value === null || !t.properties) return true;
  for (const [k, v] of Object.entries(value)) {
    const child = Object.prototype.hasOwnProperty.call(t.properties, k) ? t.properties[k] : undefined;
    if (!child) continue; // unannotated: kept in the store, gated at fan-out
    if (rank(child.level as Level) > declared) return false;
    if (!honest(v, child, declared)) return false;
  }
  return true;
}

test('an honest Event is kept as the same object at ingest (byte-identical), and ingest is idempotent', () => {
  fc.assert(
    fc.property(eventArb('prop'), ({ ev, declared }) => {
      const d = rank(declared);
      const tree = CAPTURE_TREES[ev['type'] as string];
      const isHonest = !('data' in ev) || d === 3 || (d > 0 && (!tree || honest(ev['data'], tree, d)));
      const h = makeHonest(ev);
      if (isHonest) assert.equal(h, ev, JSON.stringify(ev));
      else assert.notEqual(h, ev);
      assert.equal(makeHonest(h), h);
    }),
    { numRuns: RUNS },
  );
});

// The ingest path takes the raw rank from makeHonest's own walk (issue 19) instead of walking
// the honest Event again: same Event, same rank as rawRank, with and without a request's fields.
const FIELDS: readonly unknown[] = [
  { id: 'a', type: 'select', choices: [{ id: 'Credacted-x' }, { id: 'b' }] },
  { id: 'b', type: 'number' },
  { id: 'c', type: 'string' },
];
test("makeHonest's rank holder gets rawRank of the honest Event, and the Event is the same", () => {
  fc.assert(
    fc.property(eventArb('prop'), fc.boolean(), ({ ev }, withFields) => {
      const fieldsOf = withFields ? () => FIELDS : undefined;
      const plain = makeHonest(ev, fieldsOf);
      const holder = { rank: -1 };
      const ranked = makeHonest(ev, fieldsOf, holder);
      assert.deepEqual(ranked, plain);
      assert.equal(ranked === ev, plain === ev);
      assert.equal(holder.rank, rawRank(plain), JSON.stringify(ev));
    }),
    { numRuns: RUNS * 5 },
  );
});

test('the rank holder also sees unannotated members under members makeHonest does not walk (redacted text, exceptions)', () => {
  // No schema of 0.1 has such a member with annotated children yet: a synthetic type pins it.
  const type = 'x.test.nestedcapture';
  const trees = CAPTURE_TREES as Record<string, CaptureTree>;
  trees[type] = {
    level: 'metadata',
    properties: {
      r: { level: 'redacted', properties: { k: { level: 'metadata' } } },
      e: { level: 'metadata', exception: 'text', properties: { k: { level: 'metadata' } } },
    },
  } as CaptureTree;
  try {
    const cases: Array<[string, Record<string, unknown>, number]> = [
      ['redacted', { r: { k: 'v' } }, 2],
      ['redacted', { r: { k: 'v', extra: 'u' } }, 3],
      ['metadata', { e: { k: 'v' } }, 1],
      ['metadata', { e: { k: 'v', extra: 1 } }, 3],
      ['redacted', { e: { extra: 'u' } }, 3],
    ];
    for (const [capture, data, want] of cases) {
      const ev = { aep: '0.1', id: 'x1', type, time: '2026-01-01T00:00:00Z', source: 'aep://t/a', agent: 'a', session: 's', seq: 1, capture, data };
      const holder = { rank: -1 };
      const h = makeHonest(ev, undefined, holder);
      assert.equal(rawRank(h), want, JSON.stringify(data));
      assert.equal(holder.rank, want, JSON.stringify(data));
    }
  } finally {
    delete trees[type];
  }
});
