// Second round of edges from the mutation run (docs/testing.md), each a promise no test pinned:
// - capture is the security boundary: a number or boolean field whose entry is text is free text
//   below `redacted` (gate.ts "project hardening"), never kept as structural;
// - an empty `source` is an invalid envelope on the fast path too;
// - a `type` filter value with a `*` before its trailing `.*` is refused, not read as a prefix;
// - the dedupe window's hash index keeps finding entries through many evictions;
// - long strings are fingerprinted by their sampled middle characters too;
// - the SSE encoder's refusal says what to do.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gateFormValues, validateEvent, envelopeFastValid, compileFilter, StreamValidator, fingerprint, encodeSseMessage, AepError } from '@aep/protocol';
import type { FieldSpec } from '@aep/protocol';

test('gating: text typed into a number or boolean field is free text, dropped below redacted and kept at redacted', () => {
  const fields: FieldSpec[] = [
    { id: 'n', type: 'number', label: 'N' },
    { id: 'b', type: 'boolean', label: 'B' },
  ];
  const values = { n: 'my password is hunter2', b: 'yes, token abc' };
  for (const level of ['none', 'metadata'] as const) assert.deepEqual(gateFormValues(fields, values, level), {}, level);
  assert.deepEqual(gateFormValues(fields, values, 'redacted'), values);
  assert.deepEqual(gateFormValues(fields, { n: Infinity, b: 1 }, 'metadata'), {}, 'a non-finite number or a number for a boolean is not structural');
  assert.deepEqual(gateFormValues(fields, { n: -2.5, b: false }, 'metadata'), { n: -2.5, b: false });
});

test('an empty source is an invalid envelope, on the fast path and in validateEvent', () => {
  const e = { aep: '0.1', id: 'E', type: 'progress.status', time: '2026-08-01T09:00:00Z', source: '', agent: 'a', session: 's', seq: 1 };
  assert.equal(envelopeFastValid(e), false);
  assert.ok(
    validateEvent(e).some((i) => i.rule === 'envelope.source'),
    JSON.stringify(validateEvent(e)),
  );
  assert.equal(envelopeFastValid({ ...e, source: 'aep://h/' + 'x'.repeat(300) }), true, 'a long source is checked directly');
  assert.equal(envelopeFastValid({ ...e, source: 'no scheme ' + 'x'.repeat(300) }), false);
});

test('attr-match: a `*` anywhere before the trailing `.*` of a type pattern is refused', () => {
  for (const t of ['to*l.*', '*tool.*', 'a.*.b.*', 'a..*']) {
    const f = compileFilter({ type: t });
    assert.ok(!f.ok && f.issues.some((i) => i.rule === 'invalid-filter.wildcard'), t);
  }
  const u = compileFilter({ severity: { gte: undefined } });
  assert.ok(!u.ok && u.issues[0]!.message === 'invalid-filter.severity-comparison: undefined is not one of the six severity levels');
});

test('dedupe window: through thousands of evictions the index finds exactly the last `window` ids', () => {
  const W = 1000;
  const sv = new StreamValidator({ dedupeWindow: W });
  const ev = (i: number, data: Record<string, unknown> = {}) => ({
    aep: '0.1',
    id: `K${i}`,
    type: 'control.pause',
    time: '2026-08-01T09:00:00Z',
    source: 'aep://h/agent/c',
    agent: 'c',
    session: 's',
    subject: 'x',
    data,
  });
  const N = 6000;
  for (let i = 0; i < N; i++) sv.push(ev(i), i);
  assert.equal(sv.rememberedIds, W);
  for (const i of [N - 1, N - 2, N - W + 1, N - W, N - 500]) {
    assert.deepEqual(sv.push(ev(i), N), [], `K${i} redelivered`);
    assert.deepEqual(
      sv.push(ev(i, { x: 1 }), N).map((x) => x.rule),
      ['stream.id-conflict'],
      `K${i} remembered`,
    );
  }
  assert.deepEqual(sv.push(ev(N - W - 1, { x: 1 }), N), [], 'the one before the window is forgotten');
});

test('fingerprint: long strings also hash 16 evenly spaced characters', () => {
  const n = 1000;
  const step = Math.floor(n / 17);
  const long = 'a'.repeat(n);
  for (const k of [1, 2, 8, 15, 16]) {
    const i = k * step;
    const changed = long.slice(0, i) + 'b' + long.slice(i + 1);
    assert.notEqual(fingerprint(changed), fingerprint(long), `sampled position ${i}`);
  }
});

test('SSE: the refusal of a multi-line data field says how to fix it', () => {
  assert.throws(
    () => encodeSseMessage({ data: '{\n}' }),
    (e: unknown) => e instanceof AepError && e.message === 'SSE data must be one line: serialize the Event without line breaks (AEP-0003 §3.3)',
  );
  assert.throws(
    () => encodeSseMessage({ event: 'a\rb', data: '{}' }),
    (e: unknown) => e instanceof AepError && e.message === 'an SSE event name cannot hold a line break (AEP-0003 §3.3)',
  );
});
