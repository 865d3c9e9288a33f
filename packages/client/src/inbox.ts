// Folding the attention lifecycle into "what is pending" (AEP-0002 §7), for inboxes.
import { subscribe } from './subscribe.js';
import type { WireEvent } from './types.js';
import { isObject } from './util.js';

/** One pending `attention.requested`, with its provenance (agent, session, source, time, capture). */
export interface PendingAttention {
  /** The request id (the lifecycle's `subject`). */
  id: string;
  session: string;
  agent: string;
  source: string;
  /** Request `time` (RFC 3339, display only). */
  time: string;
  capture: string;
  severity: string;
  /** The request `data` as received (down-levelled to the reader's ceiling). */
  data: Record<string, unknown>;
  /** True once an `attention.answered` was recorded but no terminal event yet (AEP-0002 §7.4). */
  answered: boolean;
  /** The first `attention.answered` of the request (the recorded answer, `via`, `by`, `cause`), once seen. */
  answeredEvent?: WireEvent;
  /** The full request event. */
  event: WireEvent;
}

/**
 * Incremental fold of attention events: `attention.requested` opens, `attention.resolved` or
 * `attention.timeout` (matched by `subject` within the same session) closes. Memory is bounded
 * by the number of open requests plus a bounded set of closed ids (a terminal seen before its
 * request, e.g. after a partial replay, still closes it).
 */
export class AttentionFold {
  private readonly open = new Map<string, PendingAttention>();
  private readonly closed = new Set<string>();
  private readonly closedLimit: number;

  constructor(closedLimit = 100_000) {
    this.closedLimit = closedLimit;
  }

  /** Apply one event; returns `'opened' | 'answered' | 'closed'` when it changed the pending set. */
  push(e: WireEvent): 'opened' | 'answered' | 'closed' | undefined {
    if (typeof e.session !== 'string') return undefined;
    if (e.type === 'attention.requested') {
      const key = `${e.session}\n${e.id}`;
      if (this.closed.has(key) || this.open.has(key)) return undefined;
      this.open.set(key, {
        id: e.id,
        session: e.session,
        agent: e.agent,
        source: e.source,
        time: e.time,
        capture: e.capture ?? 'metadata',
        severity: e.severity ?? 'info',
        data: isObject(e.data) ? e.data : {},
        answered: false,
        event: e,
      });
      return 'opened';
    }
    if (typeof e.subject !== 'string') return undefined;
    const key = `${e.session}\n${e.subject}`;
    if (e.type === 'attention.answered') {
      const p = this.open.get(key);
      if (p && !p.answered) {
        p.answered = true;
        p.answeredEvent = e;
        return 'answered';
      }
      return undefined;
    }
    if (e.type === 'attention.resolved' || e.type === 'attention.timeout') {
      this.closed.add(key);
      if (this.closed.size > this.closedLimit) {
        const first = this.closed.values().next();
        if (!first.done) this.closed.delete(first.value);
      }
      return this.open.delete(key) ? 'closed' : undefined;
    }
    return undefined;
  }

  /** Pending requests, oldest first (by request `time`, then id). */
  pending(): PendingAttention[] {
    return [...this.open.values()].sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** A pending request by id (any session). */
  get(id: string): PendingAttention | undefined {
    for (const p of this.open.values()) if (p.id === id) return p;
    return undefined;
  }
}

/** Options of {@link listPending}. */
export interface ListPendingOptions {
  url: string;
  token?: string;
  /** Reader's capture ceiling (AEP-0003 §6.4); absent = as received. */
  ceiling?: 'none' | 'metadata' | 'redacted' | 'full';
  /** Extra attr-match predicates (e.g. `{agent: "x"}`); `type` is set to `attention.*`. */
  filter?: Record<string, unknown>;
  /** Bound on the whole replay; default 15 000 ms. */
  timeoutMs?: number;
}

/**
 * Pending attention requests held by the relay: one replay-only SSE read (`from=all`, `live=0`,
 * `filter={"type":"attention.*"}`) folded with {@link AttentionFold}. Bounded by what the relay
 * holds (AEP-0003 §5: never a completeness claim).
 */
export async function listPending(options: ListPendingOptions): Promise<PendingAttention[]> {
  const fold = new AttentionFold();
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), options.timeoutMs ?? 15_000);
  const sub = subscribe(
    {
      url: options.url,
      ...(options.token ? { token: options.token } : {}),
      filter: { ...(options.filter ?? {}), type: 'attention.*' },
      ...(options.ceiling ? { ceiling: options.ceiling } : {}),
      from: 'all',
      live: false,
      transport: 'sse',
      signal: ac.signal,
      reconnect: { maxAttempts: 0 },
    },
    (e) => {
      fold.push(e);
    },
  );
  try {
    await sub.done;
  } finally {
    clearTimeout(timer);
  }
  if (ac.signal.aborted) throw new Error(`replay from the relay did not finish within ${options.timeoutMs ?? 15_000} ms`);
  return fold.pending();
}
