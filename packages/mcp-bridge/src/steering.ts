// Steering commands (AEP-0004 §5, contract C8) as the MCP bridge can honour them (README
// "Steering"). MCP lets the bridge cancel what is in flight (`notifications/cancelled`, and an
// elicitation answered `cancel`); it has no notion of pausing a server. So `control.cancel` is
// declared in `control.accepts` and honoured for the bridge's one session; `control.pause` and
// `control.resume` are not declared, so they are nacked `unsupported` (by the relay, which knows
// the declaration, or by the connection, AEP-0004 §4.2).
import type { Issue } from '@aep/protocol';
import type { WireEvent } from '@aep/client';

/** The command types the bridge honours (its `hello.capabilities.control.accepts`). */
export const BRIDGE_ACCEPTS: readonly string[] = ['control.attention.respond', 'control.cancel'];

/** Rule ids of the bridge's own `control.cancel` refusals (nack `invalid`). */
export const CANCEL_RULES = {
  scope: 'control.cancel.scope',
  run: 'control.cancel.unknown-run',
  session: 'control.cancel.wrong-session',
} as const;

const SECTION = 'AEP-0004 §5 (control.cancel)';

/** What to do with a `control.cancel`: refuse it with issues, or cancel the session's work. */
export type CancelVerdict = { ok: false; issues: Issue[] } | { ok: true; reason?: string };

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Check a `control.cancel` addressed to the bridge's `session`. Scope `session` is honoured;
 * scope `run` names a run this session never had (the bridge emits no runs: its unit of work is
 * the session, one per wrapped server), so it is `invalid` like any unknown target (AEP-0004 §4
 * step 3). Issue messages never repeat what the sender wrote (issue 12).
 */
export function checkCancel(cmd: WireEvent, session: string): CancelVerdict {
  const data = isObject(cmd.data) ? cmd.data : {};
  const scope = data['scope'];
  const issue = (rule: string, path: string, message: string): CancelVerdict => ({ ok: false, issues: [{ rule, path, message, section: SECTION }] });
  if (cmd.session !== session) return issue(CANCEL_RULES.session, '/session', "the command names another session than this MCP bridge's");
  if (scope !== 'session' && scope !== 'run') return issue(CANCEL_RULES.scope, '/data/scope', 'scope must be "run" or "session"');
  if (scope === 'run') return issue(CANCEL_RULES.run, '/run', 'this MCP bridge session has no runs; cancel with scope "session"');
  const reason = data['reason'];
  return typeof reason === 'string' && reason.trim() !== '' ? { ok: true, reason } : { ok: true };
}
