// Property tests for the capture boundary (issue 3 "Must show"): for random forms, answers and
// events, no prompt text, label text, string-field answer or `other` text survives at
// `metadata`/`none`; no number, boolean or closed choice id is dropped at `metadata`; `downlevel`
// is idempotent, never raises capture and never mutates; `redact` output never contains a
// planted secret value. Runs: AEP_FUZZ_RUNS (default 2000; `npm run fuzz` uses 100000).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  gateFormValues,
  gateAnswer,
  buildAttentionRequestData,
  downlevel,
  redact,
  redactValue,
  captureRank,
  CAPTURE_TREES,
  REDACTED_SECRET,
  REDACTED_PII,
} from '@aep/protocol';
import type { CaptureLevel, FieldSpec } from '@aep/protocol';

const RUNS = Number(process.env['AEP_FUZZ_RUNS'] ?? 2000);
const LEVELS: CaptureLevel[] = ['none', 'metadata', 'redacted', 'full'];
const CANARY = 'ZQXCANARY';

// Structural ids never contain the canary (they are identifiers by contract).
const idChar = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789_'.split(''));
const id = fc.string({ unit: idChar, minLength: 1, maxLength: 6 });
// Free text always carries the canary, anywhere inside.
const freeText = fc.tuple(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 })).map(([a, b]) => `${a}${CANARY}${b}`);

const choices = fc.uniqueArray(id, { minLength: 1, maxLength: 4 }).chain((ids) => fc.tuple(...ids.map((cid) => freeText.map((label) => ({ id: cid, label })))));
const field: fc.Arbitrary<FieldSpec> = fc
  .oneof(
    fc.record({ type: fc.constantFrom('string' as const, 'number' as const, 'boolean' as const), label: freeText, required: fc.boolean() }),
    fc.record({ type: fc.constant('select' as const), label: freeText, multi: fc.boolean(), other: fc.boolean(), choices }),
  )
  .map((f) => ({ id: '', ...f }));
const form = fc.array(field, { minLength: 1, maxLength: 6 }).map((fs) => fs.map((f, i) => ({ ...f, id: String(i + 1) })));

/** A value for a field: correctly typed, free text, or some other JSON. */
function answerFor(f: FieldSpec): fc.Arbitrary<unknown> {
  const ids = (f.choices ?? []).map((c) => c.id);
  const pick = ids.length ? fc.constantFrom(...ids) : fc.constant('x');
  return fc.oneof(
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.integer(),
    fc.boolean(),
    freeText,
    pick,
    fc.array(pick, { maxLength: 3 }),
    fc.array(fc.oneof(pick, freeText), { maxLength: 3 }),
    fc.constant(null),
  );
}
const formAndValues = form.chain((fields) =>
  fc.tuple(
    fc.constant(fields),
    fc.tuple(...fields.map((f) => fc.option(answerFor(f), { nil: undefined }))).map((vs) => {
      const values: Record<string, unknown> = {};
      vs.forEach((v, i) => {
        if (v !== undefined) values[String(i + 1)] = v;
      });
      return values;
    }),
    fc.dictionary(fc.string({ unit: fc.constantFrom('a', 'b', 'x', 'y', 'z'), minLength: 1, maxLength: 3 }), freeText, { maxKeys: 2 }),
  ),
);

function isStructural(f: FieldSpec, v: unknown): boolean {
  if (f.type === 'number') return typeof v === 'number' && Number.isFinite(v);
  if (f.type === 'boolean') return typeof v === 'boolean';
  if (f.type === 'select') {
    const ids = new Set((f.choices ?? []).map((c) => c.id));
    return (Array.isArray(v) ? v : [v]).every((el) => typeof el === 'string' && ids.has(el));
  }
  return false;
}

test('gateFormValues: below redacted no free text survives, and every structural entry is kept', () => {
  fc.assert(
    fc.property(formAndValues, fc.constantFrom<CaptureLevel>('none', 'metadata'), ([fields, values, stray], ceiling) => {
      const all = { ...stray, ...values };
      const out = gateFormValues(fields, all, ceiling);
      assert.ok(!JSON.stringify(out).includes(CANARY), 'no free text at metadata/none');
      fields.forEach((f) => {
        const v = all[f.id];
        if (v !== undefined && isStructural(f, v)) assert.deepEqual(out[f.id], v, `structural entry ${f.id} kept`);
      });
      for (const k of Object.keys(out))
        assert.ok(
          fields.some((f) => f.id === k),
          'no key without a field',
        );
    }),
    { numRuns: RUNS },
  );
});

test('gateFormValues: at redacted+ every entry with a field is kept', () => {
  fc.assert(
    fc.property(formAndValues, fc.constantFrom<CaptureLevel>('redacted', 'full'), ([fields, values, stray], ceiling) => {
      const out = gateFormValues(fields, { ...stray, ...values }, ceiling);
      assert.deepEqual(out, values);
    }),
    { numRuns: RUNS },
  );
});

test('gateAnswer: no answer text or free-text value below redacted; option kept', () => {
  fc.assert(
    fc.property(formAndValues, freeText, id, fc.constantFrom<CaptureLevel>('none', 'metadata'), ([fields, values], text, option, capture) => {
      const a = gateAnswer({ option, text, values }, capture, { fields });
      assert.ok(!JSON.stringify(a).includes(CANARY));
      assert.equal(a.option, option);
      const hop = gateAnswer({ option, text, values }, capture);
      assert.ok(!JSON.stringify(hop).includes(CANARY), 'without field_spec too');
    }),
    { numRuns: RUNS },
  );
});

test('buildAttentionRequestData: at metadata no prompt, label or context text survives; structure kept', () => {
  const input = fc.record(
    {
      kind: fc.constantFrom('permission' as const, 'input' as const, 'auth' as const, 'review' as const, 'form' as const, 'other' as const),
      prompt: freeText,
      options: fc.option(
        fc.uniqueArray(id, { maxLength: 4 }).chain((ids) => fc.tuple(...ids.map((oid) => freeText.map((label) => ({ id: oid, label }))))),
        { nil: undefined },
      ),
      fields: fc.option(form, { nil: undefined }),
      context: fc.option(fc.dictionary(id, freeText), { nil: undefined }),
    },
    { requiredKeys: ['kind', 'prompt'] },
  );
  fc.assert(
    fc.property(input, id, fc.option(id, { nil: undefined }), fc.constantFrom<'id' | 'index'>('id', 'index'), (inp, agent, subject, placeholder) => {
      const data = buildAttentionRequestData(inp, 'metadata', { agent, ...(subject !== undefined ? { subject } : {}), placeholder });
      assert.ok(data);
      assert.ok(!JSON.stringify(data).includes(CANARY), JSON.stringify(data));
      assert.equal(data.fields?.length, inp.fields?.length);
      assert.deepEqual(
        data.options?.map((o) => o.id),
        inp.options?.map((o) => o.id),
      );
      assert.equal(buildAttentionRequestData(inp, 'none', { agent }), undefined);
    }),
    { numRuns: RUNS },
  );
});

// Events whose free text (prompt, labels, answer text, string values, redacted/full members)
// carries the canary; everything structural is canary-free.
const attentionEvent = fc.oneof(
  fc.record({
    type: fc.constant('attention.requested'),
    data: fc.record({
      kind: fc.constantFrom('permission', 'input', 'form', 'review'),
      prompt: freeText,
      options: fc.array(fc.record({ id, label: freeText }), { maxLength: 3 }),
      fields: form,
      context: fc.dictionary(id, freeText, { maxKeys: 2 }),
    }),
  }),
  fc.record({
    type: fc.constantFrom('attention.answered', 'control.attention.respond'),
    data: fc.record({
      answer: fc.record(
        {
          option: id,
          text: freeText,
          values: fc.dictionary(id, fc.oneof(freeText, fc.integer(), fc.boolean(), fc.array(fc.oneof(id, freeText), { maxLength: 2 }))),
        },
        { requiredKeys: [] },
      ),
    }),
  }),
  fc.record({ type: fc.constant('run.started'), data: fc.record({ trigger: fc.constantFrom('user', 'schedule'), prompt: freeText }) }),
  fc.record({
    type: fc.constant('tool.completed'),
    data: fc.record({ tool: fc.record({ name: id }), result: freeText, result_redacted: freeText, duration_ms: fc.nat() }),
  }),
  fc.record({ type: fc.constant('x.acme.thing.done'), data: fc.record({ note: freeText }) }),
);
const envelopeOf = (t: { type: string; data: Record<string, unknown> }, capture: CaptureLevel | undefined, subject: string | undefined) => {
  const e: Record<string, unknown> = {
    aep: '0.1',
    id: '01K0PROP',
    type: t.type,
    time: '2026-08-01T09:00:00Z',
    source: 'aep://h/agent/a',
    agent: 'ops-bot',
    session: 's',
    seq: 1,
  };
  if (subject !== undefined) e['subject'] = subject;
  if (capture !== undefined) e['capture'] = capture;
  e['data'] = t.data;
  return e;
};

test('downlevel: below redacted no free text survives a hop (prompt, labels, text, string values, gated members)', () => {
  fc.assert(
    fc.property(
      attentionEvent,
      fc.constantFrom<CaptureLevel>('redacted', 'full'),
      fc.constantFrom<CaptureLevel>('none', 'metadata', 'redacted'),
      fc.option(id, { nil: undefined }),
      (t, capture, ceiling, subject) => {
        const e = envelopeOf(t, capture, subject);
        const out = downlevel(e, ceiling);
        if (captureRank(ceiling) >= captureRank(capture)) {
          assert.equal(out, e);
          return;
        }
        assert.ok(!JSON.stringify(out).includes(CANARY), JSON.stringify(out));
        assert.ok(captureRank(out['capture']) <= 1, 'a mechanical hop lands on metadata or none');
        if (t.type === 'attention.answered' || t.type === 'control.attention.respond') {
          const values = (t.data['answer'] as { values?: Record<string, unknown> }).values;
          const kept = (out['data'] as { answer?: { values?: Record<string, unknown> } } | undefined)?.answer?.values ?? {};
          for (const [k, v] of Object.entries(values ?? {})) {
            if (ceiling !== 'none' && (typeof v === 'number' || typeof v === 'boolean')) assert.equal(kept[k], v, 'numbers and booleans survive the hop');
          }
        }
      },
    ),
    { numRuns: RUNS },
  );
});

function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === 'object') {
    for (const x of Object.values(v as object)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}

test('downlevel: idempotent, never raises capture, never mutates, envelope untouched but capture', () => {
  const types = [...Object.keys(CAPTURE_TREES), 'x.acme.tool.ran', 'progress.some_future_member'];
  const anyEvent = fc.record(
    {
      type: fc.constantFrom(...types),
      capture: fc.option(fc.constantFrom<unknown>('none', 'metadata', 'redacted', 'full', 'bogus'), { nil: undefined }),
      data: fc.option(
        fc.oneof(
          fc.dictionary(
            fc.constantFrom('prompt', 'options', 'fields', 'answer', 'values', 'label', 'result', 'tool', 'kind', 'id', 'x'),
            fc.jsonValue({ maxDepth: 3 }),
          ),
          fc.jsonValue({ maxDepth: 2 }),
        ),
        { nil: undefined },
      ),
      acmeregion: fc.option(fc.string(), { nil: undefined }),
    },
    { requiredKeys: ['type'] },
  );
  fc.assert(
    fc.property(anyEvent, fc.constantFrom(...LEVELS), (ev, ceiling) => {
      const e: Record<string, unknown> = { aep: '0.1', id: 'i', time: 't', source: 's', agent: 'a', session: 's', seq: 3 };
      for (const [k, v] of Object.entries(ev)) if (v !== undefined) e[k] = v;
      const snapshot = JSON.stringify(e);
      deepFreeze(e);
      const once = downlevel(e, ceiling);
      assert.equal(JSON.stringify(e), snapshot, 'input unchanged');
      const twice = downlevel(once, ceiling);
      assert.equal(twice, once, 'a second pass returns the same object');
      const inRank = typeof e['capture'] === 'string' && captureRank(e['capture']) >= 0 ? captureRank(e['capture']) : e['capture'] === undefined ? 1 : 3;
      assert.ok(captureRank(once['capture'] ?? 'metadata') <= inRank, 'never raises capture');
      if (once !== e) assert.ok(captureRank(once['capture']) <= captureRank(ceiling), 'rewritten events land at or below the ceiling');
      for (const k of Object.keys(e)) if (k !== 'capture' && k !== 'data') assert.equal(once[k], e[k], `attribute ${k} untouched`);
      if (once === e) assert.ok(captureRank(ceiling) >= inRank);
    }),
    { numRuns: RUNS },
  );
});

// Secrets: long enough to be honoured (≥ 4), no brackets (a secret sharing characters with the
// `[REDACTED:…]` markers could be rebuilt from a marker), and not a substring of a marker.
const secret = fc
  .string({ unit: fc.constantFrom(...'ABCXYZabcxyz0189._~/@+=:-'.split('')), minLength: 4, maxLength: 20 })
  .filter((s) => !REDACTED_SECRET.includes(s) && !REDACTED_PII.includes(s) && !'~'.includes(s));
const noise = fc
  .array(
    fc.oneof(
      fc.string({ maxLength: 12 }),
      fc.constantFrom('password=', 'token: ', 'Bearer ', '/home/', '/home/op/', 'me@', '.com', ' ', '\n', '~', 'AKIA', '-----BEGIN X-----', '+1 ', '555-'),
    ),
    { maxLength: 8 },
  )
  .map((a) => a.join(''));

test('redact: the output never contains a planted secret value', () => {
  fc.assert(
    fc.property(
      fc.array(noise, { minLength: 1, maxLength: 4 }),
      fc.uniqueArray(secret, { minLength: 1, maxLength: 3 }),
      fc.option(fc.constantFrom('/home/op', '/Users/me'), { nil: undefined }),
      fc.boolean(),
      (pieces, secrets, home, pii) => {
        let text = '';
        pieces.forEach((p, i) => {
          text += p + secrets[i % secrets.length];
        });
        const out = redact(text, { secretValues: secrets, ...(home ? { home } : {}), pii });
        for (const s of secrets) assert.ok(!out.includes(s), `${JSON.stringify(s)} leaked in ${JSON.stringify(out)}`);
      },
    ),
    { numRuns: RUNS },
  );
});

test('redactValue: no planted secret value in any string of a JSON value', () => {
  fc.assert(
    fc.property(fc.jsonValue({ maxDepth: 3 }), secret, (v, s) => {
      const planted = JSON.parse(JSON.stringify(v, (_k, x: unknown) => (typeof x === 'string' ? `${x}${s}` : x))) as unknown;
      const out = JSON.stringify(redactValue(planted, { secretValues: [s] }));
      // Keys are kept (secrets inside key names are out of scope, AEP-0003 §9.4): check values only.
      const strings: string[] = [];
      JSON.parse(out, (_k, x: unknown) => {
        if (typeof x === 'string') strings.push(x);
        return x;
      });
      for (const str of strings) assert.ok(!str.includes(s), `${JSON.stringify(s)} leaked`);
    }),
    { numRuns: RUNS },
  );
});

test('redact is idempotent and never throws on arbitrary text', () => {
  fc.assert(
    fc.property(fc.oneof(fc.string({ maxLength: 80 }), noise), (t) => {
      const once = redact(t);
      assert.equal(redact(once), once);
    }),
    { numRuns: RUNS },
  );
});
