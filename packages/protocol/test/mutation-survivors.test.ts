// Survivors of the issue 20 mutation run (docs/testing.md), killed: the approval proof's exact
// derivation (its domain string is part of contract C1: every surface and emitter must compute
// the same proof), a proof longer than 32 characters whose prefix matches is refused (the
// prefix-token class of bug), and the NDJSON helpers' messages and line-break checks at the
// first character.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  AepError,
  AepEventError,
  approvalProof,
  checkApprovalProof,
  checkExtensionAttributes,
  encodeNdjsonLines,
  gateFormValues,
  parseNdjson,
} from '@aep/protocol';

test('approvalProof = first 32 hex of sha256 over the canonical ["aep-approval-proof", id, text]', () => {
  const id = '01J0000000000000000000REQ1';
  const text = 'rm -rf /tmp/x\nsecond line';
  const independent = createHash('sha256')
    .update(JSON.stringify(['aep-approval-proof', id, text]))
    .digest('hex')
    .slice(0, 32);
  assert.equal(approvalProof(id, text), independent);
  assert.equal(approvalProof(id, text), '50d86b461c1f01e8868da76ccf358055', 'a pinned vector: surfaces built from other versions must agree');
});

test('checkApprovalProof: exactly 32 characters; a longer string with the right prefix is refused', () => {
  const p = approvalProof('r', 't');
  assert.equal(checkApprovalProof('r', 't', p), true);
  assert.equal(checkApprovalProof('r', 't', `${p}0`), false);
  assert.equal(checkApprovalProof('r', 't', `${p}${p}`), false);
  assert.equal(checkApprovalProof('r', 't', p.slice(0, 31)), false);
});

test('parseNdjson names the line (blank lines counted) and the parser message', () => {
  const r = parseNdjson('{"a":1}\n\n{"b":');
  assert.equal(r.ok, false);
  assert.ok(!r.ok && r.line === 2 && /^line 2 is not valid JSON: \S/.test(r.detail), JSON.stringify(r));
});

test('encodeNdjsonLines refuses a line break anywhere, the first character included', () => {
  for (const l of ['\n{}', '\r{}', '{}\n', '{"a":\r1}']) {
    assert.throws(
      () => encodeNdjsonLines(['{}', l]),
      (e: unknown) =>
        e instanceof AepError && e.code === 'AEP_NDJSON_LINE' && e.message === 'NDJSON line 1 holds a line break: one Event per line (AEP-0003 §3.1)',
      JSON.stringify(l),
    );
  }
  assert.equal(encodeNdjsonLines(['{}', '{"a":1}']), '{}\n{"a":1}\n');
});

test("gateFormValues below redacted: choice ids only from the field's own choice objects; odd choice lists never throw", () => {
  const fields = [
    { id: 'n', type: 'number' },
    { id: 'b', type: 'boolean' },
    { id: 's', type: 'select', choices: [null, undefined, 'x', { id: 'a' }, { id: 'b' }] },
    { id: 't', type: 'select' },
    { id: 'm', type: 'select', choices: [{ id: 'a' }] },
  ];
  // Typed entries are structural only with their own JSON type (a boolean is not a number, nor the reverse).
  assert.deepEqual(gateFormValues(fields, { n: 3, b: true, s: 'a', t: 'a', m: 'free text' }, 'metadata'), { n: 3, b: true, s: 'a' });
  assert.deepEqual(gateFormValues(fields, { n: true, b: 4, s: ['a', 'b'], m: ['a', 'zz'] }, 'metadata'), { s: ['a', 'b'] });
  assert.deepEqual(gateFormValues(fields, { s: 1, m: 1, s2: 'a' }, 'none'), {});
  assert.deepEqual(gateFormValues(fields, { n: true, b: 4, m: 'free text' }, 'redacted'), { n: true, b: 4, m: 'free text' });
});

test('checkExtensionAttributes: a value that is not a string, integer or boolean is refused, naming what it is', () => {
  const refused = (v: unknown, got: string) =>
    assert.throws(
      () => checkExtensionAttributes({ ext: v }),
      (e: unknown) =>
        e instanceof AepError &&
        e.code === 'AEP_EXT_INVALID' &&
        e.message === `extension attribute "ext" must be a string, integer or boolean, got ${got} (AEP-0001 §5.4)`,
      got,
    );
  refused(1.5, 'non-integer number');
  refused(null, 'null');
  refused([1], 'array');
  refused({}, 'object');
  refused(undefined, 'undefined');
  for (const ok of ['s', '', true, false, 0, -7, Number.MAX_SAFE_INTEGER]) checkExtensionAttributes({ ext: ok });
  assert.equal(new AepEventError('m', []).name, 'AepEventError');
});
