// The redaction patterns exist twice (packages/protocol/src/redact.ts `bound`): with the escape-
// aware word boundary, and without it for text that holds no backslash, where the escape branch
// can never match. The two must agree on every such text, or the fast variant would let through
// what the escape-aware one redacts (AEP-0003 §9.4).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { redactOnce } from '../src/redact.js';

const RUNS = Number(process.env['AEP_FUZZ_RUNS'] ?? 300);
// Pieces that trigger every pattern family, glued with random text (no backslash anywhere).
const PIECES = [
  'token=abc123def456',
  'password: "hunter2',
  "api_key='k",
  'accessToken=zz',
  'Authorization: Bearer abcdefgh12345678',
  'bearer abcdefghijk',
  'eyJhbGciOi.eyJzdWIi.sig',
  'ghp_' + 'a'.repeat(24),
  'sk-' + 'b'.repeat(24),
  'xoxb-1234567890ab',
  'AKIAABCDEFGHIJKLMNOP',
  'AIza' + 'c'.repeat(35),
  '/home/operator/app',
  '/Users/ann/x',
  'C:/Users/bob',
  'ops@example.com',
  '+44 20 7946 0958',
  '(555) 123-4567',
  '555-123-4567',
  'MY_TOKEN=1',
];
const text = fc
  .array(fc.oneof(fc.constantFrom(...PIECES), fc.string({ maxLength: 12 }), fc.constantFrom(' ', '\n', '"', "'", '=', ':', '_', '-', '.')), { maxLength: 12 })
  .map((parts) => parts.join('').replace(/\\/g, '/'));

test('without a backslash, the plain patterns redact exactly what the escape-aware ones do', () => {
  fc.assert(
    fc.property(text, fc.boolean(), (t, pii) => {
      const opts = { pii, home: '/home/operator', secretNames: ['MY_TOKEN'] };
      assert.equal(redactOnce(t, opts, ['s3cr3t-value'], false), redactOnce(t, opts, ['s3cr3t-value'], true));
    }),
    { numRuns: RUNS },
  );
});

test('with an escape before a secret, only the escape-aware variant redacts it (the variant matters)', () => {
  const t = 'printf "a\\ntoken=abc123def456"';
  assert.match(redactOnce(t, {}, [], true), /\\n\[REDACTED:secret\]|\\ntoken=\[REDACTED:secret\]/);
  assert.notEqual(redactOnce('x\\nsk-' + 'b'.repeat(24), {}, [], false), redactOnce('x\\nsk-' + 'b'.repeat(24), {}, [], true));
});
