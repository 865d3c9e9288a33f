// The inbox's state, folded from the event stream. Pure (no DOM, no I/O) so it is unit-tested in
// Node and shared by every view. Consumer duties (AEP-0003 §1/§7, AEP-0003 §1, §7): dedupe on
// (source, id), never bare id; apply envelope defaults; ignore unknown types; rebuild each
// attention loop from `subject` alone (AEP-0002 §7.1). Which requests are pending is decided by
// `@aep/client`'s `AttentionFold`, the fold `aep inbox` and `listPending` use (one fold, issue 13):
// this store adds what the views show on top (the answer, the terminal, routing, timelines).
import { AttentionFold } from '@aep/client';
import type { FieldSpec as ProtocolFieldSpec } from '@aep/protocol';

/** A wire event as the inbox sees it: the AEP-0001 envelope, untrusted, fields optional. */
export interface WireEvent {
  aep?: string;
  id: string;
  type: string;
  source: string;
  agent?: string;
  session?: string;
  seq?: number;
  epoch?: number;
  subject?: string;
  cause?: string;
  time?: string;
  run?: string;
  step?: string;
  severity?: string;
  capture?: string;
  data?: Record<string, unknown>;
  [ext: string]: unknown;
}

/**
 * One field of a form request (`field_spec`, AEP-0006 / AEP-0002 §5.2): the protocol's type, except
 * that `type` may name a type of a later spec revision (the form shows a text box for it).
 */
export type FieldSpec = Omit<ProtocolFieldSpec, 'type'> & { type: ProtocolFieldSpec['type'] | (string & Record<never, never>) };

/**
 * Where a request is in its lifecycle (AEP-0002 §7). A request is *open* (in the inbox) until a
 * terminal event (`attention.resolved` / `attention.timeout`) is seen: `pending` (nobody has
 * answered yet) and `answered` (the emitter recorded an answer, not resolved yet) are both open.
 * This is the same definition as `@aep/client`'s `AttentionFold` and the relay's C4 offline list
 * (docs/decisions.md "Web inbox (issues 11, 14)").
 */
export type RequestStatus = 'pending' | 'answered' | 'resolved' | 'timeout';

/** True while a request has no terminal event: it stays in the inbox. */
export function isOpen(status: RequestStatus): boolean {
  return status === 'pending' || status === 'answered';
}

/** An attention request and what has happened to it so far. */
export interface RequestEntry {
  /** Key: session + request id (lifecycle events share the request's session). */
  key: string;
  event: WireEvent;
  status: RequestStatus;
  /** Parsed request time (ms) for ordering; NaN when absent or unparseable. */
  at: number;
  /** Arrival order, the tie-breaker. */
  order: number;
  answered?: WireEvent;
  terminal?: WireEvent;
  routed: WireEvent[];
}

/** A session's timeline (runs, tools, attention, control...), in arrival order. */
export interface SessionEntry {
  session: string;
  agents: Set<string>;
  events: WireEvent[];
  lastAt: number;
  /** Runs started and not yet ended (`run.started` without its terminal, AEP-0002 §2 rule 5). */
  openRuns: Set<string>;
  /** The last run terminal seen (`run.finished` / `run.failed` / `run.cancelled`). */
  lastRunEnd?: string;
  /** `session.ended` was seen. */
  ended: boolean;
}

/** What a session is doing, at a glance (issue 17 item 5). */
export type SessionStatus = 'waiting' | 'working' | 'finished';

/**
 * A session's status: `waiting` while one of its requests is pending and unanswered (it needs a
 * person), else `finished` once the session ended or its last run ended with none running, else
 * `working`. `detail` says which terminal made it finished.
 */
export function sessionStatus(s: SessionEntry, waitingRequests: number): { status: SessionStatus; detail?: string } {
  if (waitingRequests > 0) return { status: 'waiting', detail: `${waitingRequests} request${waitingRequests === 1 ? '' : 's'} waiting` };
  if (s.ended) return { status: 'finished', detail: 'session ended' };
  if (s.openRuns.size === 0 && s.lastRunEnd !== undefined) {
    const d: Record<string, string> = { 'run.finished': 'run finished', 'run.failed': 'run failed', 'run.cancelled': 'run cancelled' };
    return { status: 'finished', detail: d[s.lastRunEnd] ?? 'run ended' };
  }
  return { status: 'working' };
}

const TIMELINE_CAP = 5000;
/** Bound on early lifecycle keys and remembered commands (a tab left open for weeks stays bounded). */
const EARLY_LIMIT = 10_000;

function defined<T>(v: T | undefined | null): v is T {
  return v !== undefined && v !== null;
}

/** Shape check on a parsed JSON value: enough of an envelope to be folded safely. */
export function asWireEvent(v: unknown): WireEvent | null {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return null;
  const o = v as Record<string, unknown>;
  if (typeof o['id'] !== 'string' || typeof o['type'] !== 'string' || typeof o['source'] !== 'string') return null;
  if (defined(o['session']) && typeof o['session'] !== 'string') return null;
  if (defined(o['subject']) && typeof o['subject'] !== 'string') return null;
  if (defined(o['data']) && (typeof o['data'] !== 'object' || Array.isArray(o['data']))) return null;
  return o as WireEvent;
}

/** Key a request by session and id: ids are unique per source, and its lifecycle stays in-session. */
export function requestKey(session: string | undefined, id: string): string {
  return `${session ?? ''}\u0000${id}`;
}

/** Capture level of an event with the AEP-0001 §5.1 default applied. */
export function captureOf(e: WireEvent): string {
  return typeof e.capture === 'string' ? e.capture : 'metadata';
}

/** The inbox state: dedupe set, attention requests, acks by command id, session timelines. */
export class InboxStore {
  /**
   * Dedupe keys `(source, id)` (AEP-0001 §7.4), oldest first. Bounded so a tab left open for
   * weeks does not grow without limit: past `seenLimit` the oldest key is forgotten (a
   * redelivery older than that many events would be folded again; replays are far shorter).
   */
  private readonly seen = new Set<string>();
  constructor(private readonly seenLimit = 200_000) {}
  readonly requests = new Map<string, RequestEntry>();
  /**
   * Lifecycle events seen before their request (cross-transport races), per request key. The
   * answered and terminal events are kept apart from `routed` so a flood of `attention.routed`
   * can never push a terminal out; the number of keys is bounded (oldest forgotten first).
   */
  private readonly early = new Map<string, { answered?: WireEvent; terminal?: WireEvent; routed: WireEvent[] }>();
  /** Commands (`control.*` imperatives) by id: who answered a request (`attention.answered.cause`). */
  readonly commands = new Map<string, WireEvent>();
  /** `control.accepted` / `control.rejected` by `cause` (= the command id, AEP-0004 §3). */
  readonly acks = new Map<string, WireEvent>();
  readonly sessions = new Map<string, SessionEntry>();
  private order = 0;
  private version = 0;
  private pendingCache: { version: number; list: RequestEntry[] } | null = null;
  private readonly listeners = new Set<() => void>();
  /** The one definition of "pending" (AEP-0002 §7): open from the request to its first terminal. */
  private readonly pendingFold = new AttentionFold();

  /** Monotonic counter bumped on every change; views compare it to decide whether to re-render. */
  get rev(): number {
    return this.version;
  }

  /** Register a change listener; returns the unsubscribe function. */
  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Tell listeners about changes; callers batch many `apply` calls before one `notify`. */
  notify(): void {
    for (const fn of this.listeners) fn();
  }

  /** Fold one event. Returns false for a duplicate (same source and id) or an unusable value. */
  apply(raw: unknown): boolean {
    const e = asWireEvent(raw);
    if (!e) return false;
    const dk = `${e.source}\u0000${e.id}`;
    if (this.seen.has(dk)) return false;
    this.seen.add(dk);
    if (this.seen.size > this.seenLimit) {
      const oldest = this.seen.values().next();
      if (!oldest.done) this.seen.delete(oldest.value);
    }
    this.version++;
    this.pendingFold.push(e as unknown as Parameters<AttentionFold['push']>[0]);
    this.addToTimeline(e);
    const t = e.type;
    if (t === 'attention.requested') this.addRequest(e);
    else if (t === 'attention.answered' || t === 'attention.resolved' || t === 'attention.timeout' || t === 'attention.routed') this.lifecycle(e);
    else if ((t === 'control.accepted' || t === 'control.rejected') && typeof e.cause === 'string') {
      if (!this.acks.has(e.cause)) this.acks.set(e.cause, e);
    } else if (t.startsWith('control.') || /^x\.[^.]+\.control\./.test(t)) {
      if (!this.commands.has(e.id)) {
        this.commands.set(e.id, e);
        if (this.commands.size > EARLY_LIMIT) {
          const oldest = this.commands.keys().next();
          if (!oldest.done) this.commands.delete(oldest.value);
        }
      }
    }
    return true;
  }

  private addToTimeline(e: WireEvent): void {
    if (typeof e.session !== 'string') return;
    let s = this.sessions.get(e.session);
    if (!s) {
      s = { session: e.session, agents: new Set(), events: [], lastAt: 0, openRuns: new Set(), ended: false };
      this.sessions.set(e.session, s);
    }
    if (typeof e.agent === 'string') s.agents.add(e.agent);
    const run = typeof e.run === 'string' ? e.run : '';
    if (e.type === 'run.started') s.openRuns.add(run);
    else if (e.type === 'run.finished' || e.type === 'run.failed' || e.type === 'run.cancelled') {
      s.openRuns.delete(run);
      s.lastRunEnd = e.type;
    } else if (e.type === 'session.ended') s.ended = true;
    s.events.push(e);
    if (s.events.length > TIMELINE_CAP) s.events.splice(0, s.events.length - TIMELINE_CAP);
    const at = typeof e.time === 'string' ? Date.parse(e.time) : NaN;
    if (!Number.isNaN(at) && at > s.lastAt) s.lastAt = at;
  }

  private addRequest(e: WireEvent): void {
    // A request outside a session cannot be answered (a command names its target session,
    // AEP-0004 §2) and is not in the client's fold either: timeline only.
    if (typeof e.session !== 'string') return;
    const key = requestKey(e.session, e.id);
    if (this.requests.has(key)) return;
    const entry: RequestEntry = {
      key,
      event: e,
      status: 'pending',
      routed: [],
      at: typeof e.time === 'string' ? Date.parse(e.time) : NaN,
      order: this.order++,
    };
    this.requests.set(key, entry);
    const early = this.early.get(key);
    if (early) {
      this.early.delete(key);
      for (const l of early.routed) this.fold(entry, l);
      if (early.answered) this.fold(entry, early.answered);
      if (early.terminal) this.fold(entry, early.terminal);
    }
  }

  private lifecycle(e: WireEvent): void {
    if (typeof e.subject !== 'string') return;
    const key = requestKey(e.session, e.subject);
    const entry = this.requests.get(key);
    if (entry) {
      this.fold(entry, e);
      return;
    }
    let early = this.early.get(key);
    if (!early) {
      early = { routed: [] };
      this.early.set(key, early);
      if (this.early.size > EARLY_LIMIT) {
        const oldest = this.early.keys().next();
        if (!oldest.done) this.early.delete(oldest.value);
      }
    }
    if (e.type === 'attention.routed') {
      if (early.routed.length < 16) early.routed.push(e);
    } else if (e.type === 'attention.answered') early.answered ??= e;
    else early.terminal ??= e; // the first terminal wins (AEP-0002 §7.2)
  }

  private fold(entry: RequestEntry, e: WireEvent): void {
    if (e.type === 'attention.routed') {
      entry.routed.push(e);
      return;
    }
    if (entry.status === 'resolved' || entry.status === 'timeout') return; // exactly one terminal (§7.2)
    if (e.type === 'attention.answered') {
      if (entry.answered) return; // one answer per request; a second is ignored
      entry.answered = e;
      entry.status = 'answered';
    } else if (e.type === 'attention.resolved') {
      entry.terminal = e;
      entry.status = 'resolved';
    } else if (e.type === 'attention.timeout') {
      entry.terminal = e;
      entry.status = 'timeout';
    }
  }

  /**
   * Open requests (no terminal event seen: `pending` or `answered`) across all agents and
   * sessions, as the client's `AttentionFold` lists them, oldest first (who has waited longest).
   */
  pending(): RequestEntry[] {
    if (this.pendingCache && this.pendingCache.version === this.version) return this.pendingCache.list;
    const list: RequestEntry[] = [];
    for (const p of this.pendingFold.pending()) {
      const r = this.requests.get(requestKey(p.session, p.id));
      if (r) list.push(r);
    }
    list.sort((a, b) => {
      const ta = Number.isNaN(a.at) ? Infinity : a.at;
      const tb = Number.isNaN(b.at) ? Infinity : b.at;
      return ta !== tb ? ta - tb : a.order - b.order;
    });
    this.pendingCache = { version: this.version, list };
    return list;
  }

  /** Find a request by its id (any session); the first match in arrival order. */
  findRequest(id: string, session?: string): RequestEntry | undefined {
    if (session !== undefined) return this.requests.get(requestKey(session, id));
    for (const r of this.requests.values()) if (r.event.id === id) return r;
    return undefined;
  }
}
