// Policy delegates in the inbox (issue 18, docs/delegates.md): finding a live delegate in the
// roster, the "Always allow this" grant command, revoking, and folding a delegate's session
// (`x.aep.policy.*`, `progress.status`) into its active grants. Pure. The names are the
// delegate's wire vocabulary (packages/delegate/src/delegate.ts), repeated here because the web
// package depends on protocol and client only.
import { APPROVAL_DIGEST_ATTR } from '@aep/protocol';
import type { ApprovalCard } from './approve.js';
import type { RosterEntry } from './control.js';
import { ulid } from '@aep/protocol';
import { senderSource } from './form.js';
import type { WireEvent } from './store.js';

export const GRANT_COMMAND = 'x.aep.control.grant';
export const REVOKE_COMMAND = 'x.aep.control.revoke';
const GRANTED = 'x.aep.policy.granted';
const REVOKED = 'x.aep.policy.revoked';
const SNAPSHOT = 'x.aep.policy.snapshot';

/** How long a grant made here holds (the delegate's policy caps it: grants.max_ttl). */
export const GRANT_TTLS = [
  ['1h', '1 hour'],
  ['8h', '8 hours'],
  ['24h', '24 hours'],
  ['7d', '7 days'],
] as const;

/** Sessions of live delegates: claims whose `control.accepts` holds the grant command. */
export function delegateSessions(entries: readonly RosterEntry[]): string[] {
  const out: string[] = [];
  for (const e of entries) if (Array.isArray(e.control?.accepts) && e.control.accepts.includes(GRANT_COMMAND) && !out.includes(e.session)) out.push(e.session);
  return out;
}

type Command = Record<string, unknown> & { id: string; session: string };

function envelope(type: string, session: string, host: string): Command {
  return { aep: '0.1', id: ulid(), type, time: new Date().toISOString(), source: senderSource(host), agent: 'aep-inbox', session };
}

/**
 * The grant for a request the person holds complete (contract C1: `card.view.complete`), scoped
 * to its agent, tool (subject) and digest. The text rides at capture `full` (only readers at full
 * see it); null when the request cannot be granted.
 */
export function buildGrant(request: WireEvent, card: ApprovalCard, delegate: string, host: string, ttl: string): Command | null {
  const digest = request[APPROVAL_DIGEST_ATTR];
  if (!card.view.complete || card.view.text === undefined || typeof digest !== 'string') return null;
  if (typeof request.subject !== 'string' || request.subject === '' || typeof request.agent !== 'string') return null;
  const cmd = envelope(GRANT_COMMAND, delegate, host);
  cmd['capture'] = 'full';
  cmd['data'] = { agent: request.agent, tool: request.subject, digest, text: card.view.text, request: request.id, ttl };
  return cmd;
}

export function buildRevoke(delegate: string, grant: string, host: string): Command {
  const cmd = envelope(REVOKE_COMMAND, delegate, host);
  cmd['data'] = { grant };
  return cmd;
}

/** One grant as the delegate announced it (structural members only). */
export interface GrantView {
  grant: string;
  agent: string;
  tool: string;
  digest: string;
  session?: string;
  expires: string;
  by?: string;
  request?: string;
}

function grantOf(d: Record<string, unknown>): GrantView | null {
  const s = (k: string) => (typeof d[k] === 'string' ? d[k] : undefined);
  const grant = s('grant');
  const agent = s('agent');
  const tool = s('tool');
  const digest = s('digest');
  const expires = s('expires');
  if (!grant || !agent || !tool || !digest || !expires) return null;
  const g: GrantView = { grant, agent, tool, digest, expires };
  const session = s('session');
  const by = s('by');
  const request = s('request');
  if (session) g.session = session;
  if (by) g.by = by;
  if (request) g.request = request;
  return g;
}

/** A delegate session's state: active grants (not yet expired at `now`) and whether it is paused. */
export function foldPolicy(events: readonly WireEvent[], now: number): { grants: GrantView[]; paused: boolean } {
  const grants = new Map<string, GrantView>();
  let paused = false;
  for (const e of events) {
    const d = (e.data ?? {}) as Record<string, unknown>;
    if (e.type === SNAPSHOT) {
      grants.clear();
      if (Array.isArray(d['grants']))
        for (const x of d['grants'] as unknown[]) {
          const g = typeof x === 'object' && x !== null ? grantOf(x as Record<string, unknown>) : null;
          if (g) grants.set(g.grant, g);
        }
      paused = d['paused'] === true;
    } else if (e.type === GRANTED) {
      const g = grantOf(d);
      if (g) grants.set(g.grant, g);
    } else if (e.type === REVOKED) {
      const id = typeof d['grant'] === 'string' ? d['grant'] : e.subject;
      if (typeof id === 'string') grants.delete(id);
    } else if (e.type === 'progress.status' && (d['phase'] === 'paused' || d['phase'] === 'active')) {
      paused = d['phase'] === 'paused';
    }
  }
  return { grants: [...grants.values()].filter((g) => Date.parse(g.expires) > now), paused };
}
