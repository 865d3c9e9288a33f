// The relay's shared state and its one write path: admission of an Event into the replay buffer
// (dedupe, order, retention; AEP-0003 §5, §7) and live fan-out, plus rebuilding the buffer from
// the durable store. Bindings (http.ts, sse.ts, ws.ts, control.ts) call into this.
import { randomBytes } from 'node:crypto';
import { severityRank } from '@aep/protocol';
import { Auth } from './auth.js';
import { Tokens } from './tokens.js';
import { makeHonest, rawRank } from './capture.js';
import { Held, ReplayBuffer, type Entry, type Pos, type ReplayPart } from './buffer.js';
import { LocalLog, type ClaimRegistry, type EventLog, type RelayBackend } from './backend.js';
import { Claims, type Claimant } from './claims.js';
import { Hub, Outgoing, type SubscriptionSpec } from './hub.js';
import type { Incoming } from './ingest.js';
import type { ResolvedOptions } from './options.js';
import { PushRoutes } from './push.js';
import { RequestIndex } from './requests.js';
import type { SqliteStore } from './store.js';
import { isObject } from './util.js';

/** The AEP versions this relay speaks (AEP-0001 §11). */
export const SUPPORTED_VERSIONS = ['0.1'] as const;

/** Types that change what the request index knows. */
const ATTENTION_STATE = new Set(['attention.requested', 'attention.resolved', 'attention.timeout']);

/** A claim digest no connection can present (its preimage is never known). */
export function unpresentableClaim(): string {
  return randomBytes(32).toString('hex');
}

/** Routing attributes of one Event (AEP-0001 §5, §7). */
export interface Described {
  source: string;
  id: string;
  session: string | null;
  pos: Pos;
  positioned: boolean;
  type: string;
  rawRank: number;
}

/** Shared state of one relay. */
export class RelayCore {
  readonly buffer: ReplayBuffer;
  readonly hub: Hub;
  readonly auth: Auth;
  /** Session and hello claims (seam: local `Claims`, or the backend's cluster-wide registry). */
  readonly claims: ClaimRegistry;
  /** Where accepted Events go (seam: `LocalLog` = buffer + SQLite, or the backend's shared log). */
  readonly log: EventLog;
  readonly counters = { ingested: 0, regated: 0, commandsForwarded: 0, commandsRefused: 0 };
  readonly requests: RequestIndex;
  private nextRowid = 1;
  private readonly rowid = (): number => this.nextRowid++;
  /** Set when close() starts. */
  closing = false;
  /** Web Push subscription routes (contract C10, push.ts), when configured. */
  push: PushRoutes | null = null;

  constructor(
    readonly opts: ResolvedOptions,
    readonly store: SqliteStore | null,
    readonly backend: RelayBackend | null = null,
  ) {
    this.claims = backend?.claims ?? new Claims();
    this.log = backend?.log ?? new LocalLog(this);
    this.auth = new Auth(opts.token, backend ? new Tokens(backend.tokens.sink, backend.tokens.stored) : new Tokens(store, store?.tokens() ?? []));
    this.buffer = new ReplayBuffer(
      { depth: opts.bufferDepth, maxSessions: opts.maxSessions, totalBytes: opts.totalBytes },
      backend ? backend.bufferSink : store,
    );
    // A durable relay keeps Events' bytes in the store only (issue 19 memory goal: the store
    // queues them, then commits them; `keepsBytes`): the index stays in RAM, replay reads the
    // bytes back (`fetchRaw`). A backend's sink does not keep them: the buffer holds them.
    this.hub = new Hub({ slowConsumerBytes: opts.slowConsumerBytes, maxConsumerBytes: opts.maxConsumerBytes }, opts.log);
    // Bounded with the buffer: ten requests per session the buffer may hold (at least 1 000).
    this.requests = new RequestIndex(Math.max(1000, opts.maxSessions * 10), store, (c) => this.claims.liveClaim(c));
    this.claims.onClaimState = (claim, since) => this.requests.claimState(claim, since);
  }

  /** Rebuild the buffer from the durable store (marks first, so tombstones apply). */
  async load(): Promise<void> {
    if (this.opts.push) this.push = await PushRoutes.open(this.opts.storePath, this.opts.push);
    if (this.backend) {
      await this.backend.attach(this);
      return;
    }
    if (!this.store) return;
    const now = Date.now();
    for (const m of this.store.evictedMarks()) this.buffer.restoreEvicted(m.session, m.pos);
    for (const b of this.store.bindings()) this.requests.restore(b.session, b.request, b.claim, b.offline, now);
    let max = 0;
    const bad: number[] = [];
    for (const r of this.store.rows()) {
      max = Math.max(max, r.rowid);
      let parsed: unknown;
      try {
        parsed = JSON.parse(r.raw);
      } catch {
        parsed = undefined;
      }
      if (!isObject(parsed)) {
        bad.push(r.rowid);
        continue;
      }
      // A row stored before capture enforcement may be dishonest: it is held honest (in memory).
      const ev = makeHonest(parsed, this.requests.fieldsOf);
      const raw = ev === parsed ? r.raw : JSON.stringify(ev);
      const agent = typeof ev['agent'] === 'string' ? ev['agent'] : undefined;
      const entry: Entry = { rowid: r.rowid, raw, bytes: Buffer.byteLength(raw), agent, ...this.describe(ev) };
      if (this.buffer.admit(entry, false) === 'duplicate') {
        bad.push(r.rowid);
        continue;
      }
      // The stored row is what replay reads back, unless it had to be made honest here: then the
      // honest bytes stay in memory (the stored ones must never be served).
      if (ev !== parsed) this.buffer.pin(this.buffer.lastAdmitted!, raw);
      // A request without a stored binding (raised over HTTP, or stored before bindings existed)
      // stays unbound: its answers follow the session claim.
      if (ATTENTION_STATE.has(entry.type)) this.requests.observe(ev, null, now, false);
    }
    if (bad.length) this.store.removeNow(bad);
    this.nextRowid = Math.max(max, this.store.maxRowid) + 1;
    await this.store.startWriter();
  }

  /** Attributes the buffer orders and routes on (AEP-0001 §5, §7), from a parsed Event. */
  describe(ev: Record<string, unknown>, rank: number = rawRank(ev)): Described {
    const session = typeof ev['session'] === 'string' ? ev['session'] : null;
    const seq = ev['seq'];
    const positioned = session !== null && Number.isInteger(seq);
    const epoch = Number.isInteger(ev['epoch']) ? (ev['epoch'] as number) : 0;
    return {
      source: String(ev['source']),
      id: String(ev['id']),
      session,
      pos: positioned ? [epoch, seq as number, 0] : this.buffer.nextUnpositioned(session),
      positioned,
      type: String(ev['type']),
      rawRank: rank,
    };
  }

  /** Receives the raw rank `makeHonest` finds on the ingest path (one object for the relay's life). */
  private readonly ranked = { rank: 0 };

  /**
   * Admit one valid, non-command Event (or a routed command's history copy) and fan it out
   * live. The Event is first made honest for the capture it declares (capture.ts): what is
   * stored and fanned out never carries a member above that level.
   */
  ingest(received: Incoming, from: Claimant | null): void {
    let inc = received;
    const ranked = this.ranked;
    const ev = makeHonest(inc.event, this.requests.fieldsOf, ranked);
    if (ev !== inc.event) {
      this.counters.regated++;
      const raw = JSON.stringify(ev);
      inc = { event: ev, raw, bytes: Buffer.byteLength(raw) };
    }
    const d = this.describe(ev, ranked.rank);
    this.counters.ingested++;
    // The raw bytes go once into the buffer's off-heap arena (issue 19): straight from the body.
    this.buffer.admitRaw(
      this.rowid,
      d.source,
      d.id,
      d.session,
      d.pos,
      d.positioned,
      d.type,
      d.rawRank,
      inc.body ?? inc.raw,
      inc.bytes,
      typeof ev['agent'] === 'string' ? ev['agent'] : undefined,
      inc.at ?? 0,
    );
    // Contract C3: a request is bound to the claim of the connection that raised it. Over HTTP
    // there is no connection, hence no asker to bind to: it stays unbound (session routing).
    if (ATTENTION_STATE.has(d.type)) this.requests.observe(ev, from?.claim ?? null, Date.now());
    if (from && d.positioned && d.session !== null) this.claims.claim(from, d.session);
    // Live fan-out as received, redeliveries included (AEP-0003 §5): consumers dedupe.
    if (this.hub.consumerCount > 0)
      this.hub.publish(new Outgoing(inc.raw, d.type, d.session, d.pos, d.positioned, d.rawRank, severityRank(ev['severity'] ?? 'info'), ev));
  }

  /**
   * The Event as it will be stored: made honest for the capture it declares (capture.ts). A
   * scale-out backend calls this before it publishes, so every relay holds the same bytes.
   */
  prepare(received: Incoming): Incoming {
    const ev = makeHonest(received.event, this.requests.fieldsOf);
    if (ev === received.event) return received;
    this.counters.regated++;
    const raw = JSON.stringify(ev);
    return { event: ev, raw, bytes: Buffer.byteLength(raw) };
  }

  /**
   * Admit an Event a scale-out backend read back from its shared, ordered log (seam, issue 16):
   * `rowid` = its position in that log, `claim` = the digest of the claim of the connection that
   * raised it (contract C3; null: unbound). Already prepared by the relay that accepted it.
   * Fanned out live here, at every relay, once per log entry; a copy already held is fanned out
   * as a redelivery (AEP-0003 §5) and not admitted again.
   */
  applyShared(raw: string, rowid: number, claim: string | null): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      return;
    }
    if (!isObject(parsed)) return;
    const d = this.describe(parsed);
    const agent = typeof parsed['agent'] === 'string' ? parsed['agent'] : undefined;
    const entry: Entry = { rowid, raw, bytes: Buffer.byteLength(raw), agent, ...d };
    const admitted = this.buffer.admit(entry) === 'admitted';
    if (admitted && ATTENTION_STATE.has(d.type)) this.requests.observe(parsed, claim, Date.now());
    this.fanout(raw, d, parsed);
  }

  /** Live fan-out of one Event without admission (a redelivery the shared log deduplicated). */
  redeliver(inc: Incoming): void {
    this.fanout(inc.raw, this.describe(inc.event), inc.event);
  }

  private fanout(raw: string, d: Described, ev: Record<string, unknown>): void {
    if (this.hub.consumerCount > 0)
      this.hub.publish(new Outgoing(raw, d.type, d.session, d.pos, d.positioned, d.rawRank, severityRank(ev['severity'] ?? 'info'), ev));
  }

  /** Resolves once what was queued (tokens, bindings, Events) is durable. */
  durable(): Promise<void> {
    if (this.backend) return this.backend.durable();
    return this.store?.durable() ?? Promise.resolve();
  }

  /** The `agent` of a session's newest held sequenced Event (scope constraints on commands). */
  sessionAgent(session: string): string | undefined {
    return this.buffer.lastPositioned(session)?.agent;
  }

  /**
   * The raw text of held entries, in order: from memory, or read back from the store for the ones
   * it holds only there. null for an entry that is gone (evicted meanwhile): the caller treats
   * it as a gap (AEP-0003 §8.4).
   */
  async fetchRaw(entries: readonly Entry[]): Promise<Array<string | null>> {
    const out: Array<string | null> = new Array<string | null>(entries.length).fill(null);
    const missing: number[] = [];
    const at: number[] = [];
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i]!;
      if (!(e instanceof Held) || e.inMemory) out[i] = e.raw;
      else {
        missing.push(e.rowid);
        at.push(i);
      }
    }
    if (missing.length > 0 && this.store) {
      const got = await this.store.fetch(missing);
      for (let k = 0; k < at.length; k++) out[at[k]!] = got[k]?.toString('utf8') ?? null;
    }
    return out;
  }

  /** True when every entry's bytes are in memory (no store read needed). */
  static inMemory(entries: readonly Entry[]): boolean {
    for (const e of entries) if (e instanceof Held && !e.inMemory) return false;
    return true;
  }

  /** The replay snapshot a subscription starts with (AEP-0003 §5, §7). */
  snapshot(spec: SubscriptionSpec, live: boolean): ReplayPart[] {
    if (spec.from === 'all') return this.buffer.snapshotAll();
    if (spec.from) return this.buffer.snapshotFrom(spec.from);
    return live ? [] : this.buffer.snapshotAll();
  }

  /** Raw text of replayed entries (bound, for the hub's replay loop): synchronous when all are in memory. */
  readonly fetch = (entries: readonly Entry[]): Promise<Array<string | null>> | Array<string | null> =>
    RelayCore.inMemory(entries) ? entries.map((e) => e.raw) : this.fetchRaw(entries);

  /** Reads a snapshot part (bound, for the hub's replay loop). */
  readonly read = (part: ReplayPart, cursor: Pos | null, max: number): { entries: Entry[]; gap: boolean } => this.buffer.read(part, cursor, max);

  /** The discovery document (AEP-0003 §3.4). */
  discovery(): Record<string, unknown> {
    return {
      aep: [...SUPPORTED_VERSIONS],
      role: 'collector',
      endpoints: { events: '/events', stream: '/stream', socket: '/socket' },
      capabilities: this.capabilities(),
    };
  }

  /** Capabilities, in discovery and in the relay's `hello`. */
  capabilities(): Record<string, unknown> {
    return {
      filters: ['attr-match'],
      // Per-session depth (documented in docs/decisions.md), the real eviction point.
      replay: { buffer: this.opts.bufferDepth, all: true },
      capture: ['none', 'metadata', 'redacted', 'full'],
      control: { accepts: [] },
      roster: {},
      experimental: {},
    };
  }
}
