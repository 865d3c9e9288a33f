// What surfaces (the CLI, the inbox's policy view) need of a delegate: finding its session in the
// roster, folding its `x.aep.policy.*` events into the active grants, and the data of a grant
// command made from a request a person saw complete ("Always allow this").
import { APPROVAL_DIGEST_ATTR, approvalView } from '@aep/protocol';
import type { RosterEntry } from '@aep/protocol';
import { GRANTED_EVENT, GRANT_COMMAND, REVOKED_EVENT, SNAPSHOT_EVENT } from './delegate.js';
import type { GrantSummary } from './grants.js';

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Live delegates: roster claims whose declared `control.accepts` holds the grant command. */
export function delegatesInRoster(entries: readonly RosterEntry[]): RosterEntry[] {
  return entries.filter((e) => Array.isArray(e.control?.accepts) && e.control.accepts.includes(GRANT_COMMAND));
}

/** Folds a delegate session's events: snapshot, granted, revoked, pause state. */
export class PolicyFold {
  readonly grants = new Map<string, GrantSummary>();
  paused = false;

  push(e: { type: string; subject?: unknown; data?: unknown }): boolean {
    const d = isObject(e.data) ? e.data : undefined;
    if (e.type === SNAPSHOT_EVENT && d) {
      this.grants.clear();
      if (Array.isArray(d['grants']))
        for (const g of d['grants'] as unknown[]) if (isObject(g) && typeof g['grant'] === 'string') this.grants.set(g['grant'], g as unknown as GrantSummary);
      this.paused = d['paused'] === true;
      return true;
    }
    if (e.type === GRANTED_EVENT && d && typeof d['grant'] === 'string') {
      this.grants.set(d['grant'], d as unknown as GrantSummary);
      return true;
    }
    if (e.type === REVOKED_EVENT) {
      const id = typeof d?.['grant'] === 'string' ? d['grant'] : typeof e.subject === 'string' ? e.subject : undefined;
      return id !== undefined && this.grants.delete(id);
    }
    if (e.type === 'progress.status' && d && (d['phase'] === 'paused' || d['phase'] === 'active')) {
      this.paused = d['phase'] === 'paused';
      return true;
    }
    return false;
  }

  /** Active grants at `now` (an expiry passed is not active even before its revoked event). */
  active(now: number): GrantSummary[] {
    return [...this.grants.values()].filter((g) => Date.parse(g.expires) > now);
  }
}

/**
 * The data of `x.aep.control.grant` for a request as the person received it: only when the
 * person holds its complete approval text (`approvalView(event).complete`, contract C1), never
 * otherwise. Scoped to the request's agent, tool (subject) and digest; `session` narrows it.
 */
export function grantDataFor(
  event: unknown,
  opts: { ttl?: string | number; sessionOnly?: boolean } = {},
): { ok: true; data: Record<string, unknown> } | { ok: false; reason: string } {
  if (!isObject(event) || event['type'] !== 'attention.requested') return { ok: false, reason: 'not an attention request' };
  const view = approvalView(event);
  const digest = event[APPROVAL_DIGEST_ATTR];
  if (typeof digest !== 'string' || !view.complete || view.text === undefined) {
    return { ok: false, reason: 'the complete approval text of this request is not in hand (a person grants only what they saw complete)' };
  }
  const agent = event['agent'];
  const tool = event['subject'];
  if (typeof agent !== 'string' || typeof tool !== 'string' || tool === '')
    return { ok: false, reason: 'the request names no tool (subject): a grant is scoped to one' };
  return {
    ok: true,
    data: {
      agent,
      tool,
      digest,
      text: view.text,
      request: event['id'],
      ...(opts.sessionOnly && typeof event['session'] === 'string' ? { session: event['session'] } : {}),
      ...(opts.ttl !== undefined ? { ttl: opts.ttl } : {}),
    },
  };
}
