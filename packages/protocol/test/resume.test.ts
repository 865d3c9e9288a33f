// parseResumeToken / formatResumeToken (AEP-0001 §7.6): `{session}:{epoch}:{seq}`, parsed from the right.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parseResumeToken, formatResumeToken, AepError } from '@aep/protocol';

test('parses from the right so a session may contain colons', () => {
  assert.deepEqual(parseResumeToken('s_8f2c:3:187'), { session: 's_8f2c', epoch: 3, seq: 187 });
  assert.deepEqual(parseResumeToken('urn:x:s:0:0'), { session: 'urn:x:s', epoch: 0, seq: 0 });
});

test('rejects malformed tokens', () => {
  for (const t of ['', 's', 's:1', ':1:2', 's:-1:2', 's:1:2.5', 's:01:2', 's:1:', 's::1', 's:1:99999999999999999999', 's:a:1', 5, null]) {
    assert.equal(parseResumeToken(t), undefined, String(t));
  }
});

test('format refuses a caller bug with AEP_RESUME_INVALID', () => {
  assert.equal(formatResumeToken({ session: 's', epoch: 0, seq: 5 }), 's:0:5');
  for (const p of [
    { session: '', epoch: 0, seq: 0 },
    { session: 's', epoch: -1, seq: 0 },
    { session: 's', epoch: 0, seq: 1.5 },
  ]) {
    assert.throws(
      () => formatResumeToken(p),
      (e: unknown) => e instanceof AepError && e.code === 'AEP_RESUME_INVALID',
    );
  }
});

test('property: format then parse round-trips for any non-empty session', () => {
  fc.assert(
    fc.property(fc.string({ minLength: 1 }), fc.nat(), fc.nat(), (session, epoch, seq) => {
      assert.deepEqual(parseResumeToken(formatResumeToken({ session, epoch, seq })), { session, epoch, seq });
    }),
    { numRuns: Number(process.env['AEP_FUZZ_RUNS'] ?? 1000) },
  );
});
