// Action-link tokens (docs/security.md §9): a MAC is compared as the text it was issued as, so no
// other spelling of the same bytes (base64url's unused trailing bits) is accepted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LinkSigner } from '@aep/notify';

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

test('a MAC whose last character differs only in the unused bits is forged, not the same link', () => {
  const signer = new LinkSigner(() => 1_000);
  const { token } = signer.sign({ r: '01REQ', s: 'sess', a: { option: 'deny' } } as never, 60_000);
  assert.equal(signer.verify(token).ok, true);
  const [payload, mac] = token.split('.') as [string, string];
  const last = B64URL.indexOf(mac.at(-1)!);
  // The last of 43 characters encodes 4 data bits and 2 unused bits: flip the unused ones.
  for (const twin of [last ^ 1, last ^ 2, last ^ 3]) {
    const spelled = `${payload}.${mac.slice(0, -1)}${B64URL[twin]!}`;
    assert.deepEqual(Buffer.from(spelled.split('.')[1]!, 'base64url'), Buffer.from(mac, 'base64url'), 'the same MAC bytes');
    assert.deepEqual(signer.verify(spelled), { ok: false, reason: 'forged' });
  }
});
