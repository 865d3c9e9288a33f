// Sending commands from the browser (AEP-0004, sender algorithm AEP-0004 §4) through
// `@aep/client`'s `CommandSender` (issue 13 item 3: one wire layer): one authenticated WebSocket
// per tab (the token as `?access_token=`, the sanctioned carrier for clients that cannot set
// headers, AEP-0003 §8), hello as a consumer, a standing `{session}` subscription opened before
// the first command to a session (`watch: "session"`: the inbox folds the outcomes too), the
// same bytes resent on silence, and the roster (AEP-0003 §4.1, contract C4). This module maps
// the sender's results onto what the inbox shows and keeps the roster helpers the views use.
import { CommandSender } from '@aep/client';
import type { CommandResult, WireEvent } from '@aep/client';
import { ulid } from '@aep/protocol';
import type { OfflineRequest, RosterEntry } from '@aep/protocol';

export type { RosterEntry } from '@aep/protocol';

/** How a command ended, as the UI shows it. */
export type SendOutcome =
  | { status: 'accepted'; ack: Record<string, unknown> }
  | { status: 'rejected'; ack: Record<string, unknown>; reason: string; detail?: string }
  | { status: 'refused'; code: string; detail?: string }
  | { status: 'timeout' }
  | { status: 'error'; detail: string };

/**
 * A pending request whose asker has no live connection (contract C4, the roster reply's
 * top-level `offline` member): not answerable until that agent comes back. The protocol's frame
 * check drops a roster reply whose `offline` items are malformed, so every entry is whole.
 */
export type OfflineEntry = OfflineRequest;

/** One roster reply: live claims, and the pending requests whose asker is offline (C4; empty from a relay without C4). */
export interface RosterSnapshot {
  entries: RosterEntry[];
  offline: OfflineEntry[];
}

/**
 * The command types every live claimant of `session` declares in `control.accepts` (a UI hint:
 * the target's declaration stays authoritative at command time, AEP-0004 §4.2).
 */
export function acceptsOf(entries: readonly RosterEntry[], session: string): Set<string> {
  const lists: string[][] = [];
  for (const c of entries) {
    if (c.session !== session) continue;
    const declared = c.control?.accepts;
    lists.push(Array.isArray(declared) ? declared.filter((x): x is string => typeof x === 'string') : []);
  }
  const [first, ...rest] = lists;
  return new Set((first ?? []).filter((t) => rest.every((l) => l.includes(t))));
}

/** Whether a session can take an answer now, from a roster snapshot (AEP-0004 §4.2, §4.5). */
export function routeState(entries: readonly RosterEntry[], session: string): 'live' | 'no-route' | 'ambiguous' | 'unsupported' {
  const claims = entries.filter((e) => e.session === session);
  if (claims.length === 0) return 'no-route';
  if (claims.length > 1) return 'ambiguous';
  const accepts = claims[0]?.control?.accepts;
  return Array.isArray(accepts) && accepts.includes('control.attention.respond') ? 'live' : 'unsupported';
}

/** The sender's result as the inbox shows it (`no-ack` after the bounded retries is a local timeout). */
export function outcomeOf(r: CommandResult): SendOutcome {
  switch (r.status) {
    case 'accepted':
      return { status: 'accepted', ack: (r.ack ?? {}) as Record<string, unknown> };
    case 'rejected': {
      const out: SendOutcome = { status: 'rejected', ack: (r.ack ?? {}) as Record<string, unknown>, reason: r.reason ?? 'unknown' };
      if (r.detail !== undefined) out.detail = r.detail;
      return out;
    }
    case 'refused': {
      const out: SendOutcome = { status: 'refused', code: r.reason ?? 'error' };
      if (r.detail !== undefined) out.detail = r.detail;
      return out;
    }
    default:
      return { status: 'timeout' };
  }
}

/** Options for {@link ControlChannel}. */
export interface ControlOptions {
  base: string;
  token: string;
  /** Every Event frame received (the acks and outcomes): fed to the store too. */
  onEvent?: (e: WireEvent) => void;
  ackWindowMs?: number;
  /** Extra attempts with the identical bytes after a silent window; default 2. */
  retries?: number;
  /** A WebSocket constructor other than the page's (tests). */
  WebSocket?: ConstructorParameters<typeof CommandSender>[0]['WebSocket'];
}

/** The inbox's command channel: a `CommandSender` whose failures are outcomes, never throws. */
export class ControlChannel {
  private readonly sender: CommandSender;

  constructor(opts: ControlOptions) {
    // A per-tab instance id in hello (AEP-0003 §3.5.1 identity), so a relay log tells tabs apart.
    const instance = `browser/${ulid().slice(-8).toLowerCase()}`;
    this.sender = new CommandSender({
      url: opts.base,
      agent: 'aep-inbox',
      instance,
      watch: 'session',
      ...(opts.token ? { token: opts.token } : {}),
      ...(opts.onEvent ? { onEvent: opts.onEvent } : {}),
      ...(opts.WebSocket ? { WebSocket: opts.WebSocket } : {}),
      ackWindowMs: opts.ackWindowMs ?? 10_000,
      retries: opts.retries ?? 2,
    });
  }

  /** Send one command event and settle it: ack, nack, relay refusal, local timeout or error. */
  async send(command: Record<string, unknown> & { id: string; session: string }): Promise<SendOutcome> {
    try {
      return outcomeOf(await this.sender.send(command as unknown as WireEvent));
    } catch (err) {
      return { status: 'error', detail: err instanceof Error ? err.message : String(err) };
    }
  }

  /**
   * The relay's roster snapshot (AEP-0003 §4.1): live (connection, session) claims with their
   * declared `control`, and (contract C4) the pending requests whose asker is offline. Null when
   * unavailable (not advertised, no reply in 5 s, no connection).
   */
  async roster(): Promise<RosterSnapshot | null> {
    const snap = await this.sender.roster();
    if (!snap) return null;
    return { entries: snap.entries, offline: snap.offline ?? [] };
  }

  /** Settle a pending command from an ack seen on another transport (the SSE stream). */
  observe(e: WireEvent): void {
    this.sender.observe(e);
  }

  /** Close the socket (pending commands settle as timeouts). */
  close(): void {
    void this.sender.close();
  }
}
