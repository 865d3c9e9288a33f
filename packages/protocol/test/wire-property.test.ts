// Property tests of the wire layer (issue 13 item 3): whatever the chunking, the SSE parser
// yields exactly what the encoder wrote (LF or CRLF line ends); arbitrary bytes never make it
// throw and their parse does not depend on the chunking; NDJSON bodies and frames round-trip;
// ULIDs from one generator are strictly increasing. Runs: AEP_FUZZ_RUNS (default 500).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  encodeSseMessage,
  encodeSseComment,
  encodeReplayExhausted,
  SSE_PING,
  SseParser,
  parseSse,
  parseSseComment,
  encodeNdjson,
  parseNdjson,
  subscribeFrame,
  encodeFrame,
  parseSocketMessage,
  monotonicFactory,
  isUlid,
} from '@aep/protocol';
import type { SseItem } from '@aep/protocol';

const RUNS = Number(process.env['AEP_FUZZ_RUNS'] ?? 500);

// One-line text: anything but CR and LF (the encoder refuses those in data and event names).
const oneLine = fc
  .string({ maxLength: 40, unit: fc.oneof(fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }), fc.constantFrom(' ', ':', '\u0000', '\uFEFF')) })
  .map((s) => s.replace(/[\r\n]/g, ''));
const idText = oneLine.map((s) => s.split('\u0000').join(''));

type Planned = { wire: string; item: SseItem | null };

const message: fc.Arbitrary<Planned> = fc
  .record({
    event: fc.option(
      oneLine.filter((s) => s.length > 0),
      { nil: undefined },
    ),
    data: oneLine,
    id: fc.option(idText, { nil: undefined }),
  })
  .map(({ event, data, id }) => {
    const m = { ...(event !== undefined ? { event } : {}), data, ...(id !== undefined ? { id } : {}) };
    const item: SseItem = { kind: 'message', event: event ?? 'message', data, ...(id !== undefined ? { id } : {}) };
    return { wire: encodeSseMessage(m), item };
  });
const comment: fc.Arbitrary<Planned> = oneLine.map((t) => ({ wire: encodeSseComment(t), item: parseSseComment(t) }));
const marker: fc.Arbitrary<Planned> = fc
  .tuple(
    oneLine.filter((s) => s.length > 0),
    fc.nat(),
    fc.nat(),
  )
  .map(([s, e, n]) => ({
    wire: encodeReplayExhausted(s, { epoch: e, seq: n }),
    item: { kind: 'replay-exhausted', session: s, earliest: { epoch: e, seq: n } },
  }));
const ping: fc.Arbitrary<Planned> = fc.constant({ wire: SSE_PING, item: { kind: 'ping' } });
const stream = fc.array(fc.oneof(message, message, comment, marker, ping), { maxLength: 12 });

/** Cut points → chunks. */
function chunked(text: string, cuts: number[]): string[] {
  const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const out: string[] = [];
  let prev = 0;
  for (const p of points) {
    out.push(text.slice(prev, p));
    prev = p;
  }
  out.push(text.slice(prev));
  return out;
}

function feed(chunks: string[]): SseItem[] {
  const p = new SseParser();
  const out: SseItem[] = [];
  for (const c of chunks) out.push(...p.push(c));
  out.push(...p.end());
  return out;
}

test('SSE: any chunking of an encoded stream parses to exactly the encoded items (LF and CRLF)', () => {
  fc.assert(
    fc.property(stream, fc.array(fc.nat(), { maxLength: 30 }), fc.boolean(), (items, cuts, crlf) => {
      let wire = items.map((i) => i.wire).join('');
      assert.ok(!wire.includes('\r'), 'the encoder writes LF only');
      if (crlf) wire = wire.replace(/\n/g, '\r\n');
      const want = items.map((i) => i.item);
      assert.deepEqual(feed(chunked(wire, cuts)), want);
    }),
    { numRuns: RUNS },
  );
});

test('SSE: arbitrary text never throws, and its parse does not depend on the chunking', () => {
  const noisy = fc.string({
    maxLength: 200,
    unit: fc.oneof(
      fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }),
      fc.constantFrom('\n', '\r', ':', ' ', 'data:', 'event:', 'id:', '\r\n', '\n\n', '\uFEFF'),
    ),
  });
  fc.assert(
    fc.property(noisy, fc.array(fc.nat(), { maxLength: 40 }), (text, cuts) => {
      assert.deepEqual(feed(chunked(text, cuts)), parseSse(text));
    }),
    { numRuns: RUNS },
  );
});

const jsonValue = fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.parse(JSON.stringify(v)) as unknown);

test('NDJSON: encode then parse gives the values back, also with CRLF line ends and blank lines inserted', () => {
  fc.assert(
    fc.property(fc.array(jsonValue, { maxLength: 10 }), fc.boolean(), fc.array(fc.nat(), { maxLength: 5 }), (values, crlf, blanks) => {
      const body = encodeNdjson(values);
      let lines = body.split('\n');
      for (const b of blanks) lines.splice(b % (lines.length + 1), 0, b % 2 === 0 ? '' : ' \t');
      if (crlf) lines = lines.map((l) => `${l}\r`);
      const r = parseNdjson(lines.join('\n'));
      assert.ok(r.ok);
      assert.deepEqual(r.ok && r.values.map((v) => v.value), values);
    }),
    { numRuns: RUNS },
  );
});

test('frames: random subscribe frames round-trip through encode and parse', () => {
  const pos = fc.record({ session: fc.string({ maxLength: 10 }), epoch: fc.nat(), seq: fc.nat() });
  fc.assert(
    fc.property(
      fc.string({ minLength: 1, maxLength: 10 }),
      fc.option(fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 })), { nil: undefined }),
      fc.option(fc.oneof(fc.constant('all' as const), fc.array(pos, { maxLength: 4 })), { nil: undefined }),
      fc.option(fc.constantFrom('none' as const, 'metadata' as const, 'redacted' as const, 'full' as const), { nil: undefined }),
      (id, filter, from, capture) => {
        const f = subscribeFrame({ id, ...(filter ? { filter } : {}), ...(from !== undefined ? { from } : {}), ...(capture ? { capture } : {}) });
        const m = parseSocketMessage(encodeFrame(f));
        assert.equal(m.kind, 'frame');
        assert.deepEqual(m.kind === 'frame' && m.frame, JSON.parse(encodeFrame(f)));
      },
    ),
    { numRuns: RUNS },
  );
});

test('ULID: one generator yields strictly increasing canonical ids whatever the clock does', () => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 0, max: 2 ** 40 }), { minLength: 1, maxLength: 50 }), fc.integer(), (times, seed) => {
      let x = seed >>> 0;
      const next = monotonicFactory(() => {
        x = (x * 1664525 + 1013904223) >>> 0;
        return x / 4294967296;
      });
      let prev = '';
      for (const t of times) {
        const id = next(t);
        assert.ok(isUlid(id));
        assert.ok(id > prev, `${id} > ${prev}`);
        prev = id;
      }
    }),
    { numRuns: RUNS },
  );
});
