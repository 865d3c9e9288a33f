// Unit tests of the inbox's pure parts: the attention fold (AEP-0002 §7), dedupe on (source, id)
// (AEP-0001 §7.4), the SSE parser (AEP-0003 §3.3), form drafts → answer.values (AEP-0006 §3),
// the command envelope (AEP-0004 §2) and the capture it claims (AEP-0006 §5.2).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { validateEvent } from '@aep/protocol';
import { InboxStore } from '../src/store.js';
import { buildRespond, carriesFreeText, checkValues, commandCapture, contentWithheld, draftToValues, fieldsOf, rejectionIssues } from '../src/form.js';
import { ulid } from '@aep/protocol';
import { BACKUP_FORM_FIELDS } from '../../../test/support/forms.js';

const SRC = 'aep://h/agent/a/session/s1';
let n = 0;
function ev(type: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  n++;
  return {
    aep: '0.1',
    id: `E${String(n).padStart(25, '0')}`,
    type,
    time: `2026-08-01T09:00:${String(n % 60).padStart(2, '0')}Z`,
    source: SRC,
    agent: 'a',
    session: 's1',
    seq: n,
    ...extra,
  };
}
function request(extra: Record<string, unknown> = {}) {
  return ev('attention.requested', { capture: 'redacted', data: { kind: 'permission', prompt: 'ok?' }, ...extra });
}

test('a request is open until resolved or timed out (answered = open, marked), folded by subject', () => {
  const s = new InboxStore();
  const r1 = request();
  const r2 = request();
  const r3 = request();
  for (const r of [r1, r2, r3]) s.apply(r);
  assert.equal(s.pending().length, 3);
  s.apply(ev('attention.answered', { subject: r1['id'], data: { answer: { option: 'allow' }, via: 'control' } }));
  s.apply(ev('attention.timeout', { subject: r2['id'] }));
  // Answered but not resolved yet: still open (same rule as the client's AttentionFold).
  assert.deepEqual(
    s.pending().map((r) => [r.event.id, r.status]),
    [
      [r1['id'], 'answered'],
      [r3['id'], 'pending'],
    ],
  );
  s.apply(ev('attention.resolved', { subject: r1['id'], data: { resolution: 'answered' } }));
  assert.equal(s.findRequest(String(r1['id']))?.status, 'resolved');
  assert.equal(s.findRequest(String(r2['id']))?.status, 'timeout');
  // Exactly one terminal: a late resolved after a timeout changes nothing (AEP-0002 §7.2).
  s.apply(ev('attention.resolved', { subject: r2['id'], data: { resolution: 'answered' } }));
  assert.equal(s.findRequest(String(r2['id']))?.status, 'timeout');
});

test('duplicates are dropped on (source, id), not on id alone', () => {
  const s = new InboxStore();
  const r = request();
  assert.equal(s.apply(r), true);
  assert.equal(s.apply({ ...r }), false);
  // Same id from another source is another event (ids are unique per source, AEP-0001 §4).
  const other = { ...request(), id: r['id'], source: 'aep://h/agent/b/session/s2', session: 's2', agent: 'b' };
  assert.equal(s.apply(other), true);
  assert.equal(s.pending().length, 2);
});

test('lifecycle events arriving before their request still close it', () => {
  const s = new InboxStore();
  const r = request();
  s.apply(ev('attention.resolved', { subject: r['id'], data: { resolution: 'dismissed' } }));
  s.apply(r);
  assert.equal(s.pending().length, 0);
});

test('malformed values never throw and are not folded', () => {
  const s = new InboxStore();
  fc.assert(
    fc.property(fc.jsonValue(), (v) => {
      s.apply(v);
    }),
    { numRuns: 300 },
  );
  for (const bad of [null, 1, 'x', [], { id: 1, type: 'a.b', source: 's' }, { id: 'x', type: 'attention.requested', source: 's', data: [] }]) {
    assert.equal(s.apply(bad), false);
  }
});

test('pending requests are ordered oldest first; acks are indexed by the command id', () => {
  const s = new InboxStore();
  const late = request({ time: '2026-08-01T10:00:00Z' });
  const early = request({ time: '2026-08-01T08:00:00Z' });
  s.apply(late);
  s.apply(early);
  assert.deepEqual(
    s.pending().map((r) => r.event.id),
    [early['id'], late['id']],
  );
  s.apply(ev('control.rejected', { cause: 'CMD1', data: { reason: 'invalid' } }));
  assert.equal(s.acks.get('CMD1')?.type, 'control.rejected');
  assert.equal(s.sessions.get('s1')?.events.length, 3);
});

const FIELDS = BACKUP_FORM_FIELDS;

test('a draft becomes answer.values exactly as in the AEP-0006 worked example', () => {
  const fields = fieldsOf(ev('attention.requested', { data: { kind: 'form', prompt: 'x', fields: FIELDS } }) as never);
  assert.equal(fields.length, 5);
  const values = draftToValues(fields, {
    1: { text: 'nightly-bk' },
    2: { text: '30' },
    3: { checked: true },
    4: { picked: ['1', '3'] },
    5: { picked: ['1'], otherOn: true, otherText: 'cold-line' },
  });
  assert.deepEqual(values, { 1: 'nightly-bk', 2: 30, 3: true, 4: ['1', '3'], 5: 'cold-line' });
  assert.deepEqual(checkValues(fields, values), []);
  assert.equal(carriesFreeText(fields, values), true);
  // Unanswered optional fields are absent; booleans are always answered.
  assert.deepEqual(draftToValues(fields, {}), { 3: false });
});

test('the shared protocol check attaches issues to their fields', () => {
  const fields = fieldsOf({ ...ev('attention.requested'), data: { kind: 'form', prompt: 'x', fields: FIELDS } } as never);
  const issues = checkValues(fields, { 2: 400, 4: ['1', '9'], 3: false });
  const byField = new Map(issues.map((i) => [i.field, i.rule]));
  assert.equal(byField.get('1'), 'form.required-missing');
  assert.equal(byField.get('2'), 'form.out-of-range');
  assert.equal(byField.get('4'), 'form.choice-forged');
  const fromAck = rejectionIssues(
    { data: { reason: 'invalid', issues: [{ path: '/data/answer/values/1', message: 'missing', rule: 'form.required-missing' }] } },
    fields,
  );
  assert.deepEqual(fromAck, [{ message: 'This question is required: answer it before sending.', rule: 'form.required-missing', field: '1' }]);
});

test('structural answers claim metadata; free text redacted, or full when the pipeline would change it; the command is a valid foreign-emitter event', () => {
  const req = request({ session: 's_bk' }) as never;
  const fields = fieldsOf({ data: { fields: FIELDS } } as never);
  assert.equal(carriesFreeText(fields, { 2: 30, 3: true, 4: ['1'] }), false);
  assert.equal(carriesFreeText(fields, { 5: 'cold-line' }), true);
  assert.equal(carriesFreeText(fields, { 2: '30' }), true); // a string where a number belongs is text
  assert.equal(commandCapture({ values: { 2: 30 } }, false), 'metadata');
  assert.equal(commandCapture({ values: { 1: 'nightly-bk' } }, true), 'redacted');
  // Text the §9.4 pipeline would change is sent verbatim and claimed `full`, never `redacted`.
  assert.equal(commandCapture({ values: { 1: 'ops@example.com' } }, true), 'full');
  assert.equal(commandCapture({ option: 'deny', text: 'use token=abcd1234efgh' }, true), 'full');
  const structural = buildRespond(req, { values: { 2: 30 } }, 'metadata', '127.0.0.1:8787');
  assert.equal(structural['capture'], undefined);
  const text = buildRespond(req, { values: { 1: 'x' } }, 'redacted', '127.0.0.1:8787');
  assert.equal(text['capture'], 'redacted');
  assert.equal(text['subject'], (req as { id: string }).id);
  assert.equal(text['cause'], (req as { id: string }).id);
  assert.equal(text['seq'], undefined);
  assert.equal(text['session'], 's_bk');
  assert.notEqual(structural['id'], text['id']);
  assert.deepEqual(validateEvent(text), []);
});

test('ULIDs are 26 Crockford characters and sort by time', () => {
  const a = ulid(1_000_000);
  const b = ulid(2_000_000);
  assert.match(a, /^[0-9A-HJKMNP-TV-Z]{26}$/);
  assert.ok(a < b);
});

test('a request at metadata is shown with placeholders', () => {
  assert.equal(contentWithheld({ ...request(), capture: 'metadata' } as never), true);
  assert.equal(contentWithheld({ ...request(), capture: undefined } as never), true); // default metadata
  assert.equal(contentWithheld(request() as never), false);
});

test('property: the inbox claims metadata exactly when the protocol gate keeps every value at metadata', async () => {
  const { gateFormValues } = await import('@aep/protocol');
  const choice = fc.record({ id: fc.constantFrom('1', '2', '3'), label: fc.string() });
  const field = fc.oneof(
    fc.record({ type: fc.constant('string'), required: fc.boolean() }),
    fc.record({ type: fc.constant('number'), min: fc.option(fc.integer({ min: -5, max: 5 }), { nil: undefined }) }),
    fc.record({ type: fc.constant('boolean') }),
    fc.record({
      type: fc.constant('select'),
      multi: fc.boolean(),
      other: fc.boolean(),
      choices: fc.uniqueArray(choice, { minLength: 1, maxLength: 3, selector: (c) => c.id }),
    }),
  );
  const draft = fc.record({
    text: fc.option(fc.oneof(fc.string(), fc.integer().map(String)), { nil: undefined }),
    checked: fc.option(fc.boolean(), { nil: undefined }),
    picked: fc.option(fc.array(fc.constantFrom('1', '2', '3', '9')), { nil: undefined }),
    otherOn: fc.option(fc.boolean(), { nil: undefined }),
    otherText: fc.option(fc.string(), { nil: undefined }),
  });
  fc.assert(
    fc.property(fc.array(fc.tuple(field, draft), { maxLength: 5 }), (pairs) => {
      const fields = fieldsOf({ data: { fields: pairs.map(([f], i) => ({ id: String(i + 1), label: `L${i}`, ...f })) } } as never);
      const d = Object.fromEntries(pairs.map(([, x], i) => [String(i + 1), Object.fromEntries(Object.entries(x).filter(([, v]) => v !== undefined))]));
      const values = draftToValues(fields, d);
      const kept = gateFormValues(fields as never, values, 'metadata');
      assert.equal(carriesFreeText(fields, values), JSON.stringify(kept) !== JSON.stringify(values));
    }),
    { numRuns: Number(process.env['AEP_FUZZ_RUNS'] ?? 500) },
  );
});

test('a roster snapshot says whether an answer can be routed (AEP-0004 §4.2, §4.5)', async () => {
  const { routeState } = await import('../src/control.js');
  const accepts = { accepts: ['control.attention.respond'] };
  assert.equal(routeState([], 's'), 'no-route');
  assert.equal(routeState([{ session: 's', control: accepts }], 's'), 'live');
  assert.equal(
    routeState(
      [
        { session: 's', control: accepts },
        { session: 's', control: accepts },
      ],
      's',
    ),
    'ambiguous',
  );
  assert.equal(routeState([{ session: 's' }], 's'), 'unsupported');
  assert.equal(routeState([{ session: 'other', control: accepts }], 's'), 'no-route');
});

test('the dedupe memory is bounded: past its limit the oldest key is forgotten, recent ones still dedupe', () => {
  const s = new InboxStore(3);
  const e1 = ev('progress.status');
  const e2 = ev('progress.status');
  const e3 = ev('progress.status');
  const e4 = ev('progress.status');
  for (const e of [e1, e2, e3, e4]) assert.equal(s.apply(e), true);
  assert.equal(s.apply(e4), false, 'recent key still deduped');
  assert.equal(s.apply(e2), false, 'recent key still deduped');
  assert.equal(s.apply(e1), true, 'the oldest key was forgotten (bounded memory)');
});
