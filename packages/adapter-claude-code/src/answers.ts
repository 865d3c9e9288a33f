// Answers -> Claude Code hook output (docs/integrations.md §1 "Answering AskUserQuestion",
// "PermissionRequest", "Elicitation"). Pure translation (issue 13 item 1, "one answer path"):
// the attention engine alone decides whether an answer is valid (shape, options, AEP-0008 text,
// AEP-0006 values with the schema's constraints as data, the approval proof, decline/cancel);
// what it accepted becomes here the exact hook JSON Claude Code reads.
import type { Issue } from '@aep/protocol';
import { FORM_CANCEL_OPTION, FORM_DECLINE_OPTION, formValuesToElicitationContent, validateElicitationContent } from '@aep/protocol';
import type { AnswerVerdict } from '@aep/client';
import type { AttentionSpec } from './mapper.js';

/** An answer as the engine applied it (AEP-0002 §5.3). */
export interface HookAnswer {
  option?: string;
  text?: string;
  values?: Record<string, unknown>;
}

/** Hook output meaning "no decision" (Claude Code falls back to its own dialog). */
export const NO_DECISION: Readonly<Record<string, never>> = Object.freeze({});

/** AskUserQuestion: the `answers` map keyed by full question text (docs/integrations.md §1). */
export function askAnswers(spec: AttentionSpec, values: Record<string, unknown>): Record<string, string> {
  const answers: Record<string, string> = {};
  const questions = spec.questions ?? [];
  questions.forEach((q, i) => {
    const v = values[String(i + 1)];
    if (v === undefined) return;
    const labelOf = (x: unknown): string => {
      const s = typeof x === 'string' ? x : String(x);
      const n = Number(s);
      // Choice ids are 1-based index strings; anything else is the free "other" text.
      if (/^[1-9][0-9]*$/.test(s) && n <= q.options.length) return q.options[n - 1]!.label;
      return s;
    };
    answers[q.question] = Array.isArray(v) ? v.map(labelOf).join(', ') : labelOf(v);
  });
  return answers;
}

function preToolUse(decision: 'allow' | 'deny', extra: Record<string, unknown>): Record<string, unknown> {
  return { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: decision, ...extra } };
}

/**
 * The engine's translation hook for a held request: an answer the engine accepted is turned into
 * its hook output (`result`). It refuses (`ok:false`) only what cannot be translated: a permission
 * answer that is neither allow nor deny, or elicitation values that cannot be restored to the MCP
 * types (the engine checks the schema's constraints first, so neither happens for an answer it
 * accepted).
 */
export function translateAnswer(spec: AttentionSpec, applied: HookAnswer): AnswerVerdict {
  if (spec.hook === 'permission' && applied.option !== 'allow' && applied.option !== 'deny') {
    return {
      ok: false,
      issues: [
        { rule: 'control.respond.validate-failed', path: '/data/answer/option', message: 'a permission is answered allow or deny', section: 'AEP-0002 §5.3' },
      ],
    };
  }
  if (spec.hook === 'elicitation' && applied.values !== undefined) {
    const content = formValuesToElicitationContent(spec.schema, applied.values);
    const issues: Issue[] = validateElicitationContent(spec.schema, content).map((i) => ({ ...i, path: `/data/answer/values${i.path}` }));
    if (issues.length) return { ok: false, issues };
  }
  return { ok: true, result: hookOutput(spec, applied) };
}

/**
 * The exact hook output for an applied answer (docs/integrations.md §1). A form's `decline` denies with
 * the person's reason (AskUserQuestion) or is MCP `decline`; `cancel` is no decision
 * (AskUserQuestion: Claude Code asks in its own dialog) or MCP `cancel` (contract C2).
 */
export function hookOutput(spec: AttentionSpec, applied: HookAnswer): Record<string, unknown> {
  switch (spec.hook) {
    case 'ask':
      return askOutput(spec, applied);
    case 'permission':
      return permissionOutput(applied);
    case 'elicitation':
      return elicitationOutput(spec, applied);
  }
}

/**
 * AskUserQuestion output: values -> allow with `updatedInput` (questions echoed, answers keyed by
 * question text); `decline` -> deny with a reason Claude reads; `cancel` -> no decision.
 */
function askOutput(spec: AttentionSpec, applied: HookAnswer): Record<string, unknown> {
  const input = spec.toolInput ?? {};
  if (applied.values !== undefined)
    return preToolUse('allow', { updatedInput: { ...input, questions: input['questions'], answers: askAnswers(spec, applied.values) } });
  if (applied.option === FORM_DECLINE_OPTION) {
    const reason = applied.text?.trim() ? applied.text : 'The user declined to answer these questions.';
    return preToolUse('deny', { permissionDecisionReason: reason });
  }
  return NO_DECISION;
}

/**
 * PermissionRequest output. An allow carries no `updatedInput`: the decision applies to exactly
 * the input the person was shown (contract C1), never to a changed one.
 */
function permissionOutput(applied: HookAnswer): Record<string, unknown> {
  if (applied.option === 'allow') return { hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } } };
  const message = applied.text?.trim() ? applied.text : 'Denied by the user.';
  return { hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'deny', message, interrupt: false } } };
}

/** Elicitation output: values -> `accept` with typed `content`; `decline` / `cancel` -> that MCP action. */
function elicitationOutput(spec: AttentionSpec, applied: HookAnswer): Record<string, unknown> {
  if (applied.values !== undefined) {
    return { hookSpecificOutput: { hookEventName: 'Elicitation', action: 'accept', content: formValuesToElicitationContent(spec.schema, applied.values) } };
  }
  return { hookSpecificOutput: { hookEventName: 'Elicitation', action: applied.option === FORM_CANCEL_OPTION ? 'cancel' : 'decline' } };
}
