import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  approvalDigest,
  approvalProof,
  checkApprovalProof,
  approvalView,
  optionEffect,
  labelEffect,
  downlevel,
  visibleText,
  hasInvisible,
  APPROVAL_DIGEST_ATTR,
  captureRank,
  CAPTURE_LEVELS,
  severityRank,
  isCaptureLevel,
  isSeverity,
} from '@aep/protocol';

const text = 'echo "cleaning build cache"\nrm -rf ~';
const request = (
  prompt: string,
  capture = 'full',
  options = [
    { id: 'allow', label: 'Allow' },
    { id: 'deny', label: 'Deny' },
  ],
) => ({
  aep: '0.1',
  id: '01REQ',
  type: 'attention.requested',
  subject: 'Bash',
  time: '2026-08-01T09:00:00Z',
  source: 'aep://h/agent/claude-code/session/s',
  agent: 'claude-code',
  session: 's',
  seq: 3,
  capture,
  [APPROVAL_DIGEST_ATTR]: approvalDigest(text),
  data: { kind: 'permission', prompt, options, respond_via: ['control'] },
});

test('approvalView: the complete verbatim text offers Allow; a cut, folded or synthesized one does not', () => {
  const full = approvalView(request(text));
  assert.equal(full.complete, true);
  assert.equal(full.text, text);
  assert.deepEqual(
    full.options.map((o) => [o.id, o.effect, o.offer]),
    [
      ['allow', 'allow', true],
      ['deny', 'deny', true],
    ],
  );
  for (const shown of ['echo "cleaning build cache" rm -rf ~', text.slice(0, 20), 'claude-code requests permission: Bash']) {
    const v = approvalView(request(shown, 'redacted'));
    assert.equal(v.complete, false, shown);
    assert.equal(v.text, undefined);
    assert.deepEqual(
      v.options.map((o) => [o.id, o.offer]),
      [
        ['allow', false],
        ['deny', true],
      ],
    );
  }
});

test('approvalView: a down-levelled request (hop to metadata) is incomplete', () => {
  const down = downlevel(request(text), 'metadata');
  assert.equal(approvalView(down).complete, false);
  assert.equal((down as Record<string, unknown>)[APPROVAL_DIGEST_ATTR], approvalDigest(text), 'the digest attribute survives');
});

test('approvalView: a permission request without a digest never offers Allow (fail closed)', () => {
  const e = request(text) as Record<string, unknown>;
  delete e[APPROVAL_DIGEST_ATTR];
  const v = approvalView(e);
  assert.equal(v.required, true);
  assert.equal(v.complete, false);
  assert.equal(v.options.find((o) => o.id === 'allow')!.offer, false);
});

test('approvalView: a label that contradicts its id is flagged (label "Deny" on id allow)', () => {
  const v = approvalView(
    request(text, 'full', [
      { id: 'allow', label: 'Deny' },
      { id: 'deny', label: 'Allow' },
    ]),
  );
  assert.equal(v.flagged, true);
  assert.deepEqual(
    v.options.map((o) => [o.id, o.effect, o.contradicts]),
    [
      ['allow', 'allow', true],
      ['deny', 'deny', true],
    ],
  );
  assert.equal(approvalView(request(text)).flagged, false);
});

test('optionEffect reads ids, labelEffect reads the first word of a label', () => {
  assert.equal(optionEffect('ALLOW'), 'allow');
  assert.equal(optionEffect('deny'), 'deny');
  assert.equal(optionEffect('1'), 'other');
  assert.equal(labelEffect('Deny it'), 'deny');
  assert.equal(labelEffect('  "Allow"'), 'allow');
  assert.equal(labelEffect('Maybe'), 'other');
});

test('approvalProof binds the request id and the complete text', () => {
  const p = approvalProof('01REQ', text);
  assert.match(p, /^[0-9a-f]{32}$/);
  assert.equal(checkApprovalProof('01REQ', text, p), true);
  assert.equal(checkApprovalProof('01OTHER', text, p), false);
  assert.equal(checkApprovalProof('01REQ', text.slice(0, -1), p), false);
  assert.equal(checkApprovalProof('01REQ', text, approvalDigest(text)), false, 'the public digest is not a proof');
  assert.equal(checkApprovalProof('01REQ', text, p.slice(0, 31)), false);
  assert.equal(checkApprovalProof('01REQ', text, undefined), false);
});

test('visibleText shows controls, bidi and zero-width characters and keeps newlines', () => {
  assert.equal(visibleText('a\nb'), 'a\nb');
  assert.equal(visibleText('ls\u202Egnp.exe'), 'ls\u27e8U+202E\u27e9gnp.exe');
  assert.equal(visibleText('x\u200By'), 'x\u27e8U+200B\u27e9y');
  assert.equal(visibleText('\x1b[2J\r\t'), '\u241b[2J\u240d\u2409');
  assert.equal(visibleText('tag\u{E0041}'), 'tag\u27e8U+E0041\u27e9');
  assert.equal(visibleText('caf\u00e9 \u{1F600}'), 'caf\u00e9 \u{1F600}');
  assert.equal(hasInvisible('plain text'), false);
  assert.equal(hasInvisible('a\u2066b'), true);
});

test('property: visibleText output has no invisible character left and keeps every visible one', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary' }), (s) => {
      const v = visibleText(s);
      assert.equal(hasInvisible(v), false);
      assert.equal(v.split('\n').length, s.split('\n').length);
    }),
    { numRuns: Number(process.env['AEP_FUZZ_RUNS'] ?? 300) },
  );
});

test('levels are looked up by own property only: prototype names are not levels', () => {
  for (const name of ['toString', 'constructor', '__proto__', 'hasOwnProperty', 'valueOf']) {
    assert.equal(captureRank(name), -1, name);
    assert.equal(severityRank(name), -1, name);
    assert.equal(isCaptureLevel(name), false);
    assert.equal(isSeverity(name), false);
  }
  CAPTURE_LEVELS.forEach((level, i) => assert.equal(captureRank(level), i, level));
  for (const other of ['', 'FULL', 'full ', 'metadata\u0000', 3, null, undefined, {}]) assert.equal(captureRank(other), -1, String(other));
  assert.equal(severityRank('critical'), 5);
});
