// Answers -> exact Claude Code hook output (docs/integrations.md §1). The attention engine alone
// decides whether an answer is valid (issue 13: AEP-0006 MUST-reject rule and the schema's
// constraints as data, AEP-0008 text rule, decline/cancel, the approval proof); the adapter only
// translates. Each case goes through the engine exactly as the daemon wires it (engineRequest).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { approvalProof } from '@aep/protocol';
import { AttentionEngine } from '@aep/client';
import type { AttentionOutcome, CommandDecision } from '@aep/client';
import { ClaudeCodeMapper, engineRequest, hookOutput, mappingConfig, NO_DECISION, parseHookInput } from '@aep/adapter-claude-code';
import type { AttentionSpec } from '@aep/adapter-claude-code';
import { recordingPort } from '../../client/test/engine-port.js';

const fixture = (name: string): unknown => JSON.parse(readFileSync(new URL(`./fixtures/hooks/${name}.json`, import.meta.url), 'utf8'));

function specOf(payload: unknown): AttentionSpec {
  const r = new ClaudeCodeMapper(mappingConfig({ capture: 'redacted' })).map(parseHookInput(payload), 0);
  assert.ok(r.attention, 'an answerable request');
  return r.attention;
}

/** The hook output the daemon would answer with (daemon.ts `hold`), or the nack. */
function outputOf(spec: AttentionSpec, o: AttentionOutcome): Record<string, unknown> {
  if (o.status === 'answered') return hookOutput(spec, o.answer);
  if (o.status === 'dismissed' && o.refusal === 'cancel') return hookOutput(spec, { option: 'cancel' });
  return NO_DECISION;
}

/** One answer through the engine as the daemon raises the request. */
async function answer(
  spec: AttentionSpec,
  a: unknown,
  attrs?: Record<string, unknown>,
): Promise<{ decision: CommandDecision; output?: Record<string, unknown>; recorded?: unknown }> {
  const { port, respond, emitted } = recordingPort('redacted');
  const engine = new AttentionEngine(port);
  const p = engine.requestAttention(engineRequest(spec));
  const decision = await respond(p.id, a, { session: spec.request.session, ...(attrs ? { attrs } : {}) });
  if (decision.status !== 'accepted') {
    await engine.shutdown();
    return { decision };
  }
  decision.after?.();
  const o = await p;
  const recorded = emitted.find((e) => e.type === 'attention.answered')?.data;
  await engine.shutdown();
  return { decision, output: outputOf(spec, o), recorded };
}

const askPayload = fixture('AskUserQuestion') as { tool_input: { questions: unknown[] } };
const ask = specOf(askPayload);
const perm = specOf(fixture('PermissionRequest'));
const elic = specOf(fixture('Elicitation'));
const PERM_TEXT = 'git push origin main --force';
const proof = (attrs: { id: string }) => ({ approvalproof: approvalProof(attrs.id, PERM_TEXT) });

test('AskUserQuestion: allow + updatedInput with questions echoed and answers keyed by question text', async () => {
  const r = await answer(ask, { values: { '1': '2', '2': ['1', '3'] } });
  assert.equal(r.decision.status, 'accepted');
  assert.deepEqual(r.output, {
    hookSpecificOutput: {
      hookEventName: 'PreToolUse',
      permissionDecision: 'allow',
      updatedInput: {
        questions: askPayload.tool_input.questions,
        answers: { 'Which framework should the checkout page use?': 'Vue', 'Which payment providers do we support?': 'Stripe, Adyen' },
      },
    },
  });
});

test('AskUserQuestion: "other" free text is the answer itself (single and inside a multi array)', async () => {
  const r = await answer(ask, { values: { '1': 'Svelte, please', '2': ['2', 'Klarna'] } });
  const answers = ((r.output!['hookSpecificOutput'] as Record<string, unknown>)['updatedInput'] as Record<string, unknown>)['answers'];
  assert.deepEqual(answers, { 'Which framework should the checkout page use?': 'Svelte, please', 'Which payment providers do we support?': 'PayPal, Klarna' });
});

test('AskUserQuestion: a missing required answer, text alone, an unknown option or a bad shape are nacked invalid', async () => {
  for (const a of [{ values: { '1': '1' } }, { text: 'React' }, { option: 'maybe' }, 'React', { values: [] }, { option: 'skip' }, { option: 'deny' }]) {
    const r = await answer(ask, a);
    assert.equal(r.decision.status, 'rejected', JSON.stringify(a));
    assert.equal(r.decision.status === 'rejected' && r.decision.reason, 'invalid');
    assert.ok(r.decision.status === 'rejected' && !(r.decision.issues ?? []).some((i) => i.rule === 'control.respond.wrong-session'), 'judged on the answer');
  }
});

test('AskUserQuestion: decline (deny with a reason Claude reads) and cancel (no decision), contract C2', async () => {
  const decline = await answer(ask, { option: 'decline', text: 'Ask me tomorrow' });
  assert.deepEqual(decline.output, {
    hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'Ask me tomorrow' },
  });
  const bare = await answer(ask, { option: 'decline' });
  assert.deepEqual(bare.output, {
    hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'The user declined to answer these questions.' },
  });
  const cancel = await answer(ask, { option: 'cancel' });
  assert.equal(cancel.decision.status, 'accepted');
  assert.deepEqual(cancel.output, {}, 'no decision: Claude Code asks in its own dialog');
});

test('PermissionRequest: allow (with the approval proof), deny with the reason as message, AEP-0008 text mapping', async () => {
  const unproven = await answer(perm, { option: 'allow' });
  assert.deepEqual([unproven.decision.status, unproven.decision.status === 'rejected' && unproven.decision.reason], ['rejected', 'invalid'], 'contract C1');
  const { port, respond } = recordingPort('redacted');
  const engine = new AttentionEngine(port);
  const p = engine.requestAttention(engineRequest(perm));
  const ok = await respond(p.id, { option: 'allow' }, { session: perm.request.session, attrs: proof(p) });
  assert.equal(ok.status, 'accepted');
  ok.after?.();
  assert.deepEqual(outputOf(perm, await p), { hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } } });
  await engine.shutdown();
  const deny = await answer(perm, { option: 'deny', text: 'never force-push main' });
  assert.deepEqual(deny.output, {
    hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'deny', message: 'never force-push main', interrupt: false } },
  });
  const word = await answer(perm, { text: '  DENY ' });
  assert.deepEqual(word.output, {
    hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'deny', message: 'Denied by the user.', interrupt: false } },
  });
  const yes = await answer(perm, { text: 'Allow' });
  assert.equal(yes.decision.status === 'rejected' && yes.decision.reason, 'invalid', 'text that maps to allow needs the proof too');
  // Unmatched text never grants (AEP-0008 §1 step 4).
  const other = await answer(perm, { text: 'use the staging remote instead' });
  assert.notEqual(other.output && JSON.stringify(other.output).includes('"allow"'), true);
  for (const a of [{ option: 'always' }, {}]) assert.equal((await answer(perm, a)).decision.status, 'rejected', JSON.stringify(a));
});

test('Elicitation: accept with content typed back (integers restored, arrays, booleans, defaults)', async () => {
  const r = await answer(elic, { values: { env: 'prod', replicas: 3, ratio: 0.25, features: ['cdn', 'logs'], tags: ['b'], notify: false, note: 'ship it' } });
  assert.equal(r.decision.status, 'accepted', JSON.stringify(r.decision));
  const out = r.output!['hookSpecificOutput'] as Record<string, unknown>;
  assert.equal(out['action'], 'accept');
  const content = out['content'] as Record<string, unknown>;
  assert.deepEqual(content, { env: 'prod', region: 'eu', replicas: 3, ratio: 0.25, features: ['cdn', 'logs'], tags: ['b'], notify: false, note: 'ship it' });
  assert.ok(Number.isInteger(content['replicas']));
});

test('Elicitation: out-of-range, non-integer, unknown enum, missing required, wrong type, too long are nacked by the engine; decline/cancel are MCP actions', async () => {
  for (const values of [
    { env: 'prod', replicas: 11 },
    { env: 'prod', replicas: 2.5 },
    { env: 'qa', replicas: 2 },
    { replicas: 2 },
    { env: 'prod', replicas: '2' },
    { env: 'prod', replicas: 2, note: 'x'.repeat(201) },
  ]) {
    const r = await answer(elic, { values });
    assert.equal(r.decision.status === 'rejected' && r.decision.reason, 'invalid', JSON.stringify(values));
  }
  assert.deepEqual((await answer(elic, { option: 'decline' })).output, { hookSpecificOutput: { hookEventName: 'Elicitation', action: 'decline' } });
  assert.deepEqual((await answer(elic, { option: 'cancel' })).output, { hookSpecificOutput: { hookEventName: 'Elicitation', action: 'cancel' } });
});

test('property: any valid AskUserQuestion answer maps to labels/free text keyed by question text', async () => {
  const question = fc.record({
    question: fc.string({ minLength: 1, maxLength: 30 }),
    header: fc.string({ maxLength: 12 }),
    multiSelect: fc.boolean(),
    options: fc.uniqueArray(fc.string({ minLength: 1, maxLength: 10 }), { minLength: 2, maxLength: 4 }).map((ls) => ls.map((label) => ({ label }))),
  });
  const runs = Number(process.env['AEP_FUZZ_RUNS'] ?? 200);
  await fc.assert(
    fc.asyncProperty(
      fc.uniqueArray(question, { minLength: 1, maxLength: 4, selector: (q) => q.question }),
      fc.array(fc.nat(), { minLength: 4, maxLength: 4 }),
      fc.string({ minLength: 1, maxLength: 12 }).filter((s) => !/^[1-9][0-9]*$/.test(s)),
      async (questions, picks, freeText) => {
        const spec = specOf({ hook_event_name: 'PreToolUse', session_id: 's1', tool_name: 'AskUserQuestion', tool_use_id: 't', tool_input: { questions } });
        const values: Record<string, unknown> = {};
        const expected: Record<string, string> = {};
        questions.forEach((q, i) => {
          const pick = picks[i]! % (q.options.length + 1);
          if (pick === q.options.length) {
            values[String(i + 1)] = q.multiSelect ? [freeText] : freeText;
            expected[q.question] = freeText;
            return;
          }
          if (q.multiSelect) {
            const ids = [...new Set([pick, 0])].sort().map((n) => String(n + 1));
            values[String(i + 1)] = ids;
            expected[q.question] = ids.map((id) => q.options[Number(id) - 1]!.label).join(', ');
          } else {
            values[String(i + 1)] = String(pick + 1);
            expected[q.question] = q.options[pick]!.label;
          }
        });
        const r = await answer(spec, { values });
        assert.equal(r.decision.status, 'accepted', JSON.stringify(r.decision));
        const upd = (r.output!['hookSpecificOutput'] as Record<string, unknown>)['updatedInput'] as Record<string, unknown>;
        assert.deepEqual(upd['answers'], expected);
        assert.deepEqual(upd['questions'], questions);
      },
    ),
    { numRuns: runs },
  );
});
