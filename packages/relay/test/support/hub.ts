// Test support for the fan-out hub at unit level (mutation-hub*.test.ts): a consumer sink whose
// socket queue the test controls, and Events / buffer entries in the shapes the relay hands the
// hub (`Outgoing`, `Entry`). Everything else is the real thing: `Hub`, `Subscription`,
// `ReplayBuffer` through its public methods.
import type { CaptureLevel } from '@aep/protocol';
import type { Entry } from '../../src/buffer.js';
import { Outgoing, type ConsumerSink, type Subscription, type SubscriptionSpec } from '../../src/hub.js';

/** One thing a sink was asked to write, in order. */
export type Written =
  | { kind: 'event'; sub: string; text: string; ceiling: CaptureLevel | undefined }
  | { kind: 'marker'; sub: string; session: string; earliest: { epoch: number; seq: number } };

/**
 * A consumer connection. `queued` is what its socket still holds (`buffered()`); with `grows`
 * every delivery adds its bytes to it, as a socket nobody reads would, and `read()` empties it
 * and wakes a replay waiting in `drained()`. `onDeliver` runs after each delivery is recorded.
 */
export class HubSink implements ConsumerSink {
  closed = false;
  queued = 0;
  readonly written: Written[] = [];
  readonly done: string[] = [];
  slowCalls = 0;
  drains = 0;
  /** The highest `queued` seen just before a delivery was written. */
  maxBeforeWrite = 0;
  onDeliver: ((o: Outgoing, sub: Subscription) => void) | undefined;
  private waiting: Array<() => void> = [];
  constructor(
    readonly kind: 'sse' | 'ws' = 'sse',
    readonly grows = false,
  ) {}
  buffered(): number {
    return this.queued;
  }
  deliver(sub: Subscription, o: Outgoing, ceiling: CaptureLevel | undefined): void {
    if (this.queued > this.maxBeforeWrite) this.maxBeforeWrite = this.queued;
    const text = o.render(ceiling);
    this.written.push({ kind: 'event', sub: sub.id, text, ceiling });
    if (this.grows) this.queued += text.length;
    this.onDeliver?.(o, sub);
  }
  marker(sub: Subscription, session: string, earliest: { epoch: number; seq: number }): void {
    this.written.push({ kind: 'marker', sub: sub.id, session, earliest });
  }
  replayDone(sub: Subscription): void {
    this.done.push(sub.id);
  }
  disconnectSlow(): void {
    this.slowCalls++;
    this.closed = true;
  }
  /** What a binding's `drained()` does: resolves once the socket has room again (or is gone). */
  drained = (): Promise<void> => {
    this.drains++;
    if (this.closed || this.queued === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push(resolve));
  };
  /** The consumer reads everything queued. */
  read(): void {
    this.queued = 0;
    const w = this.waiting;
    this.waiting = [];
    for (const r of w) r();
  }
  /** Events delivered (texts parsed). */
  events(): Array<Record<string, unknown>> {
    return this.written.flatMap((w) => (w.kind === 'event' ? [JSON.parse(w.text) as Record<string, unknown>] : []));
  }
  /** The `seq` of every Event delivered, in order. */
  seqs(): number[] {
    return this.events().map((e) => e['seq'] as number);
  }
}

let n = 0;
/** The received text of one session Event. */
export function eventText(session: string, seq: number, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    aep: '0.1',
    id: `hub-${++n}`,
    type: 'progress.status',
    time: '2026-01-01T00:00:00Z',
    source: 'aep://t',
    agent: 'a',
    session,
    seq,
    ...extra,
  });
}

/** A live Event as core.ts publishes it, with its severity rank (-1: unknown, read from the Event). */
export function live(session: string, seq: number, sevRank: number, extra: Record<string, unknown> = {}): Outgoing {
  return new Outgoing(eventText(session, seq, extra), 'progress.status', session, [0, seq, 0], true, 0, sevRank);
}

let rowid = 0;
/** A buffer entry as ingest admits it (`rawRank` 0: every ceiling receives the bytes unchanged). */
export function entry(session: string, seq: number, rawRank = 0, extra: Record<string, unknown> = {}): Entry {
  const raw = eventText(session, seq, extra);
  return {
    rowid: ++rowid,
    source: 'aep://t',
    id: `e-${rowid}`,
    session,
    pos: [0, seq, 0],
    positioned: true,
    type: 'progress.status',
    raw,
    bytes: raw.length,
    rawRank,
  };
}

export const spec = (s: Partial<SubscriptionSpec> = {}): SubscriptionSpec => ({ match: null, ceiling: undefined, from: null, ...s });

/** Bytes a queued Event is accounted for while its subscription replays (hub.ts `queuedSize`). */
export const queuedSize = (o: Outgoing): number => o.raw.length + 64;

/** Lets everything already scheduled (timers' immediates, I/O) run. */
export const turn = (): Promise<void> => new Promise((r) => setImmediate(r));
