// Attention requests and answers: behaviour no protocol test pinned before the mutation run
// (docs/testing.md, "Mutation testing"): ready-made request data made honest for `redacted`
// (AEP-0003 §9.4/§9.5), the approval view of a malformed event (fail closed), and the edges of
// the text-answer mapping (AEP-0006 §6).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { redactAttentionRequestData, approvalView, approvalDigest, mapTextAnswer, redact, REDACTED_SECRET } from '@aep/protocol';

const SECRET = 'password=hunter22';

test('redactAttentionRequestData: prompt and every label go through §9.4; context is dropped; the rest is copied as is', () => {
  const data = {
    kind: 'form',
    prompt: `Set it: ${SECRET}`,
    options: [{ id: 'ok', label: `Use ${SECRET}` }, 'not-an-object', { id: 'bare' }],
    fields: [
      { id: 'f1', type: 'select', label: `Pick ${SECRET}`, choices: [{ id: 'c1', label: `Choice ${SECRET}` }, 7] },
      { id: 'f2', type: 'text', label: 'plain' },
      'odd',
    ],
    context: { secret: 'x' },
    expires_at: '2026-08-01T10:00:00Z',
    respond_via: ['control'],
  };
  const before = structuredClone(data);
  const out = redactAttentionRequestData(data);
  assert.deepEqual(data, before, 'never mutates its input');
  assert.deepEqual(out, {
    kind: 'form',
    prompt: `Set it: password=${REDACTED_SECRET}`,
    options: [{ id: 'ok', label: `Use password=${REDACTED_SECRET}` }, 'not-an-object', { id: 'bare' }],
    fields: [
      { id: 'f1', type: 'select', label: `Pick password=${REDACTED_SECRET}`, choices: [{ id: 'c1', label: `Choice password=${REDACTED_SECRET}` }, 7] },
      { id: 'f2', type: 'text', label: 'plain' },
      'odd',
    ],
    expires_at: '2026-08-01T10:00:00Z',
    respond_via: ['control'],
  });
  assert.ok(!('context' in out), 'context is full-only');
  assert.notEqual(out['respond_via'], undefined);
  // Idempotent: text that already went through the pipeline is unchanged.
  assert.deepEqual(redactAttentionRequestData(out), out);
  assert.equal(redact(out['prompt'] as string), out['prompt']);
});

test('redactAttentionRequestData: non-string prompt and labels, non-array lists and a __proto__ key are kept, not dropped', () => {
  const data = JSON.parse('{"prompt":5,"options":"none","fields":[{"id":"f","label":null,"choices":"x"}],"__proto__":{"polluted":true}}') as Record<
    string,
    unknown
  >;
  const out = redactAttentionRequestData(data);
  assert.equal(out['prompt'], 5);
  assert.equal(out['options'], 'none');
  assert.deepEqual(out['fields'], [{ id: 'f', label: null, choices: 'x' }]);
  assert.ok(Object.prototype.hasOwnProperty.call(out, '__proto__'), '__proto__ stays an own member');
  assert.deepEqual(Object.getPrototypeOf(out), Object.prototype, 'and does not become the prototype');
  assert.equal((out as { polluted?: unknown }).polluted, undefined);
  // Options are passed to the pipeline (operator-configured secret values).
  assert.equal(redactAttentionRequestData({ prompt: 'key is s3cr3tvalue' }, { secretValues: ['s3cr3tvalue'] })['prompt'], `key is ${REDACTED_SECRET}`);
});

test('approvalView: a malformed event (not an object, data not an object) is incomplete and offers nothing permissive', () => {
  for (const ev of [null, 'x', [], 7, { data: 'p' }, { data: [] }, { approvaldigest: approvalDigest('') }]) {
    const v = approvalView(ev);
    assert.equal(v.complete, false, JSON.stringify(ev));
  }
  // Only a prompt that hashes to the declared digest is complete.
  assert.equal(approvalView({ approvaldigest: approvalDigest('rm -rf /'), data: { kind: 'permission', prompt: 'rm -rf /' } }).complete, true);
  assert.equal(approvalView({ approvaldigest: approvalDigest('rm -rf /'), data: { kind: 'permission', prompt: 'rm -rf /tmp' } }).complete, false);
  assert.equal(approvalView({ approvaldigest: 5, data: { kind: 'permission', prompt: 'x' } }).complete, false);
});

const OPTS = {
  kind: 'question',
  options: [
    { id: 'a', label: 'Alpha' },
    { id: 'b', label: 'Beta' },
  ],
};

test('mapTextAnswer: a request without options keeps the text; an empty one is invalid', () => {
  assert.deepEqual(mapTextAnswer({ kind: 'input' }, 'anything'), { text: 'anything' });
  assert.deepEqual(mapTextAnswer({ kind: 'input' }, ''), { invalid: true });
  assert.deepEqual(mapTextAnswer(null, 'x'), { text: 'x' });
  assert.deepEqual(mapTextAnswer({ kind: 'input' }, 5 as never), { invalid: true }, 'a non-string answer is no text');
});

test('mapTextAnswer: unmatched text on a non-permission request is kept, or invalid when configured or blank', () => {
  assert.deepEqual(mapTextAnswer(OPTS, ' gamma '), { text: ' gamma ' });
  assert.deepEqual(mapTextAnswer(OPTS, 'gamma', { otherUnmatched: 'invalid' }), { invalid: true });
  assert.deepEqual(mapTextAnswer(OPTS, '   '), { invalid: true });
  assert.deepEqual(mapTextAnswer(OPTS, ' BETA '), { option: 'b' }, 'labels match trimmed, ignoring case');
  assert.deepEqual(mapTextAnswer(OPTS, 'A'), { option: 'a' }, 'ids match ignoring case');
});

test('mapTextAnswer: on a permission request, blank text is the refusing option without text; a configured refusing id is used', () => {
  const perm = {
    kind: 'permission',
    options: [
      { id: 'allow', label: 'Allow' },
      { id: 'deny', label: 'Deny' },
      { id: 'later', label: 'Later' },
    ],
  };
  assert.deepEqual(mapTextAnswer(perm, '  '), { option: 'deny' });
  assert.deepEqual(mapTextAnswer(perm, 'why not', { refusingOption: 'later' }), { option: 'later', text: 'why not' });
  assert.deepEqual(mapTextAnswer(perm, 'why not', { refusingOption: 'missing' }), { invalid: true });
  assert.deepEqual(mapTextAnswer(perm, 'why not', { permissionUnmatched: 'invalid' }), { invalid: true });
  assert.deepEqual(
    mapTextAnswer({ kind: 'permission', options: [{ id: 'allow' }, { id: 'ok' }] }, 'hmm'),
    { invalid: true },
    'no refusing option: never the granting one',
  );
});
