// Property tests of the attention engine's decision and capture boundary, driven through the
// command handler it registers (the connection is a recording stand-in: no socket needed to
// check what the engine decides and records).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { validateFormAnswer, redact } from '@aep/protocol';
import type { CaptureLevel } from '@aep/protocol';
import { AttentionEngine } from '@aep/client';
import type { CommandDecision, CommandHandler, EmitterConnection, FieldSpec, WireEvent } from '@aep/client/node';
import { BACKUP_FORM_FIELDS } from '../../../test/support/forms.js';

const FIELDS: FieldSpec[] = [
  ...BACKUP_FORM_FIELDS,
  {
    id: '6',
    type: 'select',
    label: 'Region',
    choices: [
      { id: 'eu', label: 'Europe' },
      { id: 'us', label: 'US' },
    ],
  },
];
const CHOICE_IDS = new Set(['1', '2', '3', 'eu', 'us']);

/** A recording stand-in for EmitterConnection: what the engine emits, and its command handler. */
function fakeConnection(ceiling: CaptureLevel) {
  const emitted: WireEvent[] = [];
  let handler: CommandHandler | undefined;
  let n = 0;
  const conn = {
    ceiling,
    options: { agent: 'prop-agent', url: 'http://unused' },
    emit: (session: string | null, type: string, data?: Record<string, unknown>, attrs: Record<string, unknown> = {}) => {
      const e = {
        aep: '0.1',
        id: `e${++n}`,
        type,
        time: new Date().toISOString(),
        source: 'aep://h/agent/prop-agent',
        agent: 'prop-agent',
        ...(session ? { session } : {}),
        ...attrs,
        ...(data ? { data } : {}),
      } as WireEvent;
      emitted.push(e);
      return e;
    },
    onCommand: (_type: string, h: CommandHandler) => {
      handler = h;
      return () => {
        handler = undefined;
      };
    },
  };
  return { conn: conn as unknown as EmitterConnection, emitted, handle: (cmd: WireEvent) => handler!({ event: cmd, raw: JSON.stringify(cmd) }) };
}

const scalar = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom('1', '2', '3', 'eu', 'us', 'x', 'alice@example.com', 'password=hunter22'),
  fc.integer({ min: -5, max: 400 }),
  fc.double({ noNaN: true }),
  fc.boolean(),
  fc.constant(null),
);
const value = fc.oneof(scalar, fc.array(scalar, { maxLength: 4 }));
const randomValues = fc.dictionary(fc.constantFrom('1', '2', '3', '4', '5', '6', 'zz'), value, { maxKeys: 7 });
/** Mostly-valid answers (so the accept path is exercised as much as the reject path). */
const validish = fc.record(
  {
    '1': fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom('eu', 'api_key=abcdef123456', 'bob@example.org')),
    '2': fc.oneof(fc.integer({ min: 1, max: 365 }), fc.double({ min: 1, max: 365, noNaN: true })),
    '3': fc.boolean(),
    '4': fc.uniqueArray(fc.constantFrom('1', '2', '3'), { maxLength: 3 }),
    '5': fc.oneof(fc.constantFrom('1', '2'), fc.string({ maxLength: 10 }), fc.constantFrom('/home/alice/x', 'AKIAABCDEFGHIJKLMNOP')),
    '6': fc.constantFrom('eu', 'us'),
  },
  { requiredKeys: ['1'] },
);
const valuesArb = fc.oneof(randomValues, validish as fc.Arbitrary<Record<string, unknown>>);

for (const capture of ['metadata', 'redacted'] as const) {
  test(`engine at ${capture}: accepts exactly the answers validateFormAnswer accepts; records no free text above the capture`, async () => {
    await fc.assert(
      fc.asyncProperty(valuesArb, async (values) => {
        const { conn, emitted, handle } = fakeConnection(capture);
        const engine = new AttentionEngine(conn);
        const p = engine.requestAttention({ session: 's', kind: 'form', prompt: 'Configure', fields: FIELDS });
        const cmd = {
          aep: '0.1',
          id: 'c1',
          type: 'control.attention.respond',
          subject: p.id,
          time: '2026-01-01T00:00:00Z',
          source: 'aep://x/agent/s',
          agent: 'sender',
          session: 's',
          data: { answer: { values } },
        } as WireEvent;
        const decision: CommandDecision = await handle(cmd);
        const expectedOk = validateFormAnswer(FIELDS, values).length === 0;
        assert.equal(decision.status === 'accepted', expectedOk);
        decision.after?.();
        const answered = emitted.find((e) => e.type === 'attention.answered');
        if (!expectedOk) {
          assert.equal(answered, undefined);
          assert.deepEqual(engine.pending('s'), [p.id], 'a nacked request stays pending');
          return;
        }
        assert.ok(answered);
        assert.equal(answered.capture, capture);
        const recorded = (answered.data as { answer: { values: Record<string, unknown> } }).answer.values;
        for (const [k, v] of Object.entries(recorded)) {
          const f = FIELDS.find((x) => x.id === k);
          assert.ok(f, `recorded an unknown key ${k}`);
          const strings = (Array.isArray(v) ? v : [v]).filter((x): x is string => typeof x === 'string');
          if (capture === 'metadata') {
            assert.notEqual(f.type, 'string', 'a string field is free text: dropped at metadata');
            for (const s of strings) assert.ok(CHOICE_IDS.has(s), `free text ${JSON.stringify(s)} recorded at metadata`);
          } else {
            for (const s of strings) assert.equal(redact(s), s, 'free text at redacted went through the pipeline');
          }
        }
        const outcome = await p;
        assert.ok(outcome.status === 'answered');
        assert.deepEqual(outcome.answer.values, values, 'the agent receives the answer unfiltered');
      }),
      { numRuns: Number(process.env['AEP_FUZZ_RUNS'] ?? 300) },
    );
  });
}
