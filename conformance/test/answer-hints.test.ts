// Differential test of issue 13 ("the same answers through the engine, the adapter, the bridge and
// the inbox's client-side hints give the same verdicts"), the inbox's part. The engine, the
// adapter and the bridge are compared in answer-path.test.ts (next to this file); here the inbox's
// hint pipeline, exactly as the browser runs it (the request `data` as it arrives -> `fieldsOf`
// -> `checkValues`), is compared with the attention engine on the same random forms and answers
// (the shared generators of conformance/support/answer-cases.ts):
// - AEP forms and AskUserQuestion forms carry everything the engine checks: same verdict, same
//   rules;
// - MCP elicitation forms: the Annex A `data` cannot carry the schema's extra constraints
//   (integer-ness, lengths, formats, item counts; docs/decisions.md "One answer path"), so the
//   hint checks what the form carries and the engine adds those: a hint never refuses an answer
//   the engine accepts, every rule the hint reports the engine reports too, and where only the
//   engine refuses, each extra rule is a constraint rule;
// - whatever the engine refuses, the inbox attaches each issue of its nack to the field it names
//   (`rejectionIssues`), JSON-pointer-hostile ids included.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { elicitationToForm } from '@aep/protocol';
import type { FieldSpec as ProtocolFieldSpec, FormConstraints, Issue } from '@aep/protocol';
import { AttentionEngine } from '@aep/client';
import type { AttentionRequestInput } from '@aep/client';
import { checkValues, fieldsOf, rejectionIssues } from '../../packages/web/src/form.js';
import type { WireEvent } from '../../packages/web/src/store.js';
import { aepCase, askUserQuestionCase, mcpCase } from '../support/answer-cases.js';
import { recordingPort } from '../../packages/client/test/engine-port.js';

const RUNS = Number(process.env['AEP_FUZZ_RUNS'] ?? 300);

/** The rules only an emitter that knows the upstream schema can check (FieldConstraints). */
const CONSTRAINT_RULES = new Set(['form.not-integer', 'form.too-short', 'form.too-long', 'form.format', 'form.too-few-choices', 'form.too-many-choices']);

interface Verdict {
  ok: boolean;
  rules: string[];
  issues: Issue[];
}

async function engineVerdict(input: Omit<AttentionRequestInput, 'session'>, values: Record<string, unknown>): Promise<Verdict> {
  const { port, respond } = recordingPort('redacted');
  const engine = new AttentionEngine(port);
  const p = engine.requestAttention({ session: 's', ...input });
  const d = await respond(p.id, { values });
  await engine.shutdown();
  const issues = d.status === 'rejected' ? (d.issues ?? []) : [];
  return { ok: d.status === 'accepted', rules: issues.map((i) => i.rule).sort(), issues };
}

/** The inbox's hint: the request as the browser receives it, parsed and checked as the form view does. */
function inboxHint(data: Record<string, unknown>, values: Record<string, unknown>): { ok: boolean; rules: string[]; fields: ReturnType<typeof fieldsOf> } {
  const event: WireEvent = {
    id: 'R',
    type: 'attention.requested',
    source: 'aep://h/agent/a',
    session: 's',
    capture: 'redacted',
    data: JSON.parse(JSON.stringify(data)) as Record<string, unknown>,
  };
  const fields = fieldsOf(event);
  const shown = checkValues(fields, values);
  return { ok: shown.length === 0, rules: shown.map((s) => s.rule ?? '').sort(), fields };
}

/** Every issue of a nack is shown on the field its path names (when it names one). */
function assertIssuesAttach(issues: Issue[], fields: ReturnType<typeof fieldsOf>): void {
  const shown = rejectionIssues({ data: { reason: 'invalid', issues } }, fields);
  assert.equal(shown.length, issues.length);
  const ids = new Set(fields.map((f) => f.id));
  issues.forEach((issue, i) => {
    const m = /^\/data\/answer\/values\/([^/]+)/.exec(issue.path);
    const named = m?.[1]?.replace(/~1/g, '/').replace(/~0/g, '~');
    if (named !== undefined && ids.has(named)) assert.equal(shown[i]?.field, named, `${issue.path} is shown on field ${named}`);
    assert.equal(shown[i]?.rule, issue.rule);
  });
}

test('differential: on AEP forms the inbox hint and the engine give the same verdict and rules', async () => {
  let refused = 0;
  await fc.assert(
    fc.asyncProperty(aepCase, async (c) => {
      const values = JSON.parse(JSON.stringify(c.values)) as Record<string, unknown>;
      const engine = await engineVerdict({ kind: 'form', prompt: 'p', fields: c.fields }, values);
      const hint = inboxHint({ kind: 'form', prompt: 'p', fields: c.fields, respond_via: ['control'] }, values);
      assert.deepEqual({ ok: hint.ok, rules: hint.rules }, { ok: engine.ok, rules: engine.rules }, JSON.stringify({ fields: c.fields, values }));
      assertIssuesAttach(engine.issues, hint.fields);
      if (!engine.ok) refused++;
    }),
    { numRuns: RUNS },
  );
  assert.ok(refused > 0 && refused < RUNS, `both verdicts are exercised (${refused}/${RUNS} refused)`);
});

test('differential: on AskUserQuestion forms the inbox hint and the engine agree', async () => {
  await fc.assert(
    fc.asyncProperty(askUserQuestionCase, async (c) => {
      const engine = await engineVerdict({ kind: 'form', prompt: 'p', fields: c.fields }, c.values);
      const hint = inboxHint({ kind: 'form', prompt: 'p', fields: c.fields, respond_via: ['control'] }, c.values);
      assert.deepEqual({ ok: hint.ok, rules: hint.rules }, { ok: engine.ok, rules: engine.rules });
    }),
    { numRuns: RUNS },
  );
});

test('differential: on MCP elicitation forms the hint never refuses what the engine accepts; only the schema constraints differ', async () => {
  let constraintOnly = 0;
  await fc.assert(
    fc.asyncProperty(mcpCase, async (c) => {
      const r = elicitationToForm(c.params, { agent: 'diff', capture: 'redacted' });
      assert.ok(r.ok, r.ok ? '' : r.reason);
      if (!r.ok) return;
      const values = JSON.parse(JSON.stringify(c.values)) as Record<string, unknown>;
      const data = r.data as unknown as Record<string, unknown>;
      const constraints: FormConstraints = r.constraints;
      const engine = await engineVerdict({ kind: 'form', data, fields: r.data.fields as ProtocolFieldSpec[], constraints }, values);
      const hint = inboxHint(data, values);
      const where = JSON.stringify({ schema: c.params.requestedSchema, values });
      if (!hint.ok) assert.equal(engine.ok, false, `the hint refused what the engine accepts: ${where}`);
      for (const rule of hint.rules)
        assert.ok(engine.rules.includes(rule), `hint rule ${rule} is one the engine reports (${engine.rules.join(',')}): ${where}`);
      for (const rule of engine.rules) {
        if (!hint.rules.includes(rule)) assert.ok(CONSTRAINT_RULES.has(rule), `only schema constraints are the engine's alone, got ${rule}: ${where}`);
      }
      if (hint.ok && !engine.ok) constraintOnly++;
      assertIssuesAttach(engine.issues, hint.fields);
    }),
    { numRuns: RUNS },
  );
  assert.ok(constraintOnly > 0, "some answers are refused only for a schema constraint (the case the emitter's nack covers)");
});
