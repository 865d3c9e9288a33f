// PermissionRequest -> one blocking `kind:"permission"` request that shows exactly what will run
// (contract C1; approval.ts; docs/decisions.md "Approvals").
import type { AttentionRequestInput } from '@aep/protocol';
import { APPROVAL_DIGEST_ATTR, approvalDigest, redact } from '@aep/protocol';
import { approvalText, approvalTextForRedaction } from '../approval.js';
import { contentDigest } from '../content.js';
import type { HookContext, HookMapping, MapperState } from './state.js';
import type { AttentionSpec } from './types.js';

/**
 * The prompt is the approval text (the complete tool input, verbatim) at the request's capture:
 * verbatim at `full`, the §9.4 pipeline at `redacted`, synthesized at `metadata`; the
 * `approvaldigest` of the original text rides at every level and `context.tool_input` at `full`.
 * Options carry the structural ids `allow` / `deny` (labels are placeholders at `metadata`).
 */
function permissionRequest(m: MapperState, { hook, s, toolName }: HookContext): AttentionSpec | undefined {
  // Questions are answered through PreToolUse (docs/integrations.md §1), never here.
  if (toolName === 'AskUserQuestion') return undefined;
  const toolInput = hook.tool_input ?? {};
  const text = approvalText(toolName, toolInput);
  const options = [
    { id: 'allow', label: 'Allow' },
    { id: 'deny', label: 'Deny' },
  ];
  const input: AttentionRequestInput = { kind: 'permission', prompt: text, options, respond_via: ['control'], context: { tool_input: toolInput } };
  let capture = m.cap('attention.requested');
  // At `redacted` the prompt is the text through the §9.4 pipeline. In serialized JSON a secret
  // right after an escape (`"\nsk-…"`) is glued to the escape's letter and the text patterns,
  // anchored at a word boundary, miss it; redacting value by value does not. When the two
  // disagree the input holds a secret the text pass may have kept, and its copy could not be
  // approved remotely anyway (it is incomplete): the request goes out at `metadata` instead.
  const redaction = m.redaction();
  if (capture === 'redacted' && redact(text, redaction) !== redact(approvalTextForRedaction(toolName, toolInput, redaction), redaction)) capture = 'metadata';
  const request = m.draft('attention.requested', s, m.requestData(input, toolName, undefined, undefined, capture), {
    subject: toolName,
    severity: 'notice',
    ref: m.newRef('attention'),
    capture,
    extensions: { [APPROVAL_DIGEST_ATTR]: approvalDigest(text) },
  });
  const spec: AttentionSpec = { hook: 'permission', request, toolName, toolInput, inputDigest: contentDigest(toolInput), options, approvalText: text };
  if (hook.tool_use_id) spec.toolUseId = hook.tool_use_id;
  return spec;
}

/** The permission family. */
export const PERMISSION_HOOKS: Readonly<Record<string, HookMapping>> = {
  PermissionRequest: { scope: 'own', closes: 'activity', map: permissionRequest },
};
