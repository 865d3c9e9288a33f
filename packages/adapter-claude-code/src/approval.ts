// "A person approves only what they can see" (contract C1: packages/protocol/src/approval.ts,
// docs/decisions.md "Approvals"). The adapter side: the approval text of a PermissionRequest,
// the complete tool input the decision applies to, never cut or folded. The attention engine
// puts it in the prompt at the request's capture, sets `approvaldigest` and refuses an allow
// without a valid `approvalproof` (requestAttention `approvalText`). Pure: no I/O.
import type { RedactOptions } from '@aep/protocol';
import { redactValue } from '@aep/protocol';

/** Bash inputs whose only other members do not change what runs (docs/integrations.md §1). */
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
 * The approval text with the input redacted value by value (`redactValue`, then serialized the
 * same way): in serialized JSON a secret right after an escape (`"\\nsk-…"`) is glued to the
 * escape's letter, and a text pattern anchored at a word boundary misses it; value by value it
 * does not. permission.ts compares the two passes to decide whether the request may go out at
 * `redacted` (docs/decisions.md "Claude Code adapter (issues 11, 13, 14)").
 */
export function approvalTextForRedaction(toolName: string, input: Record<string, unknown>, opts: RedactOptions): string {
  return plainBashCommand(toolName, input) ?? JSON.stringify(redactValue(input, opts), null, 2);
}
