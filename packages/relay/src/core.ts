// The relay's shared state and its one write path: admission of an Event into the replay buffer
// (dedupe, order, retention; AEP-0003 §5, §7) and live fan-out, plus rebuilding the buffer from
// the durable store. Bindings (http.ts, sse.ts, ws.ts, control.ts) call into this.
import { captureRank, severityRank } from '@aep/protocol';
import { Auth } from './auth.js';
import { ReplayBuffer, type Entry, type Pos, type ReplayPart } from './buffer.js';
import { Claims, type Claimant } from './claims.js';
import { Hub, Outgoing, type SubscriptionSpec } from './hub.js';
import type { Incoming } from './ingest.js';
import type { ResolvedOptions } from './options.js';
import type { SqliteStore } from './store.js';
import { isObject } from './util.js';

/** The AEP versions this relay speaks (AEP-0001 §11). */
export const SUPPORTED_VERSIONS = ['0.1'] as const;

/** Routing attributes of one Event (AEP-0001 §5, §7). */
export interface Described { source: string; id: string; session: string | null; pos: Pos; positioned: boolean; type: string; captureRank: number }

/** Shared state of one relay. */
export class RelayCore {
  readonly buffer: ReplayBuffer;
  readonly hub: Hub;
  readonly auth: Auth;
  readonly claims = new Claims();
  readonly counters = { ingested: 0, commandsForwarded: 0, commandsRefused: 0 };
  private nextRowid = 1;
  /** Set when close() starts. */
  closing = false;

  constructor(readonly opts: ResolvedOptions, readonly store: SqliteStore | null) {
    this.auth = new Auth(opts.token);
    this.buffer = new ReplayBuffer({ depth: opts.bufferDepth, maxSessions: opts.maxSessions, totalBytes: opts.totalBytes }, store);
    this.hub = new Hub({ slowConsumerBytes: opts.slowConsumerBytes, maxConsumerBytes: opts.maxConsumerBytes }, opts.log);
  }

  /** Rebuild the buffer from the durable store (marks first, so tombstones apply). */
  async load(): Promise<void> {
    if (!this.store) return;
    for (const m of this.store.evictedMarks()) this.buffer.restoreEvicted(m.session, m.pos);
    let max = 0;
    const bad: number[] = [];
    for (const r of this.store.rows()) {
      max = Math.max(max, r.rowid);
      let ev: unknown;
      try { ev = JSON.parse(r.raw); } catch { ev = undefined; }
      if (!isObject(ev)) { bad.push(r.rowid); continue; }
      const entry: Entry = { rowid: r.rowid, raw: r.raw, bytes: Buffer.byteLength(r.raw), ...this.describe(ev) };
      if (this.buffer.admit(entry, false) === 'duplicate') bad.push(r.rowid);
    }
    if (bad.length) this.store.removeNow(bad);
    this.nextRowid = max + 1;
    await this.store.startWriter();
  }

  /** Attributes the buffer orders and routes on (AEP-0001 §5, §7), from a parsed Event. */
  describe(ev: Record<string, unknown>): Described {
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
      captureRank: captureRank(ev['capture'] ?? 'metadata'),
    };
  }

  /** Admit one valid, non-command Event (or a routed command) and fan it out live. */
  ingest(inc: Incoming, from: Claimant | null): void {
    const ev = inc.event;
    const d = this.describe(ev);
    this.counters.ingested++;
    this.buffer.admitNew(d.source, d.id, (rowid) => ({ rowid, source: d.source, id: d.id, session: d.session, pos: d.pos, positioned: d.positioned, type: d.type, raw: inc.raw, bytes: inc.bytes, captureRank: d.captureRank }), () => this.nextRowid++);
    if (from && d.positioned && d.session !== null) this.claims.claim(from, d.session);
    // Live fan-out as received, redeliveries included (AEP-0003 §5): consumers dedupe.
    if (this.hub.consumerCount > 0) this.hub.publish(new Outgoing(inc.raw, d.type, d.session, d.pos, d.positioned, d.captureRank, severityRank(ev['severity'] ?? 'info'), ev));
  }

  /** The replay snapshot a subscription starts with (AEP-0003 §5, §7). */
  snapshot(spec: SubscriptionSpec, live: boolean): ReplayPart[] {
    if (spec.from === 'all') return this.buffer.snapshotAll();
    if (spec.from) return this.buffer.snapshotFrom(spec.from);
    return live ? [] : this.buffer.snapshotAll();
  }

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
