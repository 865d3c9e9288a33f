// The content fingerprints of the stream rules (AEP-0001 §7.4: a repeat of (source, id) is
// redelivery only when it is the same event) at the edges where a weaker hash would call two
// different events the same: numbers on both sides of the 32-bit integer range, nesting at the
// 48-level summary boundary, strings at the 32-character sampling boundary (what is sampled and
// what is not, as docs/decisions.md says), raw text across the 65,536-unit encoding steps with a
// surrogate pair on each side of a step, and the byte path `aep validate` takes (PushHints.bytes).
// Issue 20, the mutation run of stream.ts (docs/testing.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StreamValidator, fingerprint, fingerprintText } from '@aep/protocol';

const SRC = 'aep://h/agent/bot/session/f';
const event = (id: string, seq: number, data: unknown) => ({
  aep: '0.1',
  id,
  type: 'progress.status',
  time: '2026-08-01T09:00:00Z',
  source: SRC,
  agent: 'bot',
  session: 'f',
  seq,
  data,
});

test('numbers: an integer and any other number never share a fingerprint through the 32-bit path', () => {
  // Integers in int32 are hashed as such; anything else by its text. A wider test would fold
  // 1.5 into 1, or 2^32 + 5 into 5, or wrap 2^31 onto -2^31.
  const pairs: [number, number][] = [
    [1, 1.5],
    [-1, -1.5],
    [5, 4_294_967_301],
    [-2_147_483_648, 2_147_483_648],
    [2_147_483_647, -2_147_483_649],
    [0, 4_294_967_296],
    [4_294_967_301, 8_589_934_597], // equal modulo 2^32, both outside int32
    [-2_147_483_649, -6_442_450_945], // the same below int32
  ];
  for (const [a, b] of pairs) {
    assert.notEqual(fingerprint({ n: a }), fingerprint({ n: b }), `${a} vs ${b}`);
    const sv = new StreamValidator();
    assert.deepEqual(sv.push(event('N1', 1, { n: a }), 0), []);
    assert.deepEqual(
      sv.push(event('N1', 1, { n: b }), 1).map((i) => i.rule),
      ['stream.id-conflict'],
      `${a} then ${b} under one id`,
    );
  }
  // Both edges of the int32 range are ordinary values.
  for (const v of [-2_147_483_648, 2_147_483_647]) assert.equal(fingerprint({ n: v }), fingerprint(JSON.parse(`{"n":${v}}`)));
});

test('20,000 distinct values get 20,000 distinct fingerprints (53 bits, not a 21-bit remainder)', () => {
  const seen = new Set<number>();
  for (let i = 0; i < 10_000; i++) {
    seen.add(fingerprint({ i }));
    seen.add(fingerprint([`v${i}`]));
  }
  assert.equal(seen.size, 20_000);
});

/** `levels` arrays (or objects) around `leaf`: the leaf sits at depth `levels`. */
const nestArrays = (levels: number, leaf: unknown): unknown => (levels === 0 ? leaf : [nestArrays(levels - 1, leaf)]);
const nestObjects = (levels: number, leaf: unknown): unknown => (levels === 0 ? leaf : { a: nestObjects(levels - 1, leaf) });

test('nesting: containers down to depth 48 are hashed; deeper ones are summarized (docs/decisions.md)', () => {
  for (const nest of [nestArrays, nestObjects]) {
    assert.notEqual(fingerprint(nest(48, [1])), fingerprint(nest(48, [2])), `${nest.name}: a container at depth 48 is hashed`);
    assert.notEqual(fingerprint(nest(48, { x: 1 })), fingerprint(nest(48, { x: 2 })), `${nest.name}: an object at depth 48 is hashed`);
    assert.equal(fingerprint(nest(49, [1])), fingerprint(nest(49, [2])), `${nest.name}: a container at depth 49 is summarized`);
    assert.equal(fingerprint(nest(49, { x: 1 })), fingerprint(nest(49, { x: 2 })), `${nest.name}: an object at depth 49 is summarized`);
    // A primitive directly inside the deepest hashed container is hashed (depth 49).
    assert.notEqual(fingerprint(nest(49, 1)), fingerprint(nest(49, 2)), `${nest.name}: a number at depth 49`);
  }
});

test('strings: up to 32 characters every one counts; longer ones by length, first and last 8, and 16 spaced characters', () => {
  const swap = (s: string, i: number) => s.slice(0, i) + (s[i] === 'x' ? 'y' : 'x') + s.slice(i + 1);
  for (const n of [1, 2, 3, 31, 32]) {
    const s = 'abcdefghijklmnopqrstuvwxyz0123456789'.slice(0, n);
    for (let i = 0; i < n; i++) assert.notEqual(fingerprint(swap(s, i)), fingerprint(s), `length ${n}, position ${i}`);
  }
  // 100 characters: step 5 (floor(100 / 17)); sampled: 0-7, 92-99 and 5, 10, ..., 80.
  const s = 'q'.repeat(100);
  const sampled = new Set<number>([0, 1, 2, 3, 4, 5, 6, 7, 92, 93, 94, 95, 96, 97, 98, 99]);
  for (let k = 1; k <= 16; k++) sampled.add(5 * k);
  for (let i = 0; i < 100; i++) {
    if (sampled.has(i)) assert.notEqual(fingerprint(swap(s, i)), fingerprint(s), `sampled position ${i}`);
    else assert.equal(fingerprint(swap(s, i)), fingerprint(s), `position ${i} is not sampled (the cost bound)`);
  }
  assert.notEqual(fingerprint(s), fingerprint(s + 'q'), 'the length always counts');
});

test('a difference the structural fingerprint does not sample is redelivery by default, a conflict under rawFingerprints', () => {
  const a = event('L1', 1, { text: 'q'.repeat(100) });
  const b = event('L1', 1, { text: 'q'.repeat(21) + 'x' + 'q'.repeat(78) });
  const structural = new StreamValidator();
  assert.deepEqual(structural.push(a, 0), []);
  assert.deepEqual(structural.push(b, 1), [], 'taken as the same event (docs/decisions.md)');
  const raw = new StreamValidator({ rawFingerprints: true });
  assert.deepEqual(raw.push(a, 0, { raw: JSON.stringify(a) }), []);
  assert.deepEqual(
    raw.push(b, 1, { raw: JSON.stringify(b) }).map((i) => i.rule),
    ['stream.id-conflict'],
  );
});

test('fingerprintText: a full 65,536-unit step of 3-byte characters is hashed whole', () => {
  const step = '\u4e2d'.repeat(65_536);
  assert.notEqual(fingerprintText(step), fingerprintText(step.slice(0, -1) + '\u6587'));
  assert.notEqual(fingerprintText(step + 'a'), fingerprintText(step.slice(0, -1) + '\u6587a'));
});

test('fingerprintText: a surrogate pair is never split at a 65,536-unit step (the two halves would both encode as U+FFFD)', () => {
  // High surrogates at both ends of their range (U+D800, U+DBFF) and one between, with the pair
  // on each side of the step: units 65,535-65,536 (straddling it) and 65,534-65,535 (ending it).
  const pairs: [string, string][] = [
    ['\u{10000}', '\u{10001}'],
    ['\u{1F600}', '\u{1F601}'],
    ['\u{10FC00}', '\u{10FC01}'],
  ];
  for (const [a, b] of pairs) {
    for (const before of [65_535, 65_534]) {
      const pad = 'x'.repeat(before);
      assert.notEqual(fingerprintText(pad + a + 'z'), fingerprintText(pad + b + 'z'), `${a.codePointAt(0)!.toString(16)} after ${before} units`);
    }
  }
});

test('raw fingerprints over bytes (aep validate): non-ASCII lines fall back to their text; bytes without raw are ignored', () => {
  const sv = new StreamValidator({ rawFingerprints: true });
  const push = (e: Record<string, unknown>, i: number, text: string, withRaw = true) => {
    const bytes = Buffer.from(`\n${text}\n`);
    return sv.push(e, i, { raw: withRaw ? text : undefined, bytes, start: 1, end: bytes.length - 1 }).map((x) => x.rule);
  };
  // Non-ASCII: two lines differing only in a non-ASCII character are different events.
  const u1 = event('U1', 1, { t: '\u00e9t\u00e9' });
  const u2 = event('U1', 1, { t: '\u00e9t\u00e8' });
  assert.deepEqual(push(u1, 0, JSON.stringify(u1)), []);
  assert.deepEqual(push(u1, 1, JSON.stringify(u1)), [], 'the same non-ASCII line again is redelivery');
  assert.deepEqual(push(u2, 2, JSON.stringify(u2)), ['stream.id-conflict']);
  // ASCII over bytes: the same verdicts as over the text.
  const a1 = event('A1', 2, { t: 'a' });
  assert.deepEqual(push(a1, 3, JSON.stringify(a1)), []);
  assert.deepEqual(sv.push(a1, 4, { raw: JSON.stringify(a1) }), [], 'bytes and text give one fingerprint');
  assert.deepEqual(push(a1, 5, JSON.stringify(a1).replace('"t":', '"t": ')), ['stream.id-conflict']);
  // Bytes without raw: the fingerprint is of JSON.stringify(event), whatever the bytes hold.
  const w1 = event('W1', 3, { t: 'w' });
  assert.deepEqual(push(w1, 6, JSON.stringify(w1, null, 1).replace(/\n/g, ' '), false), []);
  assert.deepEqual(sv.push(w1, 7, { raw: JSON.stringify(w1) }), [], 'the compact text is the same event');
});
