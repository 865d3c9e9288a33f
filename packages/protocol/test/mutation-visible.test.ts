// What a person approving sees (docs/security.md A-visible): every invisible, control or bidi
// code point range at its edges and the stand-in it is shown as; plus small wire helpers the
// mutation run found unpinned (docs/testing.md): canonical JSON of non-JSON values, version
// selection, structured SSE comments, claims without a random source.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isInvisibleCodePoint, visibleText, hasInvisible, canonicalJson, digest, selectVersion, parseSseComment, generateClaim, AepError } from '@aep/protocol';

test('isInvisibleCodePoint: each range and single code point at its edges', () => {
  const ranges: [number, number][] = [
    [0x00, 0x09],
    [0x0b, 0x1f],
    [0x7f, 0x7f],
    [0x80, 0x9f],
    [0x200b, 0x200f],
    [0x2028, 0x202e],
    [0x2060, 0x206f],
    [0xfe00, 0xfe0f],
    [0xfff9, 0xfffb],
    [0xe0000, 0xe007f],
    [0xe0100, 0xe01ef],
    [0xd800, 0xdfff],
  ];
  for (const [lo, hi] of ranges) {
    for (const cp of [lo, hi, (lo + hi) >> 1]) assert.equal(isInvisibleCodePoint(cp), true, cp.toString(16));
  }
  for (const cp of [0x00ad, 0x034f, 0x061c, 0x115f, 0x1160, 0x17b4, 0x17b5, 0x180e, 0x3164, 0xffa0, 0xfeff])
    assert.equal(isInvisibleCodePoint(cp), true, cp.toString(16));
  const visible = [
    0x0a,
    0x20,
    0x7e,
    0xa0,
    0xac,
    0xae,
    0x034e,
    0x0350,
    0x061b,
    0x061d,
    0x115e,
    0x1161,
    0x17b3,
    0x17b6,
    0x180d,
    0x180f,
    0x3163,
    0x3165,
    0xff9f,
    0xffa1,
    0xfefe,
    0xff00,
    0x200a,
    0x2010,
    0x2027,
    0x202f,
    0x205f,
    0x2070,
    0xfdff,
    0xfe10,
    0xfff8,
    0xfffc,
    0xdfff + 1,
    0xd7ff,
    0xdffff,
    0xe0080,
    0xe00ff,
    0xe01f0,
    0x1f600,
    0x41,
  ];
  for (const cp of visible) assert.equal(isInvisibleCodePoint(cp), false, cp.toString(16));
});

test('visibleText: C0 controls become control pictures, DEL ␡, others ⟨U+XXXX⟩ (4+ hex digits, upper case); LF and text are kept', () => {
  assert.equal(visibleText('a\u0000b\u0009c\u001bd\u001fe'), 'a\u2400b\u2409c\u241bd\u241fe');
  assert.equal(visibleText('x\u007fy'), 'x\u2421y');
  assert.equal(visibleText('\u202eevil'), '\u27e8U+202E\u27e9evil');
  assert.equal(visibleText('soft\u00adhyphen'), 'soft\u27e8U+00AD\u27e9hyphen');
  assert.equal(visibleText('\u{E0041}tag'), '\u27e8U+E0041\u27e9tag', 'a tag character (a surrogate pair) is one stand-in');
  assert.equal(visibleText('lone \uD800 high'), 'lone \u27e8U+D800\u27e9 high');
  assert.equal(visibleText('end \uD800'), 'end \u27e8U+D800\u27e9');
  assert.equal(visibleText('lone \uDC00 low'), 'lone \u27e8U+DC00\u27e9 low');
  assert.equal(visibleText('line one\nline two\r\n'), 'line one\nline two\u240d\n');
  assert.equal(visibleText('caf\u00e9 \u{1F600} \u00a0ok'), 'caf\u00e9 \u{1F600} \u00a0ok', 'visible non-ASCII is untouched');
  assert.equal(visibleText('\u200b\u200b'), '\u27e8U+200B\u27e9\u27e8U+200B\u27e9');
  assert.equal(visibleText(''), '');
  assert.ok(hasInvisible('\u0085') && !hasInvisible('\u00a0'));
});

test('canonicalJson: sorted members, undefined and functions skipped (null in arrays), non-finite numbers null', () => {
  assert.equal(canonicalJson({ b: 1, a: [undefined, () => 1, 'x', NaN], c: undefined, d: () => 2, e: null }), '{"a":[null,null,"x",null],"b":1,"e":null}');
  assert.equal(canonicalJson(undefined), 'null');
  assert.equal(canonicalJson(Infinity), 'null');
  assert.equal(canonicalJson('a"b'), '"a\\"b"');
  assert.equal(canonicalJson({ '\u00e9': 1, z: 2, A: 3 }), '{"A":3,"z":2,"\u00e9":1}');
  assert.equal(digest({ b: 1, a: 2 }), digest({ a: 2, b: 1 }));
  assert.match(digest('a'), /^[0-9a-f]{32}$/);
});

test('selectVersion: only a list is a list of versions', () => {
  for (const v of [undefined, '0.1', { 0: '0.1' }, null]) assert.equal(selectVersion(v), undefined, JSON.stringify(v));
  assert.equal(selectVersion(['0.1']), '0.1');
  assert.equal(selectVersion([]), undefined);
});

test('SSE comments: replay-exhausted needs a session, a space and an epoch:seq of two unsigned integers', () => {
  assert.deepEqual(parseSseComment('ping'), { kind: 'ping' });
  assert.deepEqual(parseSseComment('replay-exhausted s 3:4'), { kind: 'replay-exhausted', session: 's', earliest: { epoch: 3, seq: 4 } });
  for (const text of [
    'replay-exhausted s :4',
    'replay-exhausted s 3:',
    'replay-exhausted s 34',
    'replay-exhausted  3:4',
    'replay-exhausted 3:4',
    'replay-exhausted s -1:4',
    'replay-exhausted s 3:4x',
    'replay-exhausteds 3:4',
    'replay-exhausted s 9007199254740993:1',
    'pings',
  ]) {
    assert.deepEqual(parseSseComment(text), { kind: 'comment', text }, text);
  }
});

test('generateClaim without a random source throws AEP_NO_RANDOM', () => {
  const saved = Object.getOwnPropertyDescriptor(globalThis, 'crypto');
  try {
    Object.defineProperty(globalThis, 'crypto', { value: undefined, configurable: true });
    assert.throws(
      () => generateClaim(),
      (e: unknown) => e instanceof AepError && e.code === 'AEP_NO_RANDOM' && /pass a random fill$/.test(e.message),
    );
    Object.defineProperty(globalThis, 'crypto', { value: { getRandomValues: 1 }, configurable: true });
    assert.throws(
      () => generateClaim(),
      (e: unknown) => e instanceof AepError && e.code === 'AEP_NO_RANDOM',
    );
  } finally {
    if (saved) Object.defineProperty(globalThis, 'crypto', saved);
  }
  assert.equal(generateClaim().length, 43);
});
