// PermissionRequest -> one blocking `kind:"permission"` request that shows exactly what will run
// (contract C1; approval.ts; docs/decisions.md "Approvals").
import type { AttentionRequestInput } from '@aep/protocol';
import { APPROVAL_DIGEST_ATTR, approvalDigest } from '@aep/protocol';
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
  // Questions are answered through PreToolUse (integrations.md §1), never here.
  if (toolName === 'AskUserQuestion') return undefined;
  const toolInput = hook.tool_input ?? {};
  const text = approvalText(toolName, toolInput);
  const options = [{ id: 'allow', label: 'Allow' }, { id: 'deny', label: 'Deny' }];
  const shown = m.cap('attention.requested') === 'redacted' ? approvalTextForRedaction(toolName, toolInput, m.redaction()) : text;
  const input: AttentionRequestInput = { kind: 'permission', prompt: shown, options, respond_via: ['control'], context: { tool_input: toolInput } };
  const request = m.draft('attention.requested', s, m.requestData(input, toolName), {
    subject: toolName, severity: 'notice', ref: m.newRef('attention'),
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
