// mapTextAnswer details beyond the conformance corpus (AEP-0008 §1).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { mapTextAnswer, REFUSING_OPTION_IDS } from '@aep/protocol';

const perm = {
  kind: 'permission',
  prompt: 'p',
  options: [
    { id: 'allow', label: 'Allow' },
    { id: 'Deny', label: 'Deny' },
  ],
};

test('refusing option ids are matched ignoring case', () => {
  assert.deepEqual(mapTextAnswer(perm, 'nope'), { option: 'Deny', text: 'nope' });
  assert.ok(REFUSING_OPTION_IDS.includes('deny'));
});

test('an exact-case id wins when several ids differ only by case; otherwise ambiguous ids do not map', () => {
  const req = {
    kind: 'input',
    prompt: 'p',
    options: [
      { id: 'Yes', label: 'a' },
      { id: 'yes', label: 'b' },
    ],
  };
  assert.deepEqual(mapTextAnswer(req, 'yes'), { option: 'yes' });
  assert.deepEqual(mapTextAnswer(req, 'YES'), { text: 'YES' });
});

test('blank text: a permission refuses without a reason; other kinds are invalid', () => {
  assert.deepEqual(mapTextAnswer(perm, '   '), { option: 'Deny' });
  assert.deepEqual(mapTextAnswer({ kind: 'input', options: [{ id: 'a', label: 'A' }] }, ' '), { invalid: true });
});

test('malformed requests never throw', () => {
  for (const r of [null, 5, 'x', {}, { options: 'x' }, { options: [null, { id: 3 }, { label: 'x' }] }]) {
    assert.doesNotThrow(() => mapTextAnswer(r, 'hello'));
  }
  assert.deepEqual(mapTextAnswer({ kind: 'permission', options: [null, { id: 'allow' }] }, 'hello'), { invalid: true });
});

test('property: unmatched text never grants a permission', () => {
  const opt = fc.record({ id: fc.string({ minLength: 1, maxLength: 6 }), label: fc.string({ maxLength: 6 }) });
  fc.assert(
    fc.property(fc.array(opt, { minLength: 1, maxLength: 5 }), fc.string({ maxLength: 10 }), (options, text) => {
      const r = mapTextAnswer({ kind: 'permission', prompt: 'p', options }, text);
      if (r.option === undefined) return;
      const t = text.trim().toLowerCase();
      const matched = options.some((o) => o.id.toLowerCase() === t || o.label.trim().toLowerCase() === t);
      if (!matched) assert.ok(REFUSING_OPTION_IDS.includes(r.option.toLowerCase()), `unmatched text mapped to ${r.option}`);
    }),
    { numRuns: Number(process.env['AEP_FUZZ_RUNS'] ?? 1000) },
  );
});

test('a request without options, even a permission, leaves the text a text answer', () => {
  assert.deepEqual(mapTextAnswer({ kind: 'permission', prompt: 'p' }, 'go ahead'), { text: 'go ahead' });
  assert.deepEqual(mapTextAnswer({ kind: 'permission', prompt: 'p', options: [] }, 'go ahead'), { text: 'go ahead' });
});

test('labels are matched trimmed and ignoring case', () => {
  const req = {
    kind: 'input',
    prompt: 'p',
    options: [
      { id: 'a1', label: '  Yes please ' },
      { id: 'a2', label: 'No' },
    ],
  };
  assert.deepEqual(mapTextAnswer(req, 'yes PLEASE'), { option: 'a1' });
  assert.deepEqual(mapTextAnswer(req, ' no '), { option: 'a2' });
});
