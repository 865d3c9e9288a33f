// The stream rules after the issue-19 performance work give exactly the issues of the version
// before it (test/support/stream-oracle.ts, kept verbatim as the oracle): same rule ids, paths,
// messages and order, on generated streams built to hit every rule (redeliveries, id conflicts,
// position duplicates and regressions, epochs, run/session/attention terminals, acks, forms with
// answers, foreign commands, ids that do not fit the window's byte slots, eviction).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { StreamValidator, validateEvent } from '@aep/protocol';
import { StreamValidator as OracleValidator } from './support/stream-oracle.js';
import { BACKUP_FORM_FIELDS } from '../../../test/support/forms.js';

const RUNS = Number(process.env['AEP_FUZZ_RUNS'] ?? 300);

// Small pools, so that keys collide often. Ids cover the window's storage cases: short Latin-1
// (byte slot), exactly ID_SLOT (40) and one more, characters above U+00FF, NUL, a lone surrogate.
const IDS = ['a', 'b', 'c', '01K0BENCH00000000000000001', 'é', 'x'.repeat(40), 'x'.repeat(41), 'y'.repeat(39) + '€', '\u0000', '\ud800', 'a\u0000b'];
const SOURCES = ['aep://h/agent/a', 'aep://h/agent/b', 'aep://h/agent/é'];
const SESSIONS = ['s1', 's2', 's1\u0000a'];
const TYPES = [
  'progress.status',
  'run.started',
  'run.finished',
  'run.failed',
  'run.cancelled',
  'session.ended',
  'attention.requested',
  'attention.answered',
  'attention.resolved',
  'attention.timeout',
  'attention.routed',
  'control.accepted',
  'control.rejected',
  'control.attention.respond',
  'control.cancel',
  'x.acme.control.poke',
  'agent.heartbeat',
];

const values = fc.dictionary(
  fc.constantFrom('1', '2', '3', '4', '5', 'zz', 'a/b~c'),
  fc.oneof(
    fc.constantFrom('nightly', '1', '2', '3', 'other text', ''),
    fc.integer({ min: -1, max: 400 }),
    fc.boolean(),
    fc.array(fc.constantFrom('1', '2', '3', '9'), { maxLength: 3 }),
    fc.constant(null),
  ),
  { maxKeys: 5 },
);

const event = fc.record(
  {
    id: fc.oneof(fc.constantFrom(...IDS), fc.constant(undefined), fc.constant(undefined), fc.constant(undefined)),
    type: fc.constantFrom(...TYPES),
    source: fc.constantFrom(...SOURCES),
    session: fc.constantFrom(...SESSIONS),
    seq: fc.integer({ min: 0, max: 4 }),
    epoch: fc.integer({ min: 0, max: 2 }),
    run: fc.constantFrom('r1', 'r2'),
    subject: fc.oneof(fc.constantFrom(...IDS, 'nope'), fc.nat(6)),
    cause: fc.oneof(fc.constantFrom(...IDS), fc.nat(6)),
    capture: fc.constantFrom('metadata', 'redacted', 'full', 'none'),
    form: fc.boolean(),
    values,
    noise: fc.nat(3),
  },
  { requiredKeys: ['type', 'source', 'form', 'values', 'noise'] },
);

/**
 * A generated record as an Event (valid or not: the envelope verdict decides what the stream
 * rules see). No id: a fresh one; a number as subject or cause: the id of that earlier Event.
 */
function toEvent(r: fc.RecordValue<typeof event extends fc.Arbitrary<infer T> ? T : never>, earlier: Record<string, unknown>[]): Record<string, unknown> {
  // Answers and responses point back at requests (the n-th latest), other followers at any Event.
  const pool = r.type === 'attention.answered' || r.type === 'control.attention.respond' ? earlier.filter((x) => x['type'] === 'attention.requested') : earlier;
  const back = (v: string | number) => (typeof v === 'number' ? (pool[pool.length - 1 - v]?.['id'] ?? 'none') : v);
  const e: Record<string, unknown> = { aep: '0.1', id: r.id ?? `e${earlier.length}`, type: r.type, time: '2026-08-01T09:00:00Z', source: r.source, agent: 'a' };
  for (const k of ['epoch', 'run', 'capture'] as const) if (r[k] !== undefined) e[k] = r[k];
  // Mostly the members the type's envelope class requires (AEP-0001 §5.2), sometimes not.
  const agent = r.type.startsWith('agent.');
  const foreign = /^(control\.(attention\.respond|cancel)|attention\.routed|x\.acme\.control\.)/.test(r.type);
  if (!agent || r.noise === 3) e['session'] = r.session ?? 's1';
  if ((!agent && !foreign) || r.noise === 3) e['seq'] = r.seq ?? 0;
  if (agent) delete e['run'];
  if (r.subject !== undefined) e['subject'] = back(r.subject);
  // A follower of an earlier Event usually shares its source and session (answers meet requests).
  const followed = typeof r.subject === 'number' && r.noise !== 0 ? pool[pool.length - 1 - r.subject] : undefined;
  if (followed !== undefined) {
    e['source'] = followed['source'];
    if (e['session'] !== undefined && followed['session'] !== undefined) e['session'] = followed['session'];
  }
  if (r.cause !== undefined) e['cause'] = back(r.cause);
  if (r.type === 'attention.requested') {
    e['data'] = r.form ? { kind: 'form', prompt: 'Configure', fields: BACKUP_FORM_FIELDS, respond_via: ['control'] } : { kind: 'approval', prompt: 'ok?' };
  } else if (r.type === 'attention.answered' || r.type === 'control.attention.respond') {
    e['data'] = { answer: { values: r.values } };
  } else if (r.noise === 1) {
    e['data'] = { phase: 'x', n: r.noise };
  }
  if (r.noise === 2) e['benchn'] = r.noise;
  return e;
}

/** Pushes every event into both validators; returns both issue lists (index included). */
function both(events: Record<string, unknown>[], window: number, raw: boolean): [unknown[], unknown[]] {
  const now = new StreamValidator({ dedupeWindow: window, rawFingerprints: raw });
  const was = new OracleValidator({ dedupeWindow: window, rawFingerprints: raw });
  const a: unknown[] = [];
  const b: unknown[] = [];
  events.forEach((e, i) => {
    const envelopeValid = !validateEvent(e).some((x) => x.rule.startsWith('envelope.'));
    const text = JSON.stringify(e);
    a.push(...now.push(e, i, { envelopeValid, raw: text }));
    b.push(...was.push(e, i, { envelopeValid, raw: text }));
  });
  assert.equal(now.rememberedIds, was.rememberedIds);
  return [a, b];
}

test('stream rules: the same issues as the pre-issue-19 validator on generated streams (raw and structural fingerprints)', () => {
  fc.assert(
    fc.property(
      fc.array(fc.oneof({ arbitrary: event, weight: 4 }, { arbitrary: fc.nat(40).map((back) => ({ back })), weight: 1 }), { minLength: 10, maxLength: 80 }),
      fc.constantFrom(1, 2, 3, 7, 1000),
      fc.boolean(),
      (steps, window, raw) => {
        // `{ back }` repeats an earlier event exactly (a redelivery) or with one member changed.
        const events: Record<string, unknown>[] = [];
        for (const s of steps) {
          if ('back' in s) {
            if (events.length === 0) continue;
            const prev = events[events.length - 1 - (s.back % events.length)]!;
            events.push(s.back % 2 === 0 ? prev : { ...prev, time: '2026-08-01T09:00:01Z' });
          } else {
            events.push(toEvent(s, events));
          }
        }
        const [now, was] = both(events, window, raw);
        assert.deepEqual(now, was);
      },
    ),
    { numRuns: RUNS },
  );
});

test('stream rules: the same issues as the pre-issue-19 validator across window blocks and eviction (10k Events)', () => {
  // 10,000 Events over 3 sources with ids drawn from 6,000, window 5,000: the window fills its
  // first block (4,096 entries), a partial second one, then evicts around the ring.
  let x = 12345;
  const rnd = (n: number) => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return x % n;
  };
  const events: Record<string, unknown>[] = [];
  const seq = [0, 0, 0];
  for (let i = 0; i < 10_000; i++) {
    const s = rnd(3);
    const id = rnd(4) === 0 ? 'long-' + 'z'.repeat(40) + rnd(50) : `01K${String(rnd(6000)).padStart(23, '0')}`;
    events.push({
      aep: '0.1',
      id,
      type: 'progress.status',
      time: '2026-08-01T09:00:00Z',
      source: SOURCES[s],
      agent: 'a',
      session: 's',
      seq: seq[s]++,
      data: { n: rnd(3) },
    });
  }
  for (const window of [5000, 4096, 4097]) {
    const [now, was] = both(events, window, true);
    assert.ok(was.length > 100, 'the stream must hold conflicts to compare');
    assert.deepEqual(now, was);
  }
});
