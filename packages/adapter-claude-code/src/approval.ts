// "A person approves only what they can see" (contract C1: packages/protocol/src/approval.ts,
// docs/decisions.md "Approvals"). The adapter side: the approval text of a PermissionRequest
// (the complete tool input the decision applies to, never cut or folded) and the emitter check
// that refuses a permissive answer whose `approvalproof` does not bind this request to that text.
// Pure: no I/O.
import type { Issue, RedactOptions } from '@aep/protocol';
import { APPROVAL_PROOF_ATTR, checkApprovalProof, mapTextAnswer, optionEffect, redactValue } from '@aep/protocol';

/** Bash inputs whose only other members do not change what runs (integrations.md §1). */
const BASH_PLAIN_KEYS: ReadonlySet<string> = new Set(['command', 'description', 'timeout', 'run_in_background']);

/**
 * The approval text of a tool call: for Bash the whole `command` when the input carries nothing
 * else that could change what runs (`description`, `timeout`, `run_in_background`); otherwise,
 * and for every other tool, the whole tool input as `JSON.stringify(input, null, 2)`. Verbatim:
 * newlines and every character kept (surfaces make invisible characters visible, `visibleText`).
 */
export function approvalText(toolName: string, input: Record<string, unknown>): string {
  const command = plainBashCommand(toolName, input);
  return command ?? JSON.stringify(input, null, 2);
}

function plainBashCommand(toolName: string, input: Record<string, unknown>): string | undefined {
  const command = input['command'];
  return toolName === 'Bash' && typeof command === 'string' && Object.keys(input).every((k) => BASH_PLAIN_KEYS.has(k)) ? command : undefined;
}

/**
 * The approval text to put through the §9.4 pipeline at `redacted`. A JSON approval text is
 * redacted value by value first (`redactValue` on the input, then serialized the same way): in
 * serialized JSON a secret right after an escape (`"\nsk-…"`) is glued to the escape's letter
 * and a text pattern anchored at a word boundary would miss it. The caller still runs the text
 * pipeline on the result. Any change makes the copy incomplete (its digest no longer matches), so
 * no surface can allow from it (contract C1).
 */
export function approvalTextForRedaction(toolName: string, input: Record<string, unknown>, opts: RedactOptions): string {
  return plainBashCommand(toolName, input) ?? JSON.stringify(redactValue(input, opts), null, 2);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * True when `answer` lets the action run: an option whose effect (from its id) is `allow`, or
 * text that maps to one (AEP-0008 §1). Unmatched text never grants (it denies).
 */
export function isPermissiveAnswer(answer: unknown, options: readonly { id: string; label: string }[]): boolean {
  if (!isObject(answer)) return false;
  const option = answer['option'];
  if (typeof option === 'string') return optionEffect(option) === 'allow';
  const text = answer['text'];
  if (typeof text !== 'string') return false;
  const m = mapTextAnswer({ kind: 'permission', options }, text);
  return m.option !== undefined && optionEffect(m.option) === 'allow';
}

/** Rule id of the refusal (the engine's `control.respond.*` family, docs/decisions.md). */
export const APPROVAL_PROOF_RULE = 'control.respond.approval-proof';

/** What the person is told when an allow is refused for want of a proof (ack `detail`). */
export const APPROVAL_PROOF_DETAIL = 'this allow does not prove the complete input was shown: show the complete input first, or answer on the agent\'s machine (deny always works)';

/**
 * The emitter check of contract C1 for one `control.attention.respond`: issues when the answer is
 * permissive and the command's `approvalproof` extension attribute is missing or does not match
 * `approvalProof(requestId, text)`; undefined when the command may go on to the engine.
 */
export function approvalIssues(requestId: string, text: string, options: readonly { id: string; label: string }[], command: Record<string, unknown>): Issue[] | undefined {
  const data = command['data'];
  const answer = isObject(data) ? data['answer'] : undefined;
  if (!isPermissiveAnswer(answer, options)) return undefined;
  if (checkApprovalProof(requestId, text, command[APPROVAL_PROOF_ATTR])) return undefined;
  return [{
    rule: APPROVAL_PROOF_RULE,
    path: `/${APPROVAL_PROOF_ATTR}`,
    message: `a permissive answer needs the ${APPROVAL_PROOF_ATTR} of the complete input (missing or for another text or request)`,
    section: 'AEP-0004 §5.3 step 3',
  }];
}
