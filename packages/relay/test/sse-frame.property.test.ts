// The SSE frame of an Event (AEP-0003 §3.3), written piece by piece into one buffer (issue 19):
// byte for byte the frame the plain template gives, for any type, text, session and position,
// multi-byte text included; no `id:` line for an unpositioned Event or a session with a line break.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Outgoing } from '../src/hub.js';
import { sseEventFrame } from '../src/sse.js';

const runs = Number(process.env['AEP_FUZZ_RUNS'] ?? 300);

describe('sseEventFrame', () => {
  it('equals `event: type\\ndata: text\\n[id: session:epoch:seq\\n]\\n` encoded as UTF-8', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }),
        fc.string({ unit: 'grapheme', maxLength: 300 }),
        fc.option(fc.string({ unit: 'grapheme', maxLength: 30 })),
        fc.boolean(),
        fc.oneof(fc.nat(), fc.maxSafeNat(), fc.constantFrom(0, 9, 10, 99, 100, 2 ** 53 - 1)),
        fc.oneof(fc.nat(), fc.maxSafeNat(), fc.integer({ min: -1000, max: -1 }), fc.constantFrom(0, 9, 10, 1e15, 2 ** 53 - 1)),
        (type, text, session, positioned, epoch, seq) => {
          const o = new Outgoing(text, type, session, [epoch, seq, 0], positioned, 0, 0);
          const id = positioned && session !== null && !/[\r\n]/.test(session) ? `id: ${session}:${epoch}:${seq}\n` : '';
          assert.equal(sseEventFrame(o, text).toString('utf8'), `event: ${type}\ndata: ${text}\n${id}\n`);
          assert.equal(sseEventFrame(o, text).length, Buffer.byteLength(`event: ${type}\ndata: ${text}\n${id}\n`));
        },
      ),
      { numRuns: runs },
    );
  });

  it('a session with a line break gets no id line (it would split the frame)', () => {
    const o = new Outgoing('{}', 'run.started', 'a\nb', [0, 1, 0], true, 0, 0);
    assert.equal(sseEventFrame(o, '{}').toString(), 'event: run.started\ndata: {}\n\n');
  });
});
