// Tool hooks (docs/integrations.md §1): PreToolUse -> tool.requested (and, for AskUserQuestion, the
// blocking form of ask.ts), PostToolUse -> tool.completed, PostToolUseFailure -> tool.failed,
// PermissionDenied -> tool.denied. A tool call that reached its end dismisses a question still
// held for it (answered elsewhere), and its terminal event is cause-linked to tool.requested.
import { contentDigest, fullAllowed, gatedText, gatedValue, textAllowed } from '../content.js';
import { askSpec } from './ask.js';
import type { HookContext, HookMapping, MapperState } from './state.js';
import { isObject } from './state.js';
import type { AttentionSpec, EventDraft } from './types.js';

function closeTool({ hook, s, dismiss, toolName, toolUseId }: HookContext): { open: { started: number; ref: string } | undefined; extra: Partial<EventDraft> } {
  if (toolUseId) dismiss.push({ session: s.id, toolUseId });
  dismiss.push({ session: s.id, toolName, inputDigest: contentDigest(hook.tool_input ?? {}) });
  const open = toolUseId ? s.tools.get(toolUseId) : undefined;
  if (toolUseId) s.tools.delete(toolUseId);
  const extra: Partial<EventDraft> = { subject: toolName };
  if (open) extra.causeRef = open.ref;
  return { open, extra };
}

function preToolUse(m: MapperState, c: HookContext): AttentionSpec | undefined {
  const { hook, s, out, now, tool, toolName, toolUseId } = c;
  const ref = m.newRef('tool');
  if (toolUseId) s.tools.set(toolUseId, { started: now, ref });
  out.push(m.draft('tool.requested', s, m.argsData(tool, hook.tool_input, 'tool.requested'), { ref, subject: toolName }));
  return toolName === 'AskUserQuestion' ? askSpec(m, s, hook, ref) : undefined;
}

function postToolUse(m: MapperState, c: HookContext): undefined {
  const { open, extra } = closeTool(c);
  const type = 'tool.completed';
  const cap = m.cap(type);
  const data: Record<string, unknown> = { tool: c.tool, status: 'success' };
  if (open) data['duration_ms'] = Math.max(0, c.now - open.started);
  const resp = c.hook['tool_response'];
  if (resp !== undefined) {
    data['result_digest'] = contentDigest(resp);
    if (fullAllowed(cap) && (isObject(resp) || typeof resp === 'string')) data['result'] = resp;
    else if (textAllowed(cap) && (isObject(resp) || typeof resp === 'string')) data['result_redacted'] = gatedValue(m.config, cap, resp);
  }
  c.out.push(m.draft(type, c.s, data, extra));
  return undefined;
}

function postToolUseFailure(m: MapperState, c: HookContext): undefined {
  const { open, extra } = closeTool(c);
  const type = 'tool.failed';
  const err: Record<string, unknown> = { type: c.hook['is_interrupt'] === true ? 'interrupted' : 'tool_error' };
  if (typeof c.hook['error'] === 'string') {
    const msg = gatedText(m.config, m.cap(type), c.hook['error']);
    if (msg !== undefined) err['message'] = msg;
  }
  const data: Record<string, unknown> = { tool: c.tool, error: err };
  if (open) data['duration_ms'] = Math.max(0, c.now - open.started);
  c.out.push(m.draft(type, c.s, data, extra));
  return undefined;
}

function permissionDenied(m: MapperState, c: HookContext): undefined {
  // No human was asked: Claude Code's auto-mode classifier / permission rules refused it.
  const { extra } = closeTool(c);
  c.out.push(m.draft('tool.denied', c.s, { tool: c.tool, by: 'policy' }, extra));
  return undefined;
}

/** The tool family. */
export const TOOL_HOOKS: Readonly<Record<string, HookMapping>> = {
  PreToolUse: { scope: 'own', closes: 'activity', map: preToolUse },
  PostToolUse: { scope: 'own', closes: 'all', map: postToolUse },
  PostToolUseFailure: { scope: 'own', closes: 'all', map: postToolUseFailure },
  PermissionDenied: { scope: 'own', closes: 'activity', map: permissionDenied },
};
