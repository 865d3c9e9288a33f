// Fan-out: subscriptions, capture ceilings, replay-then-live ordering, backpressure
// (AEP-0003 §5, §6.4, §7, §8.4; AEP-0001 §8.2(b)).
import { captureRank, compileFilter } from '@aep/protocol';
import type { CaptureLevel, Issue } from '@aep/protocol';
import type { Entry, Pos, ReplayPart } from './buffer.js';
import { gateFor } from './capture.js';

/** A parsed Event as the relay handles it (routing reads attributes only, AEP-0001 §5). */
export type AepEvent = Record<string, unknown>;

/** One Event on its way out: raw bytes plus, lazily, the parsed object and rendered variants. */
export class Outgoing {
  private parsedEvent: AepEvent | undefined;
  private rendered: Map<string, string> | undefined;
  constructor(
    readonly raw: string,
    readonly type: string,
    readonly session: string | null,
    readonly pos: Pos,
    readonly positioned: boolean,
    /** Lowest ceiling rank that receives `raw` unchanged (capture.ts `rawRank`). */
    readonly rawRank: number,
    readonly severityRank: number,
    parsed?: AepEvent,
  ) {
    this.parsedEvent = parsed;
  }

  /** From a held buffer entry (replay). */
  static fromEntry(e: Entry, raw: string = e.raw): Outgoing {
    return new Outgoing(raw, e.type, e.session, e.pos, e.positioned, e.rawRank, -1);
  }

  get event(): AepEvent {
    if (this.parsedEvent === undefined) this.parsedEvent = JSON.parse(this.raw) as AepEvent;
    return this.parsedEvent;
  }

  /**
   * Frames by binding and ceiling, key 5 x binding (sse 0, ws 1) + ceiling rank (none 4): the
   * first two in fields (an Event usually goes out in one or two frames; an array per Event was
   * a measurable share of the fan-out's garbage, issue 19), any more in `moreFrames`.
   */
  private k1 = -1;
  private f1: string | Buffer | undefined;
  private k2 = -1;
  private f2: string | Buffer | undefined;
  private moreFrames: Array<string | Buffer | undefined> | undefined;

  /**
   * A per-binding frame built once per (Event, ceiling) and shared by every subscriber, so
   * fan-out to N consumers formats and UTF-8-encodes an Event once, not N times. `build` is a
   * module-level function (no closure per call: issue 19, the fan-out's garbage).
   */
  frame<T extends string | Buffer>(binding: 'sse' | 'ws', ceiling: CaptureLevel | undefined, build: (o: Outgoing, text: string) => T): T {
    const k = (binding === 'sse' ? 0 : 5) + (ceiling === undefined ? 4 : captureRank(ceiling));
    if (k === this.k1) return this.f1 as T;
    if (k === this.k2) return this.f2 as T;
    const hit = this.moreFrames?.[k];
    if (hit !== undefined) return hit as T;
    const f = build(this, this.render(ceiling));
    if (this.k1 < 0) {
      this.k1 = k;
      this.f1 = f;
    } else if (this.k2 < 0) {
      this.k2 = k;
      this.f2 = f;
    } else (this.moreFrames ??= new Array<string | Buffer | undefined>(10))[k] = f;
    return f;
  }

  /** Bytes to deliver under `ceiling`: the raw received line unless gating applies (capture.ts). */
  render(ceiling: CaptureLevel | undefined): string {
    if (ceiling === undefined || captureRank(ceiling) >= this.rawRank) return this.raw;
    const cached = this.rendered?.get(ceiling);
    if (cached !== undefined) return cached;
    const ev = this.event;
    const out = gateFor(ev, ceiling);
    const text = out === ev ? this.raw : JSON.stringify(out);
    (this.rendered ??= new Map()).set(ceiling, text);
    return text;
  }
}

/** The writer side of one consumer connection (SSE response or WebSocket). */
export interface ConsumerSink {
  readonly kind: 'sse' | 'ws';
  /** Bytes queued but not yet flushed to the socket. */
  buffered(): number;
  /** Write one delivery (an Event under a subscription, rendered for `ceiling`). */
  deliver(sub: Subscription, o: Outgoing, ceiling: CaptureLevel | undefined): void;
  /** Write a replay-exhausted marker. */
  marker(sub: Subscription, session: string, earliest: { epoch: number; seq: number }): void;
  /** Replay finished (SSE `live=0`: end the response). */
  replayDone(sub: Subscription): void;
  /** Disconnect a consumer that cannot keep up with `notice`+ Events (§8.4). */
  disconnectSlow(): void;
  readonly closed: boolean;
}

/** Compiled subscription parameters, shared by SSE and WS. */
export interface SubscriptionSpec {
  match: ((e: AepEvent) => boolean) | null;
  ceiling: CaptureLevel | undefined;
  from: 'all' | Array<{ session: string; epoch: number; seq: number }> | null;
}

/** Parse and validate a filter / from / capture triple; issues name the rule (fail closed, §6.2). */
export function compileSpec(
  filter: unknown,
  from: unknown,
  capture: unknown,
  maxFrom: number,
): { ok: true; spec: SubscriptionSpec } | { ok: false; code: 'invalid-filter' | 'limit-exceeded'; detail: string } {
  let match: SubscriptionSpec['match'] = null;
  if (filter !== undefined) {
    if (typeof filter !== 'object' || filter === null || Array.isArray(filter))
      return { ok: false, code: 'invalid-filter', detail: 'filter must be a JSON object (AEP-0003 §6.1)' };
    if (Object.keys(filter).length > 0) {
      const c = compileFilter(filter);
      if (!c.ok) return { ok: false, code: 'invalid-filter', detail: issuesText(c.issues) };
      match = (e) => c.match(e);
    }
  }
  let ceiling: CaptureLevel | undefined;
  if (capture !== undefined) {
    if (captureRank(capture) < 0) return { ok: false, code: 'invalid-filter', detail: 'capture must be one of none, metadata, redacted, full (AEP-0003 §6.4)' };
    ceiling = capture as CaptureLevel;
  }
  let fromOut: SubscriptionSpec['from'] = null;
  if (from !== undefined) {
    if (from === 'all') fromOut = 'all';
    else if (!Array.isArray(from))
      return { ok: false, code: 'invalid-filter', detail: 'from must be an array of {session, epoch?, seq} or "all" (AEP-0003 §6.5, §7)' };
    else {
      if (from.length > maxFrom)
        return { ok: false, code: 'limit-exceeded', detail: `from has ${from.length} positions; limit maxFromPositions is ${maxFrom}` };
      const list: Array<{ session: string; epoch: number; seq: number }> = [];
      for (let i = 0; i < from.length; i++) {
        const p = from[i] as Record<string, unknown> | null;
        const epoch = p?.['epoch'] ?? 0;
        if (
          typeof p !== 'object' ||
          p === null ||
          Array.isArray(p) ||
          typeof p['session'] !== 'string' ||
          p['session'] === '' ||
          !Number.isInteger(p['seq']) ||
          (p['seq'] as number) < 0 ||
          !Number.isInteger(epoch) ||
          (epoch as number) < 0
        ) {
          return { ok: false, code: 'invalid-filter', detail: `from[${i}] must be {session: string, epoch?: integer >= 0, seq: integer >= 0} (AEP-0003 §7)` };
        }
        list.push({ session: p['session'], epoch: epoch as number, seq: p['seq'] as number });
      }
      fromOut = list;
    }
  }
  return { ok: true, spec: { match, ceiling, from: fromOut } };
}

function issuesText(issues: readonly Issue[]): string {
  return (
    issues
      .slice(0, 3)
      .map((i) => `${i.rule}: ${i.message}${i.path ? ` at ${i.path}` : ''}`)
      .join('; ') || 'invalid filter'
  );
}

/** One subscription (a WS `subscribe` or one SSE request). */
export class Subscription {
  replaying = false;
  /** Set by `unsubscribe`: an ongoing replay stops. */
  cancelled = false;
  /** Live Events that arrived during the replay (from `pendingHead` on), and their accounted bytes. */
  pending: Outgoing[] = [];
  pendingHead = 0;
  pendingBytes = 0;
  /** Last delivered position per session, for the `closing` frame (§3.5.4). */
  readonly delivered = new Map<string, Pos>();
  constructor(
    readonly id: string,
    readonly spec: SubscriptionSpec,
    readonly sink: ConsumerSink,
    readonly liveAfterReplay: boolean,
  ) {}
  matches(o: Outgoing): boolean {
    return this.spec.match === null || this.spec.match(o.event);
  }
  noteDelivered(o: Outgoing): void {
    if (o.positioned && o.session !== null) this.delivered.set(o.session, o.pos);
  }
}

/** Backpressure counters (exposed in /healthz). */
export interface FanoutStats {
  delivered: number;
  dropped: number;
  slowDisconnects: number;
  subscriptions: number;
  maxQueuedBytes: number;
}

const NOTICE = 2;

/** Registry of live subscriptions and the fan-out loop. */
export class Hub {
  private readonly consumers = new Map<ConsumerSink, Subscription[]>();
  /**
   * The consumers as two parallel arrays (sinks, their subscription lists), rebuilt after a sink
   * comes or goes: publish() walks them without allocating (a Map iterator and its [key, value]
   * pairs were, per Event and consumer, a large share of the fan-out's garbage: issue 19).
   */
  private sinkList: ConsumerSink[] | undefined;
  private subLists: Subscription[][] = [];
  readonly stats: FanoutStats = { delivered: 0, dropped: 0, slowDisconnects: 0, subscriptions: 0, maxQueuedBytes: 0 };
  private readonly warned = new WeakSet<ConsumerSink>();

  constructor(
    private readonly limits: { slowConsumerBytes: number; maxConsumerBytes: number },
    private readonly log: (l: string) => void,
  ) {}

  /** Register a subscription (before its replay snapshot is taken: nothing lost, nothing doubled). */
  add(sub: Subscription): void {
    const list = this.consumers.get(sub.sink);
    if (list) list.push(sub);
    else {
      this.consumers.set(sub.sink, [sub]);
      this.sinkList = undefined;
    }
    this.stats.subscriptions++;
  }

  remove(sub: Subscription): void {
    const list = this.consumers.get(sub.sink);
    if (!list) return;
    const i = list.indexOf(sub);
    if (i >= 0) {
      list.splice(i, 1);
      this.stats.subscriptions--;
    }
    if (list.length === 0) {
      this.consumers.delete(sub.sink);
      this.sinkList = undefined;
    }
  }

  removeSink(sink: ConsumerSink): void {
    const list = this.consumers.get(sink);
    if (!list) return;
    this.stats.subscriptions -= list.length;
    this.consumers.delete(sink);
    this.sinkList = undefined;
  }

  get consumerCount(): number {
    return this.consumers.size;
  }

  /** Live fan-out of one ingested Event, as received (redeliveries included, §5). */
  publish(o: Outgoing): void {
    let sinks = this.sinkList;
    if (sinks === undefined) {
      sinks = this.sinkList = [...this.consumers.keys()];
      this.subLists = [...this.consumers.values()];
    }
    // Local copies: a consumer disconnected below rebuilds the lists for the next Event; this
    // one goes on over the old ones (a removed consumer is closed, and skipped).
    const lists = this.subLists;
    for (let i = 0; i < sinks.length; i++) {
      const sink = sinks[i]!;
      if (sink.closed) continue;
      const subs = lists[i]!;
      let best: CaptureLevel | undefined | null = null; // null = no live match
      let bestRank = -1;
      // The live matches: the first, and all of them only when there are several (rare).
      let first: Subscription | undefined;
      let more: Subscription[] | undefined;
      for (let k = 0; k < subs.length; k++) {
        const sub = subs[k]!;
        let m: boolean;
        try {
          m = sub.matches(o);
        } catch {
          m = false;
        }
        if (!m) continue;
        if (sub.replaying) {
          this.queue(sub, o);
          continue;
        }
        const r = sub.spec.ceiling === undefined ? 99 : captureRank(sub.spec.ceiling);
        if (r > bestRank) {
          bestRank = r;
          best = sub.spec.ceiling;
        }
        if (first === undefined) first = sub;
        else (more ??= [first]).push(sub);
      }
      // queue() above may just have disconnected this consumer (a notice over its hard mark).
      if (first !== undefined && best !== null && !sink.closed) this.send(sink, first, more, o, best);
    }
  }

  private queue(sub: Subscription, o: Outgoing): void {
    if (sub.pendingBytes + sub.sink.buffered() > this.limits.maxConsumerBytes) {
      if (o.severityRank >= NOTICE) {
        this.slow(sub.sink);
        return;
      }
      this.drop(sub.sink);
      return;
    }
    sub.pending.push(o);
    sub.pendingBytes += queuedSize(o);
  }

  private drop(sink: ConsumerSink): void {
    this.stats.dropped++;
    if (!this.warned.has(sink)) {
      this.warned.add(sink);
      this.log(`slow ${sink.kind} consumer: dropping debug/info Events (AEP-0003 §8.4); counted in /healthz`);
    }
  }

  private slow(sink: ConsumerSink): void {
    if (sink.closed) return;
    this.stats.slowDisconnects++;
    this.log(`disconnecting a slow ${sink.kind} consumer that cannot take notice+ Events (AEP-0003 §8.4)`);
    this.removeSink(sink);
    sink.disconnectSlow();
  }

  /** Backpressure policy: drop debug/info above the soft mark; notice+ over the hard mark => disconnect. */
  send(sink: ConsumerSink, first: Subscription, more: Subscription[] | undefined, o: Outgoing, ceiling: CaptureLevel | undefined): void {
    const b = sink.buffered();
    if (b > this.stats.maxQueuedBytes) this.stats.maxQueuedBytes = b;
    if (b > this.limits.slowConsumerBytes) {
      const sev = o.severityRank >= 0 ? o.severityRank : severityOf(o);
      if (sev < NOTICE) {
        this.drop(sink);
        return;
      }
      if (b > this.limits.maxConsumerBytes) {
        this.slow(sink);
        return;
      }
    }
    try {
      o.render(ceiling);
    } catch {
      return;
    }
    sink.deliver(first, o, ceiling);
    if (more === undefined) first.noteDelivered(o);
    else for (const s of more) s.noteDelivered(o);
    this.stats.delivered++;
  }

  /**
   * Replay a snapshot to one subscription (markers first per session), then flush what arrived
   * meanwhile, then go live (or end, for `live=0`). Backpressure is checked before every Event
   * (issue 12 item 5): above the soft mark nothing more is written until the consumer drains, so
   * a consumer that never reads holds at most the soft mark plus one Event, and waits alone
   * (others are not slowed). The snapshot holds positions, not Events; if what this consumer
   * still had to receive was evicted while it waited, it is disconnected so it resumes exactly
   * (AEP-0003 §8.4: never a silent gap).
   */
  async replay(sub: Subscription, parts: ReplayPart[], drained: () => Promise<void>, read: ReplayReader, fetch?: RawFetcher): Promise<void> {
    sub.replaying = true;
    const sink = sub.sink;
    const gone = () => sink.closed || sub.cancelled;
    let sinceYield = 0;
    for (const part of parts) {
      if (gone()) return;
      if (part.exhausted && part.session !== null) sink.marker(sub, part.session, part.exhausted);
      let cursor: Pos | null = null;
      for (;;) {
        const r = read(part, cursor, 64);
        if (r.gap) {
          this.slow(sink);
          return;
        }
        if (r.entries.length === 0) break;
        // A durable relay reads committed Events' bytes back from the store (issue 19).
        const got = fetch ? fetch(r.entries) : null;
        const raws = got instanceof Promise ? await got : got;
        for (let k = 0; k < r.entries.length; k++) {
          const e = r.entries[k]!;
          if (gone()) return;
          const raw = raws ? raws[k] : e.raw;
          // Evicted before its bytes could be read: the consumer resumes exactly (AEP-0003 §8.4).
          if (raw === null || raw === undefined) {
            this.slow(sink);
            return;
          }
          if (sink.buffered() > this.limits.slowConsumerBytes) {
            await drained();
            break; // re-read from the cursor (the outer loop): what follows may have been evicted meanwhile
          }
          cursor = e.pos;
          const o = Outgoing.fromEntry(e, raw);
          let ok: boolean;
          try {
            ok = sub.matches(o);
          } catch {
            ok = false;
          }
          if (!ok) continue;
          this.deliverOne(sub, o);
          // A long replay to a fast consumer still yields, so ingest and other consumers keep going.
          if (++sinceYield >= 2048) {
            sinceYield = 0;
            await new Promise<void>((res) => setImmediate(res));
          }
        }
      }
    }
    // Events ingested during the replay, in arrival order, with the same per-Event check.
    while (sub.pending.length > sub.pendingHead) {
      if (gone()) return;
      if (sink.buffered() > this.limits.slowConsumerBytes) {
        await drained();
        continue;
      }
      const o = sub.pending[sub.pendingHead]!;
      sub.pending[sub.pendingHead++] = undefined as unknown as Outgoing;
      sub.pendingBytes -= queuedSize(o);
      this.deliverOne(sub, o);
      if (sub.pendingHead > 1024 && sub.pendingHead * 2 > sub.pending.length) {
        sub.pending = sub.pending.slice(sub.pendingHead);
        sub.pendingHead = 0;
      }
    }
    sub.pending = [];
    sub.pendingHead = 0;
    sub.pendingBytes = 0;
    sub.replaying = false;
    sink.replayDone(sub);
  }

  private deliverOne(sub: Subscription, o: Outgoing): void {
    const b = sub.sink.buffered();
    if (b > this.stats.maxQueuedBytes) this.stats.maxQueuedBytes = b;
    try {
      o.render(sub.spec.ceiling);
    } catch {
      return;
    }
    sub.sink.deliver(sub, o, sub.spec.ceiling);
    sub.noteDelivered(o);
    this.stats.delivered++;
  }
}

/** The raw text of entries, from memory or the store (core.ts `fetchRaw`); null = gone. */
export type RawFetcher = (entries: readonly Entry[]) => Promise<Array<string | null>> | Array<string | null>;

/** Reads a snapshot part from the buffer (`ReplayBuffer.read`). */
export type ReplayReader = (part: ReplayPart, cursor: Pos | null, max: number) => { entries: Entry[]; gap: boolean };

/** Bytes a queued Event is accounted for (its raw text plus bookkeeping). */
function queuedSize(o: Outgoing): number {
  return o.raw.length + 64;
}

function severityOf(o: Outgoing): number {
  const s = (o.event as { severity?: unknown }).severity;
  // severityOf's only use is send()'s `sev < NOTICE`: a mutant that moves a severity to another
  // rank on the same side of NOTICE (2) changes nothing (docs/testing.md, hub.ts equivalents).
  switch (s) {
    // Stryker disable next-line ConditionalExpression: equivalent: debug falling through to the next case returns 1 instead of 0, both below NOTICE
    case 'debug':
      return 0;
    case undefined:
    case 'info':
      return 1;
    // Stryker disable next-line ConditionalExpression,StringLiteral: equivalent: notice falling through, or not matching, returns 3 instead of 2, both at or above NOTICE
    case 'notice':
      return 2;
    default:
      return 3;
  }
}
