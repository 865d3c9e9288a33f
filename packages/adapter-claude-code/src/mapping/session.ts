// Session and run lifecycle hooks (docs/integrations.md §1): SessionEnd, UserPromptSubmit, Stop,
// StopFailure, PreCompact / PostCompact, SubagentStart / SubagentStop. (SessionStart opens or
// reopens a session before any session is resolved: mapper.ts handles it.)
import { gatedText } from '../content.js';
import type { EndReason, HookContext, HookMapping, MapperState } from './state.js';
import { safeId, str } from './state.js';

/**
 * A subagent's type at `metadata` only when it is a structural token (an agent definition's
 * name); anything else could be free text and is left out (capture is the boundary).
 */
function agentType(v: unknown): string | undefined {
  return typeof v === 'string' && /^[A-Za-z0-9_.:-]{1,64}$/.test(v) ? v : undefined;
}

/** Maps `SessionEnd.reason` to `session.ended.reason` (closed enum, AEP-0002 §5.3). */
function endReason(reason: unknown): EndReason {
  switch (reason) {
    case 'error':
      return 'error';
    case 'timeout':
      return 'timeout';
    case 'killed':
      return 'killed';
    default:
      return 'normal';
  }
}

function sessionEnd(m: MapperState, { hook, s, out, dismiss, now }: HookContext): undefined {
  dismiss.push({ session: s.id, all: true });
  for (const [agentId] of s.children) {
    const child = m.sessions.get(m.childKey(s, agentId));
    if (child) {
      dismiss.push({ session: child.id, all: true });
      m.endSession(child, out, now, 'normal');
    }
  }
  m.endSession(s, out, now, endReason(hook['reason']));
  return undefined;
}

function userPromptSubmit(m: MapperState, { hook, s, out, now }: HookContext): undefined {
  // A turn interrupted by the user never gets Stop: the next prompt ends it as cancelled.
  if (s.run) m.endRun(s, out, now, 'run.cancelled', { by: 'user' });
  s.runs += 1;
  const runId = safeId(`t${s.runs}-${now.toString(36)}`);
  const ref = m.newRef('run');
  s.run = { id: runId, started: now, ref };
  const data: Record<string, unknown> = { trigger: 'user' };
  const prompt = typeof hook['prompt'] === 'string' ? gatedText(m.config, m.cap('run.started'), hook['prompt']) : undefined;
  if (prompt !== undefined) data['prompt'] = prompt;
  out.push(m.draft('run.started', s, data, { run: runId, ref }));
  return undefined;
}

function stop(m: MapperState, { hook, s, out, now }: HookContext): undefined {
  const summary = typeof hook['last_assistant_message'] === 'string' ? gatedText(m.config, m.cap('run.finished'), hook['last_assistant_message']) : undefined;
  m.endRun(s, out, now, 'run.finished', summary !== undefined ? { summary } : {});
  return undefined;
}

function stopFailure(m: MapperState, { hook, s, out, now }: HookContext): undefined {
  const err: Record<string, unknown> = {};
  const t = str(hook['error_type']) ?? str(hook['error']);
  if (t && /^[A-Za-z0-9_.-]{1,64}$/.test(t)) err['type'] = t;
  m.endRun(s, out, now, 'run.failed', { reason: 'error', error: err });
  return undefined;
}

function subagentStart(m: MapperState, { hook, s: parent, out, now }: HookContext): undefined {
  // Claude Code sends SubagentStart with the child's agent_id; the parent is session_id.
  const agentId = str(hook.agent_id);
  if (!agentId) return undefined;
  const childId = m.childKey(parent, agentId);
  const child: Record<string, unknown> = { session: childId, agent: m.config.agent };
  const data: Record<string, unknown> = { child };
  const type = agentType(hook.agent_type);
  if (type) data['agent_type'] = type;
  const ref = m.newRef('delegation');
  out.push(m.draft('delegation.subagent.started', parent, data, { ref }));
  const open = m.sessions.get(childId);
  if (open === undefined || open.ended) {
    const p: { session: string; run?: string } = { session: parent.id };
    if (parent.run) p.run = parent.run.id;
    const cs = m.ensure(childId, now, out, hook, p, true);
    child['session'] = cs.id;
    cs.runs += 1;
    const runRef = m.newRef('run');
    cs.run = { id: safeId(`sub-${cs.runs}-${now.toString(36)}`), started: now, ref: runRef };
    out.push(m.draft('run.started', cs, { trigger: 'agent' }, { run: cs.run.id, ref: runRef, causeRef: ref }));
  }
  parent.children.set(agentId, { started: now, ...(hook.agent_type ? { agentType: hook.agent_type } : {}) });
  return undefined;
}

function subagentStop(m: MapperState, { hook, s: parent, out, dismiss, now }: HookContext): undefined {
  const agentId = str(hook.agent_id);
  const data: Record<string, unknown> = { status: 'completed' };
  const type = agentType(hook.agent_type);
  if (type) data['agent_type'] = type;
  if (agentId) {
    const childId = m.childKey(parent, agentId);
    data['child'] = { session: m.sessions.get(childId)?.id ?? childId, agent: m.config.agent };
    const info = parent.children.get(agentId);
    if (info) data['duration_ms'] = Math.max(0, now - info.started);
    parent.children.delete(agentId);
    const cs = m.sessions.get(childId);
    if (cs && !cs.ended) {
      dismiss.push({ session: cs.id, all: true });
      m.dismissOob(cs, out, now);
      m.endRun(cs, out, now, 'run.finished');
      m.endSession(cs, out, now, 'normal');
    }
  }
  out.push(m.draft('delegation.subagent.stopped', parent, data));
  return undefined;
}

function preCompact(m: MapperState, { hook, s, out }: HookContext): undefined {
  const ref = m.newRef('compact');
  s.compactRef = ref;
  const trigger = str(hook['trigger']);
  if (trigger) s.compactTrigger = trigger;
  out.push(m.draft('progress.status', s, { phase: 'compacting' }, { ref }));
  return undefined;
}

function postCompact(m: MapperState, { hook, s, out }: HookContext): undefined {
  m.compacted(s, out, str(hook['trigger']) ?? s.compactTrigger);
  return undefined;
}

/** The session/run family. */
export const SESSION_HOOKS: Readonly<Record<string, HookMapping>> = {
  SessionEnd: { scope: 'own', closes: 'none', map: sessionEnd },
  UserPromptSubmit: { scope: 'own', closes: 'all', map: userPromptSubmit },
  Stop: { scope: 'own', closes: 'all', map: stop },
  StopFailure: { scope: 'own', closes: 'activity', map: stopFailure },
  SubagentStart: { scope: 'parent', closes: 'activity', map: subagentStart },
  SubagentStop: { scope: 'parent', closes: 'activity', map: subagentStop },
  PreCompact: { scope: 'own', closes: 'activity', map: preCompact },
  PostCompact: { scope: 'own', closes: 'activity', map: postCompact },
};
