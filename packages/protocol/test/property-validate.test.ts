// Property tests (fast-check): generated valid events of every registered type validate; a
// single MUST-breaking mutation is caught with its rule; the hand-written envelope fast path
// agrees with the generated schema validator. Runs: AEP_FUZZ_RUNS (default 1000).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { validateEvent, envelopeFastValid, scopeClass, CAPTURE_TREES, TYPE_REGISTRY, CORE_ATTRIBUTES, captureRank } from '@aep/protocol';
import { envelope as schemaEnvelope } from '../src/generated/validators.js';
import { pruneToCapture, schemaArbitrary, type Schema } from '../../../test/support/schema-arbitraries.js';

const RUNS = Number(process.env['AEP_FUZZ_RUNS'] ?? 1000);
const schemaDir = new URL('../../../schemas/', import.meta.url);

// --- arbitraries from our schema subset --------------------------------------------------------
const text = fc.string({ minLength: 1, maxLength: 20 });
const dateTime = fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString());

const payloadArb = new Map<string, fc.Arbitrary<unknown>>();
const REQUIRED = new Map<string, string[]>();
for (const r of TYPE_REGISTRY) {
  if (!r.schema) continue;
  const schema = JSON.parse(readFileSync(new URL(`types/${r.schema}`, schemaDir), 'utf8')) as Schema;
  payloadArb.set(r.type, schemaArbitrary(schema, dateTime));
  REQUIRED.set(r.type, (schema['required'] ?? []) as string[]);
}
const TYPES = [...TYPE_REGISTRY.map((r) => r.type), 'x.acme.deploy.started', 'x.claude-code.control.restart', 'x.acme.agent.ping'];
const CORE = new Set<string>(CORE_ATTRIBUTES);
const extName = fc.stringMatching(/^[a-z0-9]{1,20}$/).filter((n) => !CORE.has(n));
const extValue = fc.oneof(fc.string({ maxLength: 10 }), fc.integer(), fc.boolean());

const validEvent: fc.Arbitrary<Record<string, unknown>> = fc
  .record({
    type: fc.constantFrom(...TYPES),
    id: text,
    time: dateTime,
    agent: text,
    session: text,
    run: text,
    step: text,
    subject: text,
    cause: text,
    seq: fc.nat(),
    epoch: fc.option(fc.nat(), { nil: undefined }),
    severity: fc.option(fc.constantFrom('debug', 'info', 'notice', 'warning', 'error', 'critical'), { nil: undefined }),
    capture: fc.constantFrom('none', 'metadata', 'redacted', 'full', undefined),
    traceparent: fc.option(fc.constant('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'), { nil: undefined }),
    withRun: fc.boolean(),
    withData: fc.boolean(),
    ext: fc.dictionary(extName, extValue, { maxKeys: 3 }),
    payload: fc.constant(null),
  })
  .chain((r) => (payloadArb.get(r.type) ?? fc.constant(undefined)).map((payload) => ({ ...r, payload })))
  .map((r) => {
    const cls = scopeClass(r.type);
    const e: Record<string, unknown> = {
      aep: '0.1',
      id: r.id,
      type: r.type,
      time: r.time,
      source: `aep://h/agent/a/session/${encodeURIComponent(r.session)}`,
      agent: r.agent,
    };
    // attention followers and the respond command carry subject (AEP-0002 §7.1, AEP-0004 §5)
    e['subject'] = r.subject;
    if (cls !== 'agent') {
      e['session'] = r.session;
      if (r.withRun) {
        e['run'] = r.run;
        e['step'] = r.step;
      }
    }
    if (cls === 'session') e['seq'] = r.seq;
    if (cls === 'session' && r.epoch !== undefined) e['epoch'] = r.epoch;
    if (r.severity !== undefined) e['severity'] = r.severity;
    if (r.capture !== undefined) e['capture'] = r.capture;
    if (r.traceparent !== undefined) e['traceparent'] = r.traceparent;
    e['cause'] = r.cause;
    Object.assign(e, r.ext);
    const capture = r.capture ?? 'metadata';
    if (capture !== 'none' && (r.withData || r.payload !== undefined)) {
      const tree = CAPTURE_TREES[r.type];
      const p = r.payload ?? {};
      e['data'] = tree ? pruneToCapture(p, tree, captureRank(capture)) : p;
    }
    return e;
  });

test('generated valid events of every registered type (and vendor types) validate, in emitter mode too', () => {
  fc.assert(
    fc.property(validEvent, (e) => {
      assert.equal(envelopeFastValid(e), true);
      assert.deepEqual(validateEvent(e, { emitter: true }), []);
    }),
    { numRuns: RUNS },
  );
});

test('every registered type is generated', () => {
  const seen = new Set<string>();
  fc.assert(
    fc.property(validEvent, (e) => {
      seen.add(e['type'] as string);
    }),
    { numRuns: Math.max(RUNS, 2000) },
  );
  for (const r of TYPE_REGISTRY) assert.ok(seen.has(r.type), r.type);
});

type Mutation = [string, (e: Record<string, unknown>) => boolean];
const MUTATIONS: Mutation[] = [
  [
    'envelope.required',
    (e) => {
      delete e[['aep', 'id', 'time', 'source', 'agent'][Math.abs(String(e['id']).length) % 5]!];
      return true;
    },
  ],
  [
    'envelope.aep-version',
    (e) => {
      e['aep'] = '1.0';
      return true;
    },
  ],
  [
    'envelope.id',
    (e) => {
      e['id'] = '';
      return true;
    },
  ],
  [
    'envelope.type-name',
    (e) => {
      e['type'] = String(e['type']).toUpperCase();
      return true;
    },
  ],
  [
    'envelope.time',
    (e) => {
      e['time'] = String(e['time']).replace('Z', '');
      return true;
    },
  ],
  [
    'envelope.source',
    (e) => {
      e['source'] = 'not a uri';
      return true;
    },
  ],
  [
    'envelope.identifier',
    (e) => {
      e['subject'] = null;
      return true;
    },
  ],
  [
    'envelope.seq',
    (e) => {
      if (e['seq'] === undefined) return false;
      e['seq'] = -1;
      return true;
    },
  ],
  [
    'envelope.epoch',
    (e) => {
      e['epoch'] = 1.5;
      return true;
    },
  ],
  [
    'envelope.traceparent',
    (e) => {
      e['traceparent'] = '00-xyz';
      return true;
    },
  ],
  [
    'envelope.severity',
    (e) => {
      e['severity'] = 'fatal';
      return true;
    },
  ],
  [
    'envelope.capture',
    (e) => {
      e['capture'] = 'all';
      return true;
    },
  ],
  [
    'envelope.data-object',
    (e) => {
      e['data'] = 'text';
      return true;
    },
  ],
  [
    'envelope.ext-name',
    (e) => {
      e['acme_region'] = 'x';
      return true;
    },
  ],
  [
    'envelope.ext-value',
    (e) => {
      e['acmeobj'] = { a: 1 };
      return true;
    },
  ],
  [
    'envelope.agent-scoped-forbidden',
    (e) => {
      if (scopeClass(String(e['type'])) !== 'agent') return false;
      e['session'] = 's';
      return true;
    },
  ],
  [
    'envelope.session-required',
    (e) => {
      if (scopeClass(String(e['type'])) === 'agent') return false;
      delete e['session'];
      return true;
    },
  ],
  [
    'envelope.seq-required',
    (e) => {
      if (scopeClass(String(e['type'])) !== 'session') return false;
      delete e['seq'];
      return true;
    },
  ],
  [
    'envelope.seq-forbidden',
    (e) => {
      if (scopeClass(String(e['type'])) !== 'foreign') return false;
      e['seq'] = 1;
      return true;
    },
  ],
  [
    'payload.required',
    (e) => {
      const d = e['data'] as Record<string, unknown> | undefined;
      const key = d && (REQUIRED.get(String(e['type'])) ?? []).find((k) => k in d);
      if (!d || !key) return false;
      delete d[key];
      return true;
    },
  ],
  [
    'capture.data-at-none',
    (e) => {
      if (e['data'] === undefined) return false;
      e['capture'] = 'none';
      return true;
    },
  ],
  [
    'capture.field-above-capture',
    (e) => {
      if (e['type'] !== 'run.started' || (e['capture'] ?? 'metadata') !== 'metadata') return false;
      e['data'] = { prompt: 'secret' };
      return true;
    },
  ],
];

test('a single MUST-breaking mutation is caught with its rule', () => {
  let applied = 0;
  fc.assert(
    fc.property(validEvent, fc.integer({ min: 0, max: MUTATIONS.length - 1 }), (e, m) => {
      const [rule, mutate] = MUTATIONS[m]!;
      const copy = structuredClone(e);
      if (!mutate(copy)) return;
      applied++;
      const rules = validateEvent(copy, { emitter: true }).map((i) => i.rule);
      assert.ok(rules.includes(rule), `${rule} not reported for ${JSON.stringify(copy)}: ${rules.join(',')}`);
    }),
    { numRuns: RUNS },
  );
  assert.ok(applied > RUNS / 3);
});

const anyValue = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.integer(), { maxLength: 2 }),
  fc.dictionary(fc.string(), fc.integer(), { maxKeys: 2 }),
);
const ATTRS = [...CORE_ATTRIBUTES, 'acmeregion', 'acme_x', 'X', ''];

test('the envelope fast path agrees with the generated schema validator', () => {
  const mutated = fc
    .tuple(validEvent, fc.array(fc.tuple(fc.constantFrom(...ATTRS), fc.oneof(anyValue, fc.constant(undefined))), { maxLength: 3 }))
    .map(([e, changes]) => {
      const c: Record<string, unknown> = structuredClone(e);
      for (const [k, v] of changes) {
        if (v === undefined) delete c[k];
        else c[k] = v;
      }
      return c as unknown;
    });
  fc.assert(
    fc.property(fc.oneof(mutated, anyValue, fc.anything()), (x) => {
      const schema = (schemaEnvelope as unknown as (d: unknown) => boolean)(x);
      assert.equal(envelopeFastValid(x), schema, JSON.stringify(x));
    }),
    { numRuns: RUNS },
  );
});
