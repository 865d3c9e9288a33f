// One answer path (issue 13): the engine alone decides, with constraints passed as data; the
// validate hook only translates (typed result); decline/cancel on every form (contract C2); no
// nack repeats what was submitted (issue 12); everything at `redacted` went through the §9.4
// pipeline, prebuilt data included.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { elicitationToForm, redact, RULES } from '@aep/protocol';
import type { CaptureLevel } from '@aep/protocol';
import { AttentionEngine } from '@aep/client';
import type { CommandDecision, FieldSpec } from '@aep/client';
import { recordingPort, rulesOf } from './engine-port.js';

const MCP = {
  message: 'Leave a note',
  requestedSchema: {
    type: 'object',
    properties: { note: { type: 'string', minLength: 2 }, count: { type: 'integer', minimum: 0 }, need: { type: 'integer' } },
    required: ['need'],
  },
};

function mcpForm() {
  const r = elicitationToForm(MCP, { agent: 'test-agent', capture: 'redacted' });
  assert.ok(r.ok);
  if (!r.ok) throw new Error(r.reason);
  return r;
}

const issuesOf = (d: CommandDecision) => (d.status === 'rejected' ? (d.issues ?? []) : []);

test('issue 13: {"note":"hi","count":2.5} for an optional MCP integer is nacked invalid (not silently dropped)', async () => {
  const { port, respond, types } = recordingPort('redacted');
  const engine = new AttentionEngine(port);
  const m = mcpForm();
  const p = engine.requestAttention({
    session: 's',
    kind: 'form',
    data: m.data as unknown as Record<string, unknown>,
    fields: m.data.fields,
    constraints: m.constraints,
  });
  const d = await respond(p.id, { values: { note: 'hi', count: 2.5, need: 1 } });
  assert.equal(d.status === 'rejected' && d.reason, 'invalid');
  assert.deepEqual(
    issuesOf(d).map((i) => [i.rule, i.path]),
    [['form.not-integer', '/data/answer/values/count']],
  );
  assert.deepEqual(engine.pending(), [p.id], 'the request stays pending');
  assert.deepEqual(types(), ['attention.requested']);
  // A required integer given 3.5 says it is not an integer (never "missing").
  const r = await respond(p.id, { values: { need: 3.5 } });
  assert.deepEqual(
    issuesOf(r).map((i) => i.rule),
    ['form.not-integer'],
  );
  assert.match(issuesOf(r)[0]!.message, /whole numbers/);
  assert.doesNotMatch(issuesOf(r)[0]!.message, /missing/);
  // String constraints too; then a valid answer is accepted as sent.
  assert.deepEqual(rulesOf(await respond(p.id, { values: { need: 1, note: 'x' } })), ['form.too-short']);
  const ok = await respond(p.id, { values: { note: 'hi', count: 2, need: 1 } });
  assert.equal(ok.status, 'accepted');
  ok.after?.();
  assert.deepEqual((await p).status === 'answered' && (await p).answer, { values: { note: 'hi', count: 2, need: 1 } });
  await engine.shutdown();
});

test('every issue the engine reports names a rule of RULES, with its section, a path under /data/answer and a message naming the rule', async () => {
  const { port, respond } = recordingPort('redacted');
  const engine = new AttentionEngine(port);
  const m = mcpForm();
  const form = engine.requestAttention({ session: 's', kind: 'form', prompt: 'p', fields: m.data.fields, constraints: m.constraints });
  const perm = engine.requestAttention({
    session: 's',
    kind: 'permission',
    prompt: 'p',
    options: [{ id: 'allow', label: 'Allow' }],
    approvalText: 'rm -rf build',
  });
  const input = engine.requestAttention({ session: 's', kind: 'input', prompt: 'p' });
  const answers: [string, unknown][] = [
    [form.id, 'nope'],
    [form.id, { option: 3 }],
    [form.id, { text: 4 }],
    [form.id, {}],
    [form.id, { option: 'maybe' }],
    [form.id, { text: 'whatever' }],
    [form.id, { values: [] }],
    [form.id, { values: { need: 'x', zz: 1 } }],
    [perm.id, { option: 'allow' }],
    [perm.id, { text: 'blah' }],
    [perm.id, { values: {} }],
    [input.id, { option: 'x' }],
    [input.id, {}],
    ['no-such-request', { text: 'x' }],
  ];
  let n = 0;
  for (const [id, answer] of answers) {
    const d = await respond(id, answer);
    for (const i of issuesOf(d)) {
      n++;
      assert.ok(i.rule in RULES, `${JSON.stringify(answer)}: ${i.rule}`);
      assert.ok(i.section.length > 0);
      assert.ok(i.message.startsWith(`${i.rule}: `), i.message);
      assert.match(i.path, /^\/(data\/answer(\/(values|option|text)(\/.*)?)?|subject|session|approvalproof)$/, i.path);
    }
  }
  assert.ok(n >= answers.length);
  const wrong = await respond(input.id, { text: 'x' }, { session: 'other' });
  assert.deepEqual(rulesOf(wrong), ['control.respond.wrong-session']);
  await engine.shutdown();
});

test('C2: every form accepts decline and cancel without them in data.options; decline is answered, cancel dismissed; the outcome says which', async () => {
  const { port, respond, emitted } = recordingPort('redacted');
  let hookCalls = 0;
  const engine = new AttentionEngine(port);
  const fields: FieldSpec[] = [{ id: '1', type: 'string', label: 'Bucket', required: true }];
  const ask = () =>
    engine.requestAttention({
      session: 's',
      kind: 'form',
      prompt: 'Configure',
      fields,
      validate: () => {
        hookCalls++;
        return { ok: true };
      },
    });
  const a = ask();
  assert.equal(a.event.data?.['options'], undefined, 'no options member is added to data');
  const d = await respond(a.id, { option: 'decline', text: 'not today' });
  assert.equal(d.status, 'accepted');
  d.after?.();
  assert.deepEqual(await a, {
    status: 'answered',
    requestId: a.id,
    answer: { option: 'decline', text: 'not today' },
    via: 'control',
    by: 'ui',
    commandId: 'c1',
    refusal: 'decline',
  });
  const answered = emitted.find((e) => e.type === 'attention.answered' && e.subject === a.id);
  assert.deepEqual(answered?.data, { answer: { option: 'decline', text: 'not today' }, by: 'ui', via: 'control' });
  assert.equal(answered?.cause, 'c1');
  assert.deepEqual(emitted.find((e) => e.type === 'attention.resolved' && e.subject === a.id)?.data, {
    resolution: 'answered',
    latency_ms: (emitted.find((e) => e.type === 'attention.resolved' && e.subject === a.id)?.data as { latency_ms: number }).latency_ms,
  });

  const b = ask();
  const c = await respond(b.id, { text: '  CANCEL ' });
  assert.equal(c.status, 'accepted', 'text naming cancel chooses it (AEP-0008 §1)');
  c.after?.();
  assert.deepEqual(await b, { status: 'dismissed', requestId: b.id, reason: 'cancelled', refusal: 'cancel', via: 'control', by: 'ui', commandId: 'c2' });
  const forB = emitted.filter((e) => e.subject === b.id).map((e) => [e.type, (e.data as { resolution?: string } | undefined)?.resolution, e.cause]);
  assert.deepEqual(forB, [['attention.resolved', 'dismissed', 'c2']], 'cancel is recorded as resolved{dismissed}, cause = the command');
  const late = await respond(b.id, { option: 'decline' });
  assert.equal(late.status === 'rejected' && late.reason, 'refused');
  assert.equal(hookCalls, 0, 'the translation hook never sees a refusal');

  // Values win over an option sent beside them; out of band works the same way.
  const e = ask();
  assert.deepEqual(engine.answerOutOfBand(e.id, { option: 'cancel' }, 'terminal'), { ok: true, issues: [] });
  assert.deepEqual(await e, { status: 'dismissed', requestId: e.id, reason: 'cancelled', refusal: 'cancel', via: 'oob', by: 'terminal' });
  await engine.shutdown();
});

test('the validate hook translates: {ok:true, answer, result} reaches the outcome; {ok:false} nacks; legacy shapes still work; junk fails closed', async () => {
  const { port, respond } = recordingPort('full');
  const engine = new AttentionEngine(port);
  const fields: FieldSpec[] = [{ id: 'n', type: 'number', label: 'N' }];
  const raise = (validate: Parameters<AttentionEngine['requestAttention']>[0]['validate']) =>
    engine.requestAttention({ session: 's', kind: 'form', prompt: 'p', fields, validate });
  const a = raise((answer) => ({ ok: true, answer: { values: { n: 1 } }, result: { hookOutput: answer.values } }));
  const da = await respond(a.id, { values: { n: 7 } });
  da.after?.();
  const oa = await a;
  assert.ok(oa.status === 'answered');
  assert.deepEqual([oa.answer, oa.result], [{ values: { n: 1 } }, { hookOutput: { n: 7 } }]);
  const b = raise(() => ({
    ok: false,
    issues: [{ rule: 'form.out-of-range', path: '/data/answer/values/n', message: 'form.out-of-range: too big for the server', section: 'x' }],
  }));
  assert.deepEqual(rulesOf(await respond(b.id, { values: { n: 7 } })), ['form.out-of-range']);
  const c = raise(() => ({ ok: false, issues: [] }));
  assert.deepEqual(rulesOf(await respond(c.id, { values: { n: 7 } })), ['control.respond.validate-failed']);
  const d = raise(() => ({ answer: { values: { n: 2 } } }));
  const dd = await respond(d.id, { values: { n: 7 } });
  dd.after?.();
  assert.deepEqual((await d).status === 'answered' && (await d).answer, { values: { n: 2 } });
  const e = raise(() => []);
  const de = await respond(e.id, { values: { n: 7 } });
  de.after?.();
  const oe = await e;
  assert.ok(oe.status === 'answered' && !('result' in oe), 'no result member without a typed result');
  const f = raise(() => 'yes' as never);
  assert.deepEqual(rulesOf(await respond(f.id, { values: { n: 7 } })), ['control.respond.validate-failed'], 'an unknown hook result fails closed');
  const g = raise(() => {
    throw new Error('the secret hunter22 broke it');
  });
  const dg = await respond(g.id, { values: { n: 7 } });
  assert.deepEqual(rulesOf(dg), ['control.respond.validate-failed']);
  assert.doesNotMatch(JSON.stringify(dg), /hunter22/, 'a hook error text stays local');
  await engine.shutdown();
});

test('issue 12: a hook message or path that repeats a submitted value is replaced before it travels', async () => {
  const { port, respond } = recordingPort('full');
  const seen: string[] = [];
  const engine = new AttentionEngine(port);
  const fields: FieldSpec[] = [{ id: 'pw', type: 'string', label: 'Password' }];
  const p = engine.requestAttention({
    session: 's',
    kind: 'form',
    prompt: 'p',
    fields,
    validate: (a) => [
      {
        rule: 'form.format',
        path: `/data/answer/values/pw/${String(a.values?.['pw'])}`,
        message: `form.format: "${String(a.values?.['pw'])}" is not allowed`,
        section: 'x',
      },
    ],
    onRejected: (issues) => seen.push(...issues.map((i) => i.message)),
  });
  const d = await respond(p.id, { values: { pw: 'correct horse battery' } });
  assert.equal(d.status, 'rejected');
  assert.doesNotMatch(JSON.stringify(d), /correct horse/);
  assert.deepEqual(
    issuesOf(d).map((i) => [i.rule, i.path, i.message]),
    [['form.format', '/data/answer/values', `form.format: ${RULES['form.format'].meaning}`]],
  );
  assert.doesNotMatch(seen.join(), /correct horse/);
  await engine.shutdown();
});

// Answers mixing structural values and secrets; the property: no decision ever carries them.
const SECRET = fc.string({ minLength: 3, maxLength: 16 }).map((s) => `Ω${s}`);
const ANY = fc.oneof(SECRET, fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.array(SECRET, { maxLength: 3 }));
const ANSWER = fc.oneof(
  fc.record({ values: fc.dictionary(fc.oneof(fc.constantFrom('1', '2', '3', '4', '5'), SECRET), ANY, { maxKeys: 6 }) }),
  fc.record({ option: fc.oneof(SECRET, fc.constantFrom('decline', 'cancel', 'allow')) }, { requiredKeys: [] }),
  fc.record({ text: SECRET }),
  fc.record({ option: SECRET, text: SECRET }),
);
const FORM: FieldSpec[] = [
  { id: '1', type: 'string', label: 'Bucket', required: true },
  { id: '2', type: 'number', label: 'Days', min: 1, max: 365 },
  { id: '3', type: 'boolean', label: 'Encrypt' },
  {
    id: '4',
    type: 'select',
    label: 'Days',
    multi: true,
    choices: [
      { id: 'a', label: 'Mon' },
      { id: 'b', label: 'Tue' },
    ],
  },
  { id: '5', type: 'select', label: 'Class', choices: [{ id: 'x', label: 'X' }] },
];

test('property: a nack (issues, messages, detail) never repeats a submitted string, on forms, permissions and inputs', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom<CaptureLevel>('metadata', 'redacted', 'full'),
      fc.constantFrom('form', 'permission', 'input'),
      ANSWER,
      async (capture, kind, answer) => {
        const { port, respond } = recordingPort(capture);
        const engine = new AttentionEngine(port);
        const p =
          kind === 'form'
            ? engine.requestAttention({ session: 's', kind: 'form', prompt: 'p', fields: FORM, constraints: { '1': { minLength: 30, format: 'email' } } })
            : kind === 'permission'
              ? engine.requestAttention({
                  session: 's',
                  kind: 'permission',
                  prompt: 'p',
                  options: [
                    { id: 'allow', label: 'Allow' },
                    { id: 'deny', label: 'Deny' },
                  ],
                  approvalText: 'echo hi',
                })
              : engine.requestAttention({ session: 's', kind: 'input', prompt: 'p' });
        const d = await respond(p.id, answer);
        if (d.status === 'rejected') {
          const wire = JSON.stringify({ issues: d.issues ?? [], detail: d.detail ?? '' });
          for (const s of JSON.stringify(answer).match(/Ω[^"\\]*/g) ?? []) assert.ok(!wire.includes(s), `${wire} repeats ${s}`);
        }
        await engine.shutdown();
      },
    ),
    { numRuns: Number(process.env['AEP_FUZZ_RUNS'] ?? 300) },
  );
});

test('redaction before claiming redacted: prebuilt data, the approval prompt and the nack detail pass the §9.4 pipeline; full keeps them', async () => {
  const secret = 'api_key=sk-proj-abcdefghijklmnopqrstuvwxyz012345';
  const data = {
    kind: 'form',
    prompt: `Use ${secret} from /home/alice/keys`,
    respond_via: ['control'],
    context: { raw: secret },
    fields: [{ id: '1', type: 'select', label: `Key ${secret}`, choices: [{ id: 'a', label: `/home/alice/${secret}` }] }],
    options: [{ id: 'skip', label: `skip ${secret}` }],
  };
  for (const capture of ['redacted', 'full'] as const) {
    const { port, respond } = recordingPort(capture);
    const engine = new AttentionEngine(port);
    const p = engine.requestAttention({ session: 's', kind: 'form', data, fields: data.fields as FieldSpec[] });
    const raw = JSON.stringify(p.event.data);
    if (capture === 'redacted') {
      assert.doesNotMatch(raw, /sk-proj|alice/);
      assert.equal(p.event.data?.['context'], undefined, 'context is full-only');
      const d = p.event.data as typeof data;
      assert.equal(d.prompt, redact(data.prompt));
      assert.equal(d.fields[0]!.label, redact(data.fields[0]!.label));
      assert.equal(d.fields[0]!.choices[0]!.label, redact(data.fields[0]!.choices[0]!.label));
      assert.equal(d.options[0]!.label, redact(data.options[0]!.label));
      assert.equal(
        JSON.stringify(engine.requestAttention({ session: 's', kind: 'form', data: d, fields: data.fields as FieldSpec[] }).event.data),
        raw,
        'idempotent: already-redacted data is unchanged',
      );
    } else {
      assert.deepEqual(p.event.data, data);
    }
    assert.deepEqual(data.context, { raw: secret }, 'the caller data is not mutated');
    // An approval with a secret: the nack detail is redacted at redacted too (it names no value anyway).
    const perm = engine.requestAttention({
      session: 's',
      kind: 'permission',
      approvalText: `curl -H "Authorization: Bearer ${'x'.repeat(24)}"`,
      options: [
        { id: 'allow', label: 'Allow' },
        { id: 'deny', label: 'Deny' },
      ],
    });
    assert.equal(perm.event.data?.['prompt'], capture === 'full' ? perm.event.data?.['prompt'] : redact(String(perm.event.data?.['prompt'])));
    if (capture === 'redacted') assert.doesNotMatch(String(perm.event.data?.['prompt']), /xxxxxxxx/);
    const d = await respond(perm.id, { option: 'allow' });
    assert.ok(d.status === 'rejected' && d.detail !== undefined && d.detail === redact(d.detail));
    await engine.shutdown();
  }
});
