// compileFilter details beyond the conformance corpus (AEP-0003 §6).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { compileFilter, FILTER_RULES } from '@aep/protocol';

test('every issue is reported with a pointer, not just the first', () => {
  const f = compileFilter({ seq: 1, agent: 'a*', type: ['x.*', null], severity: { gt: 'info', lte: 'loud' } });
  assert.equal(f.ok, false);
  if (f.ok) return;
  assert.deepEqual(
    f.issues.map((i) => [i.rule, i.path]),
    [
      ['invalid-filter.forbidden-key', '/seq'],
      ['invalid-filter.wildcard', '/agent'],
      ['invalid-filter.bad-value', '/type/1'],
      ['invalid-filter.severity-comparison', '/severity/gt'],
      ['invalid-filter.severity-comparison', '/severity/lte'],
    ],
  );
  for (const i of f.issues) {
    assert.ok(i.rule in FILTER_RULES);
    assert.equal(i.section, 'AEP-0003 §6.2');
  }
});

test('only own attributes are read (an extension key named like an Object.prototype member)', () => {
  const f = compileFilter({ constructor: 'x' });
  assert.ok(f.ok);
  if (!f.ok) return;
  assert.equal(f.match({}), false);
  assert.equal(f.match({ constructor: 'x' }), true);
  const g = compileFilter({ tostring: 'x' });
  assert.ok(g.ok);
});

test('non-object events never match; the empty filter matches every object', () => {
  const f = compileFilter({});
  assert.ok(f.ok);
  if (!f.ok) return;
  for (const e of [null, 1, 'x', [], undefined]) assert.equal(f.match(e), false);
  assert.equal(f.match({}), true);
});

test('present-but-invalid severity never satisfies a comparison; a present null is not the default', () => {
  const f = compileFilter({ severity: { lte: 'critical' } });
  assert.ok(f.ok);
  if (!f.ok) return;
  assert.equal(f.match({ severity: 'loud' }), false);
  assert.equal(f.match({ severity: null }), false);
  assert.equal(f.match({}), true);
});

test('property: a compiled filter never throws, and invalid filters never match-all (they do not compile)', () => {
  fc.assert(
    fc.property(fc.jsonValue({ maxDepth: 2 }), fc.jsonValue({ maxDepth: 2 }), (filter, event) => {
      const f = compileFilter(filter);
      if (f.ok) assert.equal(typeof f.match(event), 'boolean');
      else assert.ok(f.issues.length > 0);
    }),
    { numRuns: Number(process.env['AEP_FUZZ_RUNS'] ?? 1000) },
  );
});

test('property: scalar equality has no coercion', () => {
  const scalar = fc.oneof(
    fc.string().filter((s) => !s.includes('*')),
    fc.integer(),
    fc.boolean(),
    fc.constantFrom('0', '1', 'true', 0, 1),
  );
  fc.assert(
    fc.property(scalar, scalar, (a, b) => {
      const f = compileFilter({ acmex: a });
      assert.ok(f.ok);
      if (f.ok) assert.equal(f.match({ acmex: b }), a === b);
    }),
    { numRuns: Number(process.env['AEP_FUZZ_RUNS'] ?? 1000) },
  );
});
