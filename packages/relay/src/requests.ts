// Attention requests the relay holds (AEP-0006 §3) and who raised them
// (contracts C3 and C4): a request is bound to the sha256 of the `claim` its emitter presented in
// `hello` (or to a relay-generated one nobody can present), for good. Answers to it are routed
// only to a live connection presenting that claim; while none is connected and the request is
// pending, it is listed `offline` in the roster. Bindings are mirrored to the store.
import { isObject } from './util.js';

/** What the relay knows of one `attention.requested`. */
export interface RequestInfo {
  readonly session: string;
  readonly id: string;
  /** From the request Event (absent when only the stored binding survived eviction). */
  source: string | undefined;
  agent: string | undefined;
  kind: string | undefined;
  fields: readonly unknown[] | undefined;
  expiresAt: number | undefined;
  /**
   * Digest of the claim of the connection that raised it; null for a request that arrived over
   * HTTP (no connection, so no asker the relay could route to: its answers follow the session
   * claim, AEP-0004 §4.2, and it is never listed offline).
   */
  claim: string | null;
  /** No `attention.resolved` / `attention.timeout` seen. */
  pending: boolean;
  /** Since when no connection presenting `claim` is live (ms), or null while one is. */
  offlineSince: number | null;
}

/** Where bindings are persisted (the SQLite store), if anywhere. */
export interface BindingSink {
  bind(session: string, request: string, claim: string, offline: number | null): void;
  unbind(session: string, request: string): void;
}

/** An entry of the roster's `offline` list (contract C4). */
export interface OfflineEntry {
  request: string;
  session: string;
  agent?: string;
  source?: string;
  since: string;
}

/**
 * The requests of one session, and the strings its requests share (issue 19): every request held
 * outlives the young generation, so a copy of the session, source and agent strings per request
 * was promoted to the old one with it (~3 MB/s at 70k Events/s in the bench's mix).
 */
class SessionRequests {
  readonly ids = new Map<string, RequestInfo>();
  source: string | undefined;
  agent: string | undefined;
  constructor(readonly name: string) {}
}

/** Requests by (session, id), first binding wins; bounded (the oldest is forgotten past `cap`). */
export class RequestIndex {
  /**
   * By session, then id (issue 19): one `Map` keyed by `session + "\0" + id` built, flattened and
   * hashed a new string on every lookup (0.8 s of a 21 s ingest profile).
   */
  private readonly bySession = new Map<string, SessionRequests>();
  private count = 0;
  private readonly byClaim = new Map<string, Set<RequestInfo>>();
  /**
   * Insertion order, oldest at `head` (issue 19): asking the Map for its oldest entry
   * (`values().next()`) walks past every entry deleted since V8 last rehashed it, up to half its
   * capacity, so at the cap each admitted request paid for thousands of skipped holes.
   */
  private order: Array<RequestInfo | undefined> = [];
  private head = 0;

  constructor(
    private readonly cap: number,
    private readonly sink: BindingSink | null,
    private readonly isLive: (claim: string) => boolean,
  ) {}

  get size(): number {
    return this.count;
  }

  private find(session: string, id: string): RequestInfo | undefined {
    return this.bySession.get(session)?.ids.get(id);
  }

  private holder(session: string): SessionRequests {
    let h = this.bySession.get(session);
    if (!h) this.bySession.set(session, (h = new SessionRequests(session)));
    return h;
  }

  /** Slots of the insertion-order array, forgotten ones included (bounded: about 2 x cap + 1,024). */
  get orderSlots(): number {
    return this.order.length;
  }

  /** The request an answer or lifecycle Event names (`session`, `subject`). */
  get(session: unknown, id: unknown): RequestInfo | undefined {
    return typeof session === 'string' && typeof id === 'string' ? this.find(session, id) : undefined;
  }

  /** Field specs of the request an answer (`attention.answered`, `control.attention.respond`) names. */
  readonly fieldsOf = (ev: Record<string, unknown>): readonly unknown[] | undefined => this.get(ev['session'], ev['subject'])?.fields;

  private add(info: RequestInfo, h: SessionRequests = this.holder(info.session)): void {
    const ids = h.ids;
    if (!ids.has(info.id)) this.count++;
    ids.set(info.id, info);
    this.order.push(info);
    if (info.claim !== null) {
      let set = this.byClaim.get(info.claim);
      if (!set) this.byClaim.set(info.claim, (set = new Set()));
      set.add(info);
    }
    while (this.count > this.cap) {
      const oldest = this.order[this.head]!;
      this.order[this.head++] = undefined;
      const ids = this.bySession.get(oldest.session)?.ids;
      // Replaced under the same key since (a restored binding loaded twice): not this entry.
      if (ids?.get(oldest.id) !== oldest) continue;
      ids.delete(oldest.id);
      if (ids.size === 0) this.bySession.delete(oldest.session);
      this.count--;
      if (oldest.claim !== null) {
        this.byClaim.get(oldest.claim)?.delete(oldest);
        if (this.byClaim.get(oldest.claim)?.size === 0) this.byClaim.delete(oldest.claim);
        this.sink?.unbind(oldest.session, oldest.id);
      }
    }
    if (this.head >= 1024 && this.head * 2 >= this.order.length) {
      this.order = this.order.slice(this.head);
      this.head = 0;
    }
  }

  /** A binding persisted by an earlier run (loaded before the Events, so the claim is known). */
  restore(session: string, id: string, claim: string, offline: number | null, now: number): void {
    // The relay stopped while the asker was connected: it is offline since this start.
    this.add({
      session,
      id,
      source: undefined,
      agent: undefined,
      kind: undefined,
      fields: undefined,
      expiresAt: undefined,
      claim,
      pending: false,
      offlineSince: offline ?? now,
    });
  }

  /**
   * An admitted Event: an `attention.requested` binds to `claim` (first binding wins; null: it
   * came over HTTP, unbound); a resolution or timeout ends the request's pending state.
   * `persist` is false while loading.
   */
  observe(ev: Record<string, unknown>, claim: string | null, now: number, persist = true): void {
    const type = ev['type'];
    if (type === 'attention.resolved' || type === 'attention.timeout') {
      const r = this.get(ev['session'], ev['subject']);
      // The field spec is only needed while answers may come; the binding itself stays.
      if (r) {
        r.pending = false;
        r.fields = undefined;
      }
      return;
    }
    if (type !== 'attention.requested') return;
    const session = ev['session'];
    const id = ev['id'];
    if (typeof session !== 'string' || typeof id !== 'string') return;
    const data = isObject(ev['data']) ? ev['data'] : {};
    const known = this.find(session, id);
    const expires = typeof data['expires_at'] === 'string' ? Date.parse(data['expires_at']) : NaN;
    const source = String(ev['source']);
    const agent = String(ev['agent']);
    const kind = typeof data['kind'] === 'string' ? data['kind'] : undefined;
    const fields = Array.isArray(data['fields']) ? (data['fields'] as unknown[]) : undefined;
    const expiresAt = Number.isNaN(expires) ? undefined : expires;
    if (known) {
      // A restored binding meets its Event again (load), or a retransmission: never rebind.
      if (known.source === undefined) {
        known.source = source;
        known.agent = agent;
        known.kind = kind;
        known.fields = fields;
        known.expiresAt = expiresAt;
        known.pending = true;
      }
      return;
    }
    const live = claim !== null && this.isLive(claim);
    const h = this.holder(session);
    if (h.source !== source) h.source = source;
    if (h.agent !== agent) h.agent = agent;
    const info: RequestInfo = {
      session: h.name,
      id,
      source: h.source,
      agent: h.agent,
      kind,
      fields,
      expiresAt,
      claim,
      pending: true,
      offlineSince: live || claim === null ? null : now,
    };
    this.add(info, h);
    if (persist && claim !== null) this.sink?.bind(session, id, claim, info.offlineSince);
  }

  /** The last connection presenting `claim` went away (or the first one arrived: `now` = null). */
  claimState(claim: string, offlineSince: number | null): void {
    for (const r of this.byClaim.get(claim) ?? []) {
      if (r.offlineSince === offlineSince) continue;
      r.offlineSince = offlineSince;
      if (r.pending && r.claim !== null) this.sink?.bind(r.session, r.id, r.claim, offlineSince);
    }
  }

  /** Pending requests whose asker is gone (contract C4), minus expired and older than `ttlMs`. */
  offline(now: number, ttlMs: number): OfflineEntry[] {
    const out: OfflineEntry[] = [];
    // In admission order (the order array; entries forgotten or replaced since are skipped).
    for (let i = this.head; i < this.order.length; i++) {
      const r = this.order[i];
      if (r === undefined || this.find(r.session, r.id) !== r) continue;
      if (!r.pending || r.source === undefined || r.claim === null) continue;
      if (this.isLive(r.claim)) continue;
      const since = r.offlineSince ?? now;
      if (now - since >= ttlMs) continue;
      if (r.expiresAt !== undefined && r.expiresAt <= now) continue;
      out.push({
        request: r.id,
        session: r.session,
        ...(r.agent !== undefined ? { agent: r.agent } : {}),
        source: r.source,
        since: new Date(since).toISOString(),
      });
    }
    return out;
  }
}
