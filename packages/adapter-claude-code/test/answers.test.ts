// Answers -> exact Claude Code hook output (integrations.md §1), with the AEP-0006 MUST-reject
// rule and the AEP-0008 text rule deciding what is accepted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { ClaudeCodeMapper, applyAnswer, mappingConfig, parseHookInput } from '@aep/adapter-claude-code';
import type { AttentionSpec } from '@aep/adapter-claude-code';

const fixture = (name: string): unknown => JSON.parse(readFileSync(new URL(`./fixtures/hooks/${name}.json`, import.meta.url), 'utf8'));

function specOf(payload: unknown): AttentionSpec {
  const r = new ClaudeCodeMapper(mappingConfig()).map(parseHookInput(payload), 0);
  assert.ok(r.attention, 'an answerable request');
  return r.attention;
}

const askPayload = fixture('AskUserQuestion') as { tool_input: { questions: unknown[] } };
const ask = specOf(askPayload);
const perm = specOf(fixture('PermissionRequest'));
const elic = specOf(fixture('Elicitation'));

test('AskUserQuestion: allow + updatedInput with questions echoed and answers keyed by question text', () => {
  const r = applyAnswer(ask, { values: { '1': '2', '2': ['1', '3'] } });
  assert.ok(r.ok);
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
  assert.deepEqual(r.applied, { values: { '1': '2', '2': ['1', '3'] } });
});

test('AskUserQuestion: "other" free text is the answer itself (single and inside a multi array)', () => {
  const r = applyAnswer(ask, { values: { '1': 'Svelte, please', '2': ['2', 'Klarna'] } });
  assert.ok(r.ok);
  const answers = ((r.output['hookSpecificOutput'] as Record<string, unknown>)['updatedInput'] as Record<string, unknown>)['answers'];
  assert.deepEqual(answers, { 'Which framework should the checkout page use?': 'Svelte, please', 'Which payment providers do we support?': 'PayPal, Klarna' });
});

test('AskUserQuestion: a missing required answer is rejected (AEP-0006 §4 rule 1), so is a bad shape', () => {
  const r = applyAnswer(ask, { values: { '1': '1' } });
  assert.equal(r.ok, false);
  if (!r.ok) assert.ok(r.issues.some((i) => i.path.includes('2') || i.message.includes('2')), JSON.stringify(r.issues));
  assert.equal(applyAnswer(ask, { text: 'React' }).ok, false, 'a form is not answered by text alone');
  assert.equal(applyAnswer(ask, { option: 'maybe' }).ok, false);
  assert.equal(applyAnswer(ask, 'React').ok, false);
  assert.equal(applyAnswer(ask, { values: [] }).ok, false);
});

test('AskUserQuestion: decline (deny with a reason Claude reads) and cancel (no decision), contract C2', () => {
  const decline = applyAnswer(ask, { option: 'decline', text: 'Ask me tomorrow' });
  assert.ok(decline.ok);
  assert.deepEqual(decline.output, { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'Ask me tomorrow' } });
  assert.deepEqual(decline.applied, { option: 'decline', text: 'Ask me tomorrow' });
  const bare = applyAnswer(ask, { option: 'decline' });
  assert.ok(bare.ok);
  assert.deepEqual(bare.output, { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'The user declined to answer these questions.' } });
  const cancel = applyAnswer(ask, { option: 'cancel' });
  assert.ok(cancel.ok);
  assert.deepEqual(cancel.output, {}, 'no decision: Claude Code asks in its own dialog');
  for (const gone of ['skip', 'deny']) assert.equal(applyAnswer(ask, { option: gone }).ok, false, `${gone} is not an option of a form`);
});

test('PermissionRequest: allow, deny with the reason as message, AEP-0008 text mapping', () => {
  const allow = applyAnswer(perm, { option: 'allow' });
  assert.ok(allow.ok);
  assert.deepEqual(allow.output, { hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } } });
  const deny = applyAnswer(perm, { option: 'deny', text: 'never force-push main' });
  assert.ok(deny.ok);
  assert.deepEqual(deny.output, { hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'deny', message: 'never force-push main', interrupt: false } } });
  const word = applyAnswer(perm, { text: '  DENY ' });
  assert.ok(word.ok);
  assert.deepEqual(word.applied, { option: 'deny' });
  const yes = applyAnswer(perm, { text: 'Allow' });
  assert.ok(yes.ok);
  assert.deepEqual(yes.applied, { option: 'allow' });
  // Unmatched text never grants (AEP-0008 §1 step 4): it denies with the text as the reason.
  const other = applyAnswer(perm, { text: 'use the staging remote instead' });
  assert.ok(other.ok);
  assert.deepEqual(other.applied, { option: 'deny', text: 'use the staging remote instead' });
  assert.equal(((other.output['hookSpecificOutput'] as Record<string, unknown>)['decision'] as Record<string, unknown>)['message'], 'use the staging remote instead');
  assert.equal(applyAnswer(perm, { option: 'always' }).ok, false);
  assert.equal(applyAnswer(perm, {}).ok, false);
});

test('Elicitation: accept with content typed back (integers restored, arrays, booleans, defaults)', () => {
  const r = applyAnswer(elic, { values: { env: 'prod', replicas: 3, ratio: 0.25, features: ['cdn', 'logs'], tags: ['b'], notify: false, note: 'ship it' } });
  assert.ok(r.ok, JSON.stringify(r));
  const out = r.output['hookSpecificOutput'] as Record<string, unknown>;
  assert.equal(out['hookEventName'], 'Elicitation');
  assert.equal(out['action'], 'accept');
  const content = out['content'] as Record<string, unknown>;
  assert.deepEqual(content, { env: 'prod', region: 'eu', replicas: 3, ratio: 0.25, features: ['cdn', 'logs'], tags: ['b'], notify: false, note: 'ship it' });
  assert.ok(Number.isInteger(content['replicas']));
});

test('Elicitation: out-of-range, wrong type, unknown enum and missing required are rejected', () => {
  for (const values of [
    { env: 'prod', replicas: 11 },
    { env: 'prod', replicas: 2.5 },
    { env: 'qa', replicas: 2 },
    { replicas: 2 },
    { env: 'prod', replicas: '2' },
    { env: 'prod', replicas: 2, note: 'x'.repeat(201) },
  ]) assert.equal(applyAnswer(elic, { values }).ok, false, JSON.stringify(values));
  const decline = applyAnswer(elic, { option: 'decline' });
  assert.ok(decline.ok);
  assert.deepEqual(decline.output, { hookSpecificOutput: { hookEventName: 'Elicitation', action: 'decline' } });
  const cancel = applyAnswer(elic, { option: 'cancel' });
  assert.ok(cancel.ok);
  assert.deepEqual(cancel.output, { hookSpecificOutput: { hookEventName: 'Elicitation', action: 'cancel' } });
});

test('property: any valid AskUserQuestion answer maps to labels/free text keyed by question text', () => {
  const question = fc.record({
    question: fc.string({ minLength: 1, maxLength: 30 }),
    header: fc.string({ maxLength: 12 }),
    multiSelect: fc.boolean(),
    options: fc.uniqueArray(fc.string({ minLength: 1, maxLength: 10 }), { minLength: 2, maxLength: 4 }).map((ls) => ls.map((label) => ({ label }))),
  });
  const runs = Number(process.env['AEP_FUZZ_RUNS'] ?? 200);
  fc.assert(fc.property(
    fc.uniqueArray(question, { minLength: 1, maxLength: 4, selector: (q) => q.question }),
    fc.array(fc.nat(), { minLength: 4, maxLength: 4 }),
    fc.string({ minLength: 1, maxLength: 12 }).filter((s) => !/^[1-9][0-9]*$/.test(s)),
    (questions, picks, freeText) => {
      const spec = specOf({ hook_event_name: 'PreToolUse', session_id: 's1', tool_name: 'AskUserQuestion', tool_use_id: 't', tool_input: { questions } });
      const values: Record<string, unknown> = {};
      const expected: Record<string, string> = {};
      questions.forEach((q, i) => {
        const pick = picks[i]! % (q.options.length + 1);
        if (pick === q.options.length) { values[String(i + 1)] = q.multiSelect ? [freeText] : freeText; expected[q.question] = freeText; return; }
        if (q.multiSelect) {
          const ids = [...new Set([pick, 0])].sort().map((n) => String(n + 1));
          values[String(i + 1)] = ids;
          expected[q.question] = ids.map((id) => q.options[Number(id) - 1]!.label).join(', ');
        } else {
          values[String(i + 1)] = String(pick + 1);
          expected[q.question] = q.options[pick]!.label;
        }
      });
      const r = applyAnswer(spec, { values });
      assert.ok(r.ok, JSON.stringify(r));
      const upd = (r.output['hookSpecificOutput'] as Record<string, unknown>)['updatedInput'] as Record<string, unknown>;
      assert.deepEqual(upd['answers'], expected);
      assert.deepEqual(upd['questions'], questions);
    },
  ), { numRuns: runs });
});
