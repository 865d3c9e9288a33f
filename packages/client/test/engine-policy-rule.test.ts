// Issue 18: what the emitter records for a policy delegate's answer. A `control.attention.respond`
// carrying the extension attribute `policyrule` (a rule id) is recorded `attention.answered`
// with `by` = the sender's agent and `attention.resolved{resolution:"auto"}`, both carrying the
// attribute. The attribute is asserted by the sender: it changes the audit label only, never
// what is accepted (an allow still needs the approval proof, a malformed id is ignored).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { APPROVAL_PROOF_ATTR, approvalProof } from '@aep/protocol';
import { AttentionEngine, POLICY_RULE_ATTR, POLICY_RULE_PATTERN } from '@aep/client';
import { recordingPort, rulesOf } from './engine-port.js';

const OPTIONS = [
  { id: 'allow', label: 'Allow' },
  { id: 'deny', label: 'Deny' },
];
const rec = (ev: unknown) => ev as Record<string, unknown>;

test('an answer naming a policy rule is recorded answered by the delegate and resolved auto, with the rule', async () => {
  const { port, respond, emitted } = recordingPort('metadata');
  const engine = new AttentionEngine(port);
  const p = engine.requestAttention({ session: 's', kind: 'permission', prompt: 'rm -rf ./build', subject: 'Bash', options: OPTIONS });
  const d = await respond(p.id, { option: 'deny' }, { agent: 'aep-delegate', attrs: { [POLICY_RULE_ATTR]: 'deny-rm-rf' } });
  assert.equal(d.status, 'accepted');
  d.after?.();
  const outcome = await p;
  assert.deepEqual(outcome.status === 'answered' && { rule: outcome.rule, by: outcome.by, answer: outcome.answer }, {
    rule: 'deny-rm-rf',
    by: 'aep-delegate',
    answer: { option: 'deny' },
  });
  const answered = emitted.find((e) => e.type === 'attention.answered')!;
  const resolved = emitted.find((e) => e.type === 'attention.resolved')!;
  assert.deepEqual(answered.data, { answer: { option: 'deny' }, by: 'aep-delegate', via: 'control' });
  assert.equal(rec(answered)[POLICY_RULE_ATTR], 'deny-rm-rf');
  assert.equal((resolved.data as { resolution: string }).resolution, 'auto');
  assert.equal(rec(resolved)[POLICY_RULE_ATTR], 'deny-rm-rf');
  assert.equal(resolved.subject, p.id);
});

test('without the attribute (or with a malformed one) the request resolves answered, as before', async () => {
  for (const attrs of [{}, { [POLICY_RULE_ATTR]: 'Not A Rule!' }, { [POLICY_RULE_ATTR]: 7 }, { [POLICY_RULE_ATTR]: 'x'.repeat(65) }]) {
    const { port, respond, emitted } = recordingPort('metadata');
    const engine = new AttentionEngine(port);
    const p = engine.requestAttention({ session: 's', kind: 'input', prompt: 'q', options: [{ id: 'a', label: 'A' }] });
    const d = await respond(p.id, { option: 'a' }, { attrs });
    d.after?.();
    const outcome = await p;
    assert.equal(outcome.status === 'answered' && outcome.rule, undefined, JSON.stringify(attrs));
    const resolved = emitted.find((e) => e.type === 'attention.resolved')!;
    assert.equal((resolved.data as { resolution: string }).resolution, 'answered');
    assert.equal(rec(resolved)[POLICY_RULE_ATTR], undefined, 'a malformed id is never echoed');
  }
});

test('the attribute grants nothing: an allow without the approval proof is nacked, with it accepted and labelled auto', async () => {
  const { port, respond, emitted } = recordingPort('full');
  const engine = new AttentionEngine(port);
  const text = 'npm test';
  const p = engine.requestAttention({ session: 's', kind: 'permission', approvalText: text, subject: 'Bash', options: OPTIONS });
  const bare = await respond(p.id, { option: 'allow' }, { agent: 'aep-delegate', attrs: { [POLICY_RULE_ATTR]: 'npm-test' } });
  assert.deepEqual(rulesOf(bare), ['control.respond.approval-proof']);
  assert.deepEqual(engine.pending(), [p.id], 'still pending');
  assert.equal(emitted.filter((e) => e.type === 'attention.resolved').length, 0);
  const ok = await respond(
    p.id,
    { option: 'allow' },
    { agent: 'aep-delegate', attrs: { [POLICY_RULE_ATTR]: 'npm-test', [APPROVAL_PROOF_ATTR]: approvalProof(p.id, text) } },
  );
  assert.equal(ok.status, 'accepted');
  ok.after?.();
  assert.equal((await p).status === 'answered' && ((await p) as { rule?: string }).rule, 'npm-test');
  const resolved = emitted.find((e) => e.type === 'attention.resolved')!;
  assert.equal((resolved.data as { resolution: string }).resolution, 'auto');
});

test('a form answered by rule (values) is resolved auto; a cancel by rule stays dismissed', async () => {
  const fields = [
    {
      id: 'pm',
      type: 'select' as const,
      label: 'Which package manager?',
      choices: [
        { id: 'npm', label: 'npm' },
        { id: 'pnpm', label: 'pnpm' },
      ],
    },
  ];
  const { port, respond, emitted } = recordingPort('metadata');
  const engine = new AttentionEngine(port);
  const a = engine.requestAttention({ session: 's', kind: 'form', prompt: 'f', fields });
  (await respond(a.id, { values: { pm: 'pnpm' } }, { agent: 'aep-delegate', attrs: { [POLICY_RULE_ATTR]: 'pm' } })).after?.();
  const b = engine.requestAttention({ session: 's', kind: 'form', prompt: 'f', fields });
  (await respond(b.id, { option: 'cancel' }, { agent: 'aep-delegate', attrs: { [POLICY_RULE_ATTR]: 'pm-cancel' } })).after?.();
  const resolutions = emitted.filter((e) => e.type === 'attention.resolved').map((e) => [e.subject, (e.data as { resolution: string }).resolution]);
  assert.deepEqual(resolutions, [
    [a.id, 'auto'],
    [b.id, 'dismissed'],
  ]);
  assert.deepEqual((await a).status === 'answered' && (await a).answer, { values: { pm: 'pnpm' } });
});

test('property: whatever the attribute, the verdict is the same as without it; only well-formed ids label auto', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.oneof(fc.string({ maxLength: 70 }), fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,63}$/)),
      fc.constantFrom({ option: 'allow' }, { option: 'deny' }, { text: 'Allow' }, { text: 'nope' }, { option: 'maybe' }),
      fc.boolean(),
      async (rule, answer, withProof) => {
        const verdict = async (attrs: Record<string, unknown>) => {
          const { port, respond, emitted } = recordingPort('full');
          const engine = new AttentionEngine(port);
          const p = engine.requestAttention({ session: 's', kind: 'permission', approvalText: 'make deploy', options: OPTIONS });
          const d = await respond(p.id, answer, { attrs: { ...attrs, ...(withProof ? { [APPROVAL_PROOF_ATTR]: approvalProof(p.id, 'make deploy') } : {}) } });
          d.after?.();
          const resolved = emitted.find((e) => e.type === 'attention.resolved');
          return { status: d.status, rules: rulesOf(d), resolution: (resolved?.data as { resolution?: string } | undefined)?.resolution };
        };
        const plain = await verdict({});
        const labelled = await verdict({ [POLICY_RULE_ATTR]: rule });
        assert.equal(labelled.status, plain.status);
        assert.deepEqual(labelled.rules, plain.rules);
        if (plain.resolution !== undefined) assert.equal(labelled.resolution, POLICY_RULE_PATTERN.test(rule) ? 'auto' : 'answered');
        else assert.equal(labelled.resolution, undefined);
      },
    ),
    { numRuns: 200 },
  );
});
