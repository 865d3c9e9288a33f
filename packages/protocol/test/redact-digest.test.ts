// sha256 / canonicalJson / digest (AEP-0003 §9.3): known SHA-256 vectors (FIPS 180-4 examples),
// block-boundary lengths against node:crypto as an oracle (tests may use node:, src may not).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { sha256Hex, canonicalJson, digest } from '@aep/protocol';

test('SHA-256 known vectors', () => {
  assert.equal(sha256Hex(''), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  assert.equal(sha256Hex('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  assert.equal(sha256Hex('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq'), '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1');
  assert.equal(
    sha256Hex('abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu'),
    'cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1',
  );
  assert.equal(sha256Hex('The quick brown fox jumps over the lazy dog'), 'd7a8fbb307d7809469ca9abcb0082e4f8d5651e46d3cdb762d02d0bf37c9e592');
  assert.equal(sha256Hex('a'.repeat(1_000_000)), 'cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0');
});

test('SHA-256 agrees with node:crypto at every padding boundary and on non-ASCII text', () => {
  for (let n = 0; n <= 200; n++) {
    const s = 'x'.repeat(n);
    assert.equal(sha256Hex(s), createHash('sha256').update(s, 'utf8').digest('hex'), `length ${n}`);
  }
  for (const s of ['é', '日本語テキスト', '😀 emoji', '\u0000\uffff']) assert.equal(sha256Hex(s), createHash('sha256').update(s, 'utf8').digest('hex'));
  const bytes = new Uint8Array(300).map((_, i) => (i * 7) & 0xff);
  assert.equal(sha256Hex(bytes), createHash('sha256').update(bytes).digest('hex'));
});

test('canonicalJson sorts members, drops whitespace, serializes like JSON.stringify', () => {
  assert.equal(canonicalJson({ b: 1, a: [true, null, 'x'], c: { z: 1, y: 2 } }), '{"a":[true,null,"x"],"b":1,"c":{"y":2,"z":1}}');
  assert.equal(canonicalJson('a"b'), '"a\\"b"');
  assert.equal(canonicalJson(1e21), '1e+21');
  assert.equal(canonicalJson({ u: undefined, n: NaN }), '{"n":null}');
  assert.equal(canonicalJson([undefined]), '[null]');
});

test('digest = first 16 bytes of SHA-256 of the canonical JSON, 32 hex chars, member order irrelevant', () => {
  const d = digest({ b: 2, a: 1 });
  assert.match(d, /^[0-9a-f]{32}$/);
  assert.equal(d, digest({ a: 1, b: 2 }));
  assert.equal(d, createHash('sha256').update('{"a":1,"b":2}').digest('hex').slice(0, 32));
  assert.equal(digest('a'), createHash('sha256').update('"a"').digest('hex').slice(0, 32), 'a string is hashed as its JSON form');
  assert.notEqual(digest('a'), digest('b'));
});
