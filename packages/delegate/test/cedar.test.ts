// Issue 18 item 5: Cedar (@cedar-policy/cedar-wasm 4.13.0, checked on Node 20 here) behind the
// same decision interface: the same safety rules apply (decide.ts), and Cedar policies decide the
// same as the equivalent built-in rules.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BuiltinEngine, DelegateError, createCedarEngine, decide, parsePolicy } from '@aep/delegate';
import { ALLOW_DENY, facts } from './support.js';
import type { RequestSpec } from './support.js';

const CEDAR = `
@id("deny-rm")
@decision("deny")
permit(principal, action, resource == Tool::"Bash") when { context.digest == "DIGEST_RM" };

@id("prod-asks")
@decision("ask")
permit(principal, action, resource) when { context.session like "prod-*" };

@id("npm-test")
@option("allow")
@approval_text("npm test")
permit(principal == Agent::"claude-code", action, resource == Tool::"Bash") when { context.kind == "permission" };

@id("pm")
@values("{\\"manager\\":\\"pnpm\\"}")
permit(principal, action, resource) when { context.kind == "form" && context.field_ids.contains("manager") };

@id("all-bash")
@option("allow")
permit(principal, action, resource == Tool::"Bash");

@id("never-ci")
forbid(principal == Agent::"ci-bot", action, resource);
`;

async function cedarPolicy(text: string) {
  const policy = parsePolicy('version: 1\nengine: cedar\ncedar: rules.cedar\ntimezone: UTC\n', { file: 'p.yaml', readCedar: () => text });
  return { policy, engine: await createCedarEngine(policy) };
}

const NOW = Date.parse('2026-08-03T10:00:05.000Z');
const ctx = { now: NOW, timezone: 'UTC', firstSeen: NOW };

test('Cedar policies go through the same decision rules: tiers, approval text, values, forbid', async () => {
  const { approvalDigest } = await import('@aep/protocol');
  const { engine } = await cedarPolicy(CEDAR.replace('DIGEST_RM', approvalDigest('rm -rf /')));
  const run = (spec: RequestSpec) => decide(engine, [], facts(spec), ctx).verdict;
  assert.deepEqual(run({ subject: 'Bash', options: ALLOW_DENY, approvalText: 'rm -rf /' }), {
    action: 'answer',
    tier: 'deny',
    rule: 'deny-rm',
    answer: { option: 'deny' },
    shadow: false,
  });
  assert.deepEqual(run({ subject: 'Bash', options: ALLOW_DENY, approvalText: 'npm test' }), {
    action: 'answer',
    tier: 'allow',
    rule: 'npm-test',
    answer: { option: 'allow' },
    proofText: 'npm test',
    shadow: false,
  });
  assert.deepEqual(run({ subject: 'Bash', options: ALLOW_DENY, approvalText: 'npm test', session: 'prod-1' }), {
    action: 'ask',
    reason: 'ask-rule',
    rule: 'prod-asks',
  });
  // The tool-wide Cedar "allow" never allows an approval request: no approval text, so the shared rules skip it.
  const d = decide(engine, [], facts({ subject: 'Bash', options: ALLOW_DENY, approvalText: 'make deploy' }), ctx);
  assert.deepEqual(d.verdict, { action: 'ask', reason: 'no-match' });
  assert.ok(
    d.trace.some((t) => t.rule === 'all-bash' && /exact approval text/.test(t.why)),
    JSON.stringify(d.trace),
  );
  assert.deepEqual(
    run({
      kind: 'form',
      fields: [
        {
          id: 'manager',
          type: 'select',
          label: 'Which package manager?',
          choices: [
            { id: 'npm', label: 'npm' },
            { id: 'pnpm', label: 'pnpm' },
          ],
        },
      ],
    }),
    { action: 'answer', tier: 'allow', rule: 'pm', answer: { values: { manager: 'pnpm' } }, shadow: false },
  );
  assert.deepEqual(run({ agent: 'ci-bot', subject: 'Bash', options: ALLOW_DENY, approvalText: 'rm -rf /' }), {
    action: 'ask',
    reason: 'forbidden',
    rule: 'never-ci',
  });
  assert.deepEqual(run({ kind: 'auth', options: ALLOW_DENY }), { action: 'ask', reason: 'never' });
});

test('Cedar and the built-in rules decide the same for the same rules', async () => {
  const { engine: cedar } = await cedarPolicy(`
@id("deny-edit") @decision("deny") permit(principal, action, resource == Tool::"Edit");
@id("yes-input") @option("yes") permit(principal == Agent::"demo-agent", action, resource) when { context.kind == "input" };
@id("late") @decision("deny") permit(principal, action, resource) when { context.pending_ms >= 120000 };
`);
  const builtin = new BuiltinEngine(
    parsePolicy(`version: 1
timezone: UTC
rules:
  - {id: deny-edit, match: {tool: Edit}, decision: deny}
  - {id: yes-input, match: {agent: demo-agent, kind: input}, decision: {option: "yes"}}
  - {id: late, match: {pending: {min: 2m}}, decision: deny}
`),
  );
  const specs: RequestSpec[] = [
    { subject: 'Edit', options: ALLOW_DENY },
    { subject: 'Bash', options: ALLOW_DENY },
    { agent: 'demo-agent', kind: 'input', options: [{ id: 'yes' }, { id: 'no' }] },
    { agent: 'claude-code', kind: 'input', options: [{ id: 'yes' }, { id: 'no' }] },
    { kind: 'input', options: [{ id: 'yes' }, { id: 'no' }], time: '2026-08-03T09:50:00.000Z' },
  ];
  for (const spec of specs) {
    const a = decide(cedar, [], facts(spec), ctx).verdict;
    const b = decide(builtin, [], facts(spec), ctx).verdict;
    assert.deepEqual(a, b, JSON.stringify(spec));
  }
});

test('bad Cedar is refused with AEP_DELEGATE_CEDAR naming the line; every policy needs @id and one decision', async () => {
  const bad = async (text: string, re: RegExp) => {
    await assert.rejects(cedarPolicy(text), (err: unknown) => err instanceof DelegateError && err.code === 'AEP_DELEGATE_CEDAR' && re.test(err.message));
  };
  await bad('permit(principal, action, resource) when { context.kind == };', /^rules\.cedar:1: not valid Cedar/);
  await bad('\n\npermit(principal, action, resource);', /needs @id/);
  await bad('@id("a")\npermit(principal, action, resource);', /^rules\.cedar:1: policy a: give exactly one of/);
  await bad('@id("a") @decision("allow") permit(principal, action, resource);', /@decision is deny or ask/);
  await bad('@id("a") @values("{\\"x\\":{\\"y\\":1}}") permit(principal, action, resource);', /@values\.x must be a number, a boolean, a choice id/);
  await bad('@id("a") @decision("deny") permit(principal, action, resource);\n@id("a") @decision("ask") permit(principal, action, resource);', /used twice/);
  await bad('@id("grant-x") @decision("deny") permit(principal, action, resource);', /reserved for grants/);
});

test('the Cedar context holds structural facts only', async () => {
  const { CedarEngine } = await import('@aep/delegate');
  const c = CedarEngine.context(facts({ subject: 'Bash', options: ALLOW_DENY, approvalText: 'npm test', prompt: 'PLANTED prompt' }), ctx, 'UTC');
  assert.ok(!JSON.stringify(c).includes('PLANTED') && !JSON.stringify(c).includes('label of'));
  assert.deepEqual(Object.keys(c).sort(), [
    'digest',
    'field_ids',
    'fields',
    'has_digest',
    'hour',
    'kind',
    'minute',
    'options',
    'pending_ms',
    'session',
    'severity',
    'source',
    'weekday',
  ]);
});
