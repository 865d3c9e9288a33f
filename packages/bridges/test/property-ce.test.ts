// Property tests (fast-check) of the CloudEvents bridge (AEP-0005 §2, §5.1): any valid event →
// CE → event is identical modulo member order; forward output is CloudEvents 1.0 JSON; an
// extension the forward map cannot carry is dropped with a diagnostic and nothing else changes.
// Runs: AEP_FUZZ_RUNS (default 1000).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { canonicalJson, validateEvent } from '@aep/protocol';
import { decodeCloudEvent, encodeCloudEvent } from '@aep/bridges';
import { checkCloudEvent10 } from './support/checkers.js';
import { CE_RESERVED, validEvent } from './support/events.js';

const RUNS = Number(process.env['AEP_FUZZ_RUNS'] ?? 1000);

test('the generator yields valid events (else the property below proves nothing)', () => {
  fc.assert(
    fc.property(validEvent(), (e) => {
      assert.deepEqual(validateEvent(e), []);
    }),
    { numRuns: Math.min(RUNS, 300) },
  );
});

test('any valid event → CloudEvent → event is identical modulo member order (through JSON text too)', () => {
  fc.assert(
    fc.property(validEvent(), (e) => {
      const f = encodeCloudEvent(e);
      assert.ok(f.ok);
      assert.deepEqual(f.diagnostics, []);
      assert.deepEqual(checkCloudEvent10(f.value), []);
      assert.equal(f.value.type, `dev.aep.${String(e['type'])}`);
      assert.equal(f.value['time'], e['time'], 'time verbatim');
      const b = decodeCloudEvent(JSON.parse(JSON.stringify(f.value)));
      assert.ok(b.ok && b.value);
      assert.deepEqual(b.diagnostics, []);
      assert.equal(canonicalJson(b.value), canonicalJson(e));
    }),
    { numRuns: RUNS },
  );
});

test('reserved extension names are dropped with one diagnostic each; the rest round-trips', () => {
  let sawReserved = false;
  fc.assert(
    fc.property(validEvent({ reservedExtensions: true }), (e) => {
      const reserved = Object.keys(e).filter((k) => CE_RESERVED.includes(k));
      if (reserved.length > 0) sawReserved = true;
      const f = encodeCloudEvent(e);
      assert.ok(f.ok);
      assert.deepEqual(
        f.diagnostics.map((d) => [d.rule, d.attribute]),
        reserved.map((k) => ['ce.reserved-name', k]),
      );
      assert.deepEqual(checkCloudEvent10(f.value), []);
      const b = decodeCloudEvent(f.value);
      assert.ok(b.ok && b.value);
      const expected = Object.fromEntries(Object.entries(e).filter(([k]) => !reserved.includes(k)));
      assert.equal(canonicalJson(b.value), canonicalJson(expected));
    }),
    { numRuns: RUNS },
  );
  assert.ok(sawReserved, 'the generator produced reserved names');
});

test('a CE extension can never set or overwrite a core attribute', () => {
  const core = fc.constantFrom('aep', 'agent', 'session', 'run', 'step', 'seq', 'epoch', 'cause', 'severity', 'capture');
  fc.assert(
    fc.property(validEvent(), core, fc.oneof(fc.string(), fc.integer(), fc.boolean()), (e, name, value) => {
      const f = encodeCloudEvent(e);
      assert.ok(f.ok);
      const forged = { ...f.value, [name]: value };
      const b = decodeCloudEvent(forged);
      assert.ok(b.ok && b.value);
      assert.equal(canonicalJson(b.value), canonicalJson(e), 'the forged attribute changed nothing');
      assert.deepEqual(
        b.diagnostics.map((d) => [d.rule, d.attribute]),
        [['ce.core-collision', name]],
      );
    }),
    { numRuns: RUNS },
  );
});
