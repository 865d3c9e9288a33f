// Issue 13 item 1 (bridge part): a form answer is either restored to MCP content whole or nacked
// `invalid`; nothing the person submitted is dropped on the way to the server. End to end with
// the real SDK server and host, a real relay and `aep respond`; then the translation itself,
// property-based over answers the engine's own form checks accept.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { elicitationToForm, validateFormAnswer } from '@aep/protocol';
import type { FieldSpec } from '@aep/protocol';
import { checkElicitationAnswer } from '@aep/mcp-bridge';
import { runAep, startRelayProcess } from '../../../test/support/cli.js';
import { startHost, SessionWatch, lifecycle } from './support.js';
import { ALL_SHAPES, COUNTS } from './fixtures/schemas.mjs';

const TOKEN = `t-${randomBytes(8).toString('hex')}`;
let relay: Awaited<ReturnType<typeof startRelayProcess>>;
before(async () => {
  relay = await startRelayProcess(['--memory', '--token', TOKEN]);
});
after(async () => {
  await relay.stop();
});

interface Nack {
  reason: string;
  issues?: { rule: string; path: string; message?: string }[];
}

test('a non-integer for an integer property is nacked (optional and required alike), never dropped', async () => {
  const session = `s-int-${randomBytes(3).toString('hex')}`;
  const watch = new SessionWatch(relay.url, TOKEN, session);
  await watch.ready();
  const host = await startHost(['--relay', relay.url, '--token', TOKEN, '--session', session, '--agent', 'int-test']);
  try {
    const pending = host.ask('counts');
    const req = await watch.wait((e) => e.type === 'attention.requested', 'attention.requested');
    const respond = (values: unknown) =>
      runAep(['respond', req.id, '--values', JSON.stringify(values), '--relay', relay.url, '--token', TOKEN], undefined, { timeoutMs: 30_000 });
    const nackOf = async (values: unknown): Promise<Nack> => {
      const r = await respond(values);
      assert.equal(r.code, 3, `${JSON.stringify(values)} is refused: ${r.stdout}${r.stderr}`);
      const cmd = await watch.wait(
        (e) => e.type === 'control.attention.respond' && JSON.stringify(e.data).includes(JSON.stringify(values).slice(1, -1)),
        'the command',
      );
      const ack = await watch.wait((e) => e.type === 'control.rejected' && e.cause === cmd.id, 'the nack');
      return ack.data as unknown as Nack;
    };

    // The issue's case: optional integer given 2.5.
    const optional = await nackOf({ note: 'hi', count: 2.5, size: 3 });
    assert.equal(optional.reason, 'invalid');
    assert.deepEqual(
      optional.issues?.map((i) => [i.rule, i.path]),
      [['form.not-integer', '/data/answer/values/count']],
    );
    assert.match(optional.issues?.[0]?.message ?? '', /"count" takes whole numbers only/);
    // Required integer given 3.5: the same message, not "required property … is missing".
    const required = await nackOf({ note: 'hi', size: 3.5 });
    assert.deepEqual(
      required.issues?.map((i) => [i.rule, i.path]),
      [['form.not-integer', '/data/answer/values/size']],
    );
    assert.match(required.issues?.[0]?.message ?? '', /"size" takes whole numbers only/);
    assert.doesNotMatch(JSON.stringify(required), /missing/);
    // Messages never repeat the submitted values (issue 12).
    for (const n of [optional, required]) assert.doesNotMatch(JSON.stringify(n), /2\.5|3\.5|"hi"/);
    assert.deepEqual(lifecycle(watch.events, req.id), ['attention.requested'], 'the request stays pending');

    const ok = await respond({ note: 'hi', count: 2, size: 3 });
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    const result = await pending;
    assert.deepEqual(result, { action: 'accept', content: { note: 'hi', count: 2, size: 3 }, types: { note: 'string', count: 'integer', size: 'integer' } });
    const answered = await watch.wait((e) => e.type === 'attention.answered' && e.subject === req.id, 'attention.answered');
    assert.deepEqual(
      (answered.data as { answer: unknown }).answer,
      { values: { note: 'hi', count: 2, size: 3 } },
      'the relay records what the server received',
    );
    assert.ok(!watch.events.some((e) => e.type === 'attention.answered' && /2\.5|3\.5/.test(JSON.stringify(e.data))));
  } finally {
    watch.close();
    await host.close();
  }
});

test('checkElicitationAnswer: the issue cases, paths and messages', () => {
  const s = COUNTS.requestedSchema;
  assert.deepEqual(checkElicitationAnswer(s, { note: 'hi', count: 2, size: 3 }), { ok: true, content: { note: 'hi', count: 2, size: 3 } });
  const opt = checkElicitationAnswer(s, { note: 'hi', count: 2.5, size: 3 });
  assert.equal(opt.ok, false);
  assert.deepEqual(!opt.ok && opt.issues.map((i) => [i.rule, i.path, i.message]), [
    ['form.not-integer', '/data/answer/values/count', 'form.not-integer: field "count" takes whole numbers only and its entry has a fractional part'],
  ]);
  const req = checkElicitationAnswer(s, { size: 3.5 });
  assert.deepEqual(!req.ok && req.issues.map((i) => i.rule), ['form.not-integer']);
  const missing = checkElicitationAnswer(s, { note: 'x' });
  assert.deepEqual(!missing.ok && missing.issues.map((i) => [i.rule, i.path]), [['form.required-missing', '/data/answer/values/size']]);
  const low = checkElicitationAnswer(s, { size: 0 });
  assert.deepEqual(!low.ok && low.issues.map((i) => [i.rule, i.path]), [['form.out-of-range', '/data/answer/values/size']]);
  // Keys are JSON-Pointer escaped.
  const odd = checkElicitationAnswer({ type: 'object', properties: { 'a/b~c': { type: 'integer' } } }, { 'a/b~c': 1.5 });
  assert.deepEqual(!odd.ok && odd.issues.map((i) => i.path), ['/data/answer/values/a~1b~0c']);
});

// Values of the JSON types a form field of each type accepts, including non-integers for the
// integer property and strings that look like secrets, so a leaked value would be visible.
function valueFor(f: FieldSpec): fc.Arbitrary<unknown> {
  switch (f.type) {
    case 'number':
      return fc.oneof(fc.integer({ min: -5, max: 400 }), fc.double({ min: -5, max: 400, noNaN: true }));
    case 'boolean':
      return fc.boolean();
    case 'string':
      return fc.oneof(fc.string({ maxLength: 12 }), fc.constant('pw-Secret-123'));
    default: {
      const ids = (f.choices ?? []).map((c) => c.id);
      return f.multi ? fc.uniqueArray(fc.constantFrom(...ids), { maxLength: ids.length }) : fc.constantFrom(...ids);
    }
  }
}

test('property: an answer the form checks accept is either restored whole or refused, and no message repeats a value', () => {
  const mapped = elicitationToForm(ALL_SHAPES, { agent: 'a', capture: 'full' });
  assert.ok(mapped.ok);
  const fields = mapped.data.fields as FieldSpec[];
  const answer = fc.record(Object.fromEntries(fields.map((f) => [f.id, valueFor(f)])), {
    requiredKeys: fields.filter((f) => f.required === true).map((f) => f.id),
  });
  let accepted = 0;
  fc.assert(
    fc.property(answer, (values) => {
      fc.pre(validateFormAnswer(fields, values).length === 0);
      const r = checkElicitationAnswer(ALL_SHAPES.requestedSchema, values);
      if (r.ok) {
        accepted++;
        for (const [k, v] of Object.entries(values)) {
          assert.ok(Object.prototype.hasOwnProperty.call(r.content, k), `${k} is not dropped`);
          assert.deepEqual(r.content[k], v);
        }
        if ('retention' in r.content) assert.ok(Number.isInteger(r.content['retention']));
      } else {
        for (const i of r.issues) {
          assert.match(i.path, /^\/data\/answer\/values\//);
          for (const v of Object.values(values)) {
            if (typeof v === 'string' && v.length >= 4) assert.ok(!i.message.includes(v), `${i.message} repeats a value`);
            if (typeof v === 'number' && !Number.isInteger(v)) assert.ok(!i.message.includes(String(v)), `${i.message} repeats a value`);
          }
        }
        const retention = values['retention'];
        if (typeof retention === 'number' && !Number.isInteger(retention))
          assert.ok(r.issues.some((i) => i.rule === 'form.not-integer' && i.path === '/data/answer/values/retention'));
      }
    }),
    { numRuns: Number(process.env['AEP_FUZZ_RUNS'] ?? 300) },
  );
  assert.ok(accepted > 0, 'some answers are accepted');
});
