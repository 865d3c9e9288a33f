// Answers -> Claude Code hook output (integrations.md §1 "Answering AskUserQuestion",
// "PermissionRequest", "Elicitation"). Pure: validation (AEP-0006 MUST-reject rule, AEP-0008 text
// rule) decides accept/nack; an accepted answer becomes the exact hook JSON Claude Code reads.
import type { Issue } from '@aep/protocol';
import { FORM_CANCEL_OPTION, FORM_DECLINE_OPTION, FORM_REFUSAL_OPTIONS, formValuesToElicitationContent, mapTextAnswer, validateElicitationContent, validateFormAnswer } from '@aep/protocol';
import type { AttentionSpec } from './mapper.js';

/** An answer as carried by `control.attention.respond` (AEP-0002 §5.3). */
export interface HookAnswer {
  option?: string;
  text?: string;
  values?: Record<string, unknown>;
}

/** Outcome of applying an answer: the hook output and what was applied (for `attention.answered`). */
export type AnswerResult =
  | { ok: true; output: Record<string, unknown>; applied: HookAnswer }
  | { ok: false; issues: Issue[] };

/** Hook output meaning "no decision" (Claude Code falls back to its own dialog). */
export const NO_DECISION: Readonly<Record<string, never>> = Object.freeze({});

/**
 * The answer options every form accepts without listing them in `data` (contract C2,
 * docs/decisions.md "Declining a form"): `decline` = the person refuses, `cancel` = the person
 * dismisses it unanswered.
 */
export const FORM_ANSWER_OPTIONS: readonly { id: string; label: string }[] = FORM_REFUSAL_OPTIONS.map((id) => ({ id, label: id }));

function issue(rule: string, path: string, message: string, section: string): Issue {
  return { rule, path, message, section };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Checks the shape of the `answer` object itself. */
export function checkAnswerShape(answer: unknown): Issue[] {
  if (!isObject(answer)) return [issue('payload.answer', '/data/answer', 'answer must be an object', 'AEP-0004 §5')];
  const out: Issue[] = [];
  if (answer['option'] !== undefined && typeof answer['option'] !== 'string') out.push(issue('payload.answer.option', '/data/answer/option', 'answer.option must be a string', 'AEP-0002 §5.3'));
  if (answer['text'] !== undefined && typeof answer['text'] !== 'string') out.push(issue('payload.answer.text', '/data/answer/text', 'answer.text must be a string', 'AEP-0002 §5.3'));
  if (answer['values'] !== undefined && !isObject(answer['values'])) out.push(issue('payload.answer.values', '/data/answer/values', 'answer.values must be an object', 'AEP-0006 §3'));
  return out;
}

/** AskUserQuestion: the `answers` map keyed by full question text (integrations.md §1). */
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

/** Outcome of checking an answer: what would be applied (recorded in `attention.answered`), or issues. */
export type AnswerCheckResult = { ok: true; applied: HookAnswer } | { ok: false; issues: Issue[] };

/**
 * Validates `answer` against the request (hook-specific rules after the engine's own); an invalid
 * answer returns issues (the caller nacks `invalid` and keeps the request pending, AEP-0006 §4).
 * Pure translation: the hook output is derived from the applied answer by {@link hookOutput}.
 */
export function checkAnswer(spec: AttentionSpec, answerIn: unknown): AnswerCheckResult {
  const shape = checkAnswerShape(answerIn);
  if (shape.length) return { ok: false, issues: shape };
  const answer = answerIn as HookAnswer;
  switch (spec.hook) {
    case 'ask': return checkAsk(spec, answer);
    case 'permission': return checkPermission(spec, answer);
    case 'elicitation': return checkElicitation(spec, answer);
  }
}

/** The exact hook output for an applied (already checked) answer (integrations.md §1). */
export function hookOutput(spec: AttentionSpec, applied: HookAnswer): Record<string, unknown> {
  switch (spec.hook) {
    case 'ask': return askOutput(spec, applied);
    case 'permission': return permissionOutput(applied);
    case 'elicitation': return elicitationOutput(spec, applied);
  }
}

/** {@link checkAnswer} then {@link hookOutput}. */
export function applyAnswer(spec: AttentionSpec, answerIn: unknown): AnswerResult {
  const c = checkAnswer(spec, answerIn);
  return c.ok ? { ok: true, output: hookOutput(spec, c.applied), applied: c.applied } : c;
}

/** A form's refusal options (contract C2), with the person's optional reason kept on `decline`. */
function checkRefusal(answer: HookAnswer): AnswerCheckResult | undefined {
  if (answer.option === FORM_DECLINE_OPTION) {
    const applied: HookAnswer = { option: FORM_DECLINE_OPTION };
    if (answer.text?.trim()) applied.text = answer.text;
    return { ok: true, applied };
  }
  if (answer.option === FORM_CANCEL_OPTION) return { ok: true, applied: { option: FORM_CANCEL_OPTION } };
  if (answer.option !== undefined) {
    return { ok: false, issues: [issue('form.option', '/data/answer/option', 'the option is not offered: answer with values, or "decline" / "cancel"', 'AEP-0006 §4')] };
  }
  return undefined;
}

function checkAsk(spec: AttentionSpec, answer: HookAnswer): AnswerCheckResult {
  if (answer.values !== undefined) {
    const issues = validateFormAnswer(spec.fields ?? [], answer.values);
    if (issues.length) return { ok: false, issues };
    return { ok: true, applied: { values: answer.values } };
  }
  return checkRefusal(answer)
    ?? { ok: false, issues: [issue('form.required', '/data/answer/values', 'a form is answered with answer.values (every required field), or with option "decline" / "cancel"', 'AEP-0006 §4')] };
}

/**
 * AskUserQuestion output (integrations.md §1): values -> allow with `updatedInput` (questions
 * echoed, answers keyed by question text); `decline` -> deny with a reason Claude reads;
 * `cancel` -> no decision (Claude Code asks in its own dialog).
 */
function askOutput(spec: AttentionSpec, applied: HookAnswer): Record<string, unknown> {
  const input = spec.toolInput ?? {};
  if (applied.values !== undefined) return preToolUse('allow', { updatedInput: { ...input, questions: input['questions'], answers: askAnswers(spec, applied.values) } });
  if (applied.option === FORM_DECLINE_OPTION) {
    const reason = applied.text?.trim() ? applied.text : 'The user declined to answer these questions.';
    return preToolUse('deny', { permissionDecisionReason: reason });
  }
  return NO_DECISION;
}

function checkPermission(spec: AttentionSpec, answer: HookAnswer): AnswerCheckResult {
  let option = answer.option;
  let text = answer.text;
  if (option === undefined && text !== undefined) {
    // AEP-0008 §1: map text to an option by id, then by a unique label; unmatched text never
    // grants: it denies, and the text is kept as the stated reason (step 4).
    const m = mapTextAnswer({ kind: 'permission', prompt: '', options: spec.options ?? [] }, text);
    if (m.invalid === true || m.option === undefined) {
      return { ok: false, issues: [issue('text-answer.unmatched', '/data/answer/text', 'the text matches no option and no refusing option exists', 'AEP-0008 §1')] };
    }
    option = m.option;
    text = m.text;
  }
  if (option === 'allow') return { ok: true, applied: { option: 'allow' } };
  if (option === 'deny') {
    const applied: HookAnswer = { option: 'deny' };
    if (text?.trim()) applied.text = text;
    return { ok: true, applied };
  }
  if (option !== undefined) return { ok: false, issues: [issue('answer.option', '/data/answer/option', 'the option is not one of allow, deny', 'AEP-0002 §5.3')] };
  return { ok: false, issues: [issue('answer.option', '/data/answer', 'a permission answer needs option "allow" or "deny" (or text, AEP-0008)', 'AEP-0008 §1')] };
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

function checkElicitation(spec: AttentionSpec, answer: HookAnswer): AnswerCheckResult {
  if (answer.values !== undefined) {
    const issues = validateFormAnswer(spec.fields ?? [], answer.values);
    if (issues.length) return { ok: false, issues };
    const more = validateElicitationContent(spec.schema, formValuesToElicitationContent(spec.schema, answer.values));
    if (more.length) return { ok: false, issues: more };
    return { ok: true, applied: { values: answer.values } };
  }
  return checkRefusal(answer)
    ?? { ok: false, issues: [issue('form.required', '/data/answer/values', 'an elicitation is answered with answer.values, or with option "decline" / "cancel"', 'AEP-0006 §4')] };
}

/** Elicitation output: values -> `accept` with typed `content`; `decline` / `cancel` -> that MCP action. */
function elicitationOutput(spec: AttentionSpec, applied: HookAnswer): Record<string, unknown> {
  if (applied.values !== undefined) {
    return { hookSpecificOutput: { hookEventName: 'Elicitation', action: 'accept', content: formValuesToElicitationContent(spec.schema, applied.values) } };
  }
  return { hookSpecificOutput: { hookEventName: 'Elicitation', action: applied.option === FORM_CANCEL_OPTION ? 'cancel' : 'decline' } };
}
