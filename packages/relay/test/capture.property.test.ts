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
