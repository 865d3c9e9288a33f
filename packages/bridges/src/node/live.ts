// The live bridge loop shared by `aep otlp --endpoint` and `aep ce --sink` (AEP-0005 §3.5:
// subscribe with attr-match, batch, send). An ordinary AEP consumer (AEP-0005 intro): it
// subscribes at its capture ceiling (the relay down-levels, AEP-0003 §6.4) and down-levels again
// itself before mapping, so nothing above the ceiling leaves even through a relay that ignores it.
//
// Reliability (issue 15): batches are retried with exponential backoff; the state file records
// what the receiver acknowledged after every batch, so a restart resumes without duplicates or
// gaps (every subscription starts with from=all and skips what the state says is done, as
// `aep tail` does). Memory stays bounded while the receiver is down: past `maxQueue` events (or
// `maxQueueBytes`) the bridge stops reading — it closes the subscription and drops what arrives —
// and subscribes again from the relay's buffer once the queue has drained to half.
import { downlevel } from '@aep/protocol';
import type { CaptureLevel } from '@aep/protocol';
import { subscribe } from '@aep/client/node';
import type { Subscription } from '@aep/client/node';
import { BridgeNodeError } from './errors.js';
import { displayUrl } from './http.js';
import type { Sender } from './http.js';
import { markOf } from './state.js';
import type { EventMark, ResumeState } from './state.js';

/** What the mapping of one event gives: an item to send, or `null` (nothing to send), and why not. */
export interface Mapped<T> {
  item: T | null;
  /** A rule-naming reason when the event could not be mapped (logged; the event counts as done). */
  problem?: string;
}

/** Options of {@link runLiveBridge}. */
export interface LiveBridgeOptions<T> {
  /** Relay base URL. */
  relay: string;
  /** Relay bearer token (never logged). */
  token?: string;
  /** attr-match filter of the subscription (operator-scoped, AEP-0005 §3.5). */
  filter?: Record<string, unknown>;
  /** Capture ceiling of the subscription, enforced again locally (AEP-0003 §6.4). */
  capture: CaptureLevel;
  /** Maps one (down-levelled) event. */
  map: (event: Record<string, unknown>) => Mapped<T>;
  sender: Sender<T>;
  state: ResumeState;
  /** Items per request; default 256. */
  batchSize?: number;
  /** Longest wait for a batch to fill; default 200 ms. */
  flushMs?: number;
  /**
   * Events held unacknowledged before reading pauses; default 10 000. Every resume re-reads the
   * relay's buffer (from=all) and skips what is done, so a small bound makes a long catch-up cost
   * about buffer² / maxQueue reads: keep it well above the batch size.
   */
  maxQueue?: number;
  /** Bytes of held events before reading pauses; default 32 MiB. */
  maxQueueBytes?: number;
  /** Retry backoff: first delay, cap (ms); defaults 250, 30 000. */
  retry?: { initialMs?: number; maxMs?: number };
  /** SSE (default) or WebSocket subscription. */
  transport?: 'sse' | 'ws';
  /** Operational log lines (each starts with a code). */
  log: (line: string) => void;
  /** Stops the bridge gracefully: the request in flight finishes and is recorded, then it resolves. */
  signal?: AbortSignal;
}

/** Counters of a run. */
export interface LiveBridgeStats {
  /** Events delivered by the relay (before skipping). */
  received: number;
  /** Events skipped as already acknowledged or already queued. */
  skipped: number;
  /** Events acknowledged (sent, or nothing to send). */
  acknowledged: number;
  /** Items sent and accepted by the receiver. */
  delivered: number;
  /** Items the receiver refused for good (dropped, logged). */
  rejected: number;
  /** Events that could not be mapped (logged, nothing sent). */
  unmappable: number;
  /** Times reading was paused because the queue was full. */
  pauses: number;
  /** Failed attempts that were retried. */
  retries: number;
  /** Largest number of events held at once. */
  maxQueued: number;
}

interface Entry<T> {
  mark: EventMark;
  dk: string;
  item: T | null;
  bytes: number;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

/**
 * Runs a live bridge until `signal` aborts (resolves with the counters) or a fatal condition
 * (rejects with `BridgeNodeError`: `AEP_BRIDGE_REFUSED` when the receiver refuses the bridge
 * itself, `AEP_BRIDGE_RELAY` when the relay refuses the subscription, `AEP_BRIDGE_STATE`).
 */
export function runLiveBridge<T>(o: LiveBridgeOptions<T>): Promise<LiveBridgeStats> {
  return new Runner(o).run();
}

class Runner<T> {
  private readonly batchSize: number;
  private readonly flushMs: number;
  private readonly maxQueue: number;
  private readonly maxBytes: number;
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly queue: Entry<T>[] = [];
  private readonly pending = new Set<string>();
  private bytes = 0;
  private paused = false;
  private sub: Subscription | null = null;
  private wakeUp: (() => void) | null = null;
  /** What wakes the sending loop: any new event (idle), or a full batch (filling). */
  private wakeOn: 'any' | 'full' | null = null;
  private readonly stop = new AbortController();
  private fatal: BridgeNodeError | null = null;
  private lastRelayError = '';
  /** True while the receiver's last answer was a failure (for log lines). */
  private failing = false;
  readonly stats: LiveBridgeStats = { received: 0, skipped: 0, acknowledged: 0, delivered: 0, rejected: 0, unmappable: 0, pauses: 0, retries: 0, maxQueued: 0 };

  constructor(private readonly o: LiveBridgeOptions<T>) {
    const pos = (name: string, v: number | undefined, d: number) => {
      const n = v ?? d;
      if (!Number.isSafeInteger(n) || n <= 0) throw new BridgeNodeError('AEP_BRIDGE_OPTION', `${name} must be a positive integer, got ${String(v)}`);
      return n;
    };
    this.batchSize = pos('batchSize', o.batchSize, 256);
    this.flushMs = pos('flushMs', o.flushMs, 200);
    this.maxQueue = Math.max(pos('maxQueue', o.maxQueue, 10_000), this.batchSize);
    this.maxBytes = pos('maxQueueBytes', o.maxQueueBytes, 32 << 20);
    this.initialMs = pos('retry.initialMs', o.retry?.initialMs, 250);
    this.maxMs = Math.max(pos('retry.maxMs', o.retry?.maxMs, 30_000), this.initialMs);
  }

  async run(): Promise<LiveBridgeStats> {
    const onAbort = () => this.halt();
    this.o.signal?.addEventListener('abort', onAbort, { once: true });
    if (this.o.signal?.aborted) this.halt();
    try {
      this.subscribe();
      await this.loop();
      if (this.fatal) throw this.fatal;
      return this.stats;
    } finally {
      this.o.signal?.removeEventListener('abort', onAbort);
      this.sub?.close();
      this.sub = null;
      this.o.state.flush();
    }
  }

  private halt(): void {
    this.stop.abort();
    this.sub?.close();
    this.sub = null;
    this.wake();
  }

  private wake(): void {
    const w = this.wakeUp;
    this.wakeUp = null;
    this.wakeOn = null;
    w?.();
  }

  private subscribe(): void {
    if (this.stop.signal.aborted) return;
    const sub = subscribe(
      {
        url: this.o.relay,
        ...(this.o.token ? { token: this.o.token } : {}),
        ...(this.o.filter ? { filter: this.o.filter } : {}),
        ceiling: this.o.capture,
        from: 'all',
        transport: this.o.transport ?? 'sse',
        reconnect: { maxAttempts: Infinity },
        onError: (err) => {
          // One line per distinct cause, not one per attempt.
          if (err.message !== this.lastRelayError) {
            this.lastRelayError = err.message;
            this.o.log(`AEP_BRIDGE_RELAY: ${err.message}; reconnecting`);
          }
        },
        onState: (s) => {
          if (s === 'open' && this.lastRelayError !== '') {
            this.lastRelayError = '';
            this.o.log(`AEP_BRIDGE_RELAY: connected to ${displayUrl(this.o.relay)} again`);
          }
        },
      },
      (e, raw) => this.onEvent(e as unknown as Record<string, unknown>, raw),
    );
    this.sub = sub;
    sub.done.catch((err: unknown) => {
      if (this.sub !== sub || this.stop.signal.aborted) return;
      this.fatal = new BridgeNodeError('AEP_BRIDGE_RELAY', `the relay refused the subscription: ${err instanceof Error ? err.message : String(err)}`);
      this.halt();
    });
  }

  private onEvent(e: Record<string, unknown>, raw: string): void {
    if (this.paused || this.stop.signal.aborted) return; // read again from the relay on resume
    this.stats.received++;
    const mark = markOf(e);
    const dk = `${String(e['source'])}\n${String(e['id'])}`;
    if (this.o.state.isDone(mark) || this.pending.has(dk)) {
      this.stats.skipped++;
      return;
    }
    if (this.queue.length >= this.maxQueue || (this.queue.length > 0 && this.bytes + raw.length > this.maxBytes)) {
      this.pause();
      return;
    }
    // Defence in depth: the relay already applied the ceiling (AEP-0003 §6.4); a hop may only lower.
    const safe = downlevel(e, this.o.capture);
    let m: Mapped<T>;
    try {
      m = this.o.map(safe);
    } catch (err) {
      m = { item: null, problem: `mapping failed: ${err instanceof Error ? err.message : String(err)}` };
    }
    if (m.problem !== undefined) {
      this.stats.unmappable++;
      this.o.log(`AEP_BRIDGE_UNMAPPABLE: event ${JSON.stringify(String(e['id']).slice(0, 64))}: ${m.problem}`);
    }
    this.queue.push({ mark, dk, item: m.item, bytes: raw.length });
    this.pending.add(dk);
    this.bytes += raw.length;
    if (this.queue.length > this.stats.maxQueued) this.stats.maxQueued = this.queue.length;
    if (this.wakeOn === 'any' || (this.wakeOn === 'full' && this.queue.length >= this.batchSize)) this.wake();
  }

  private pause(): void {
    this.paused = true;
    this.stats.pauses++;
    const why = this.failing ? `${this.o.sender.target} is not accepting` : `the relay sends faster than ${this.o.sender.target} accepts`;
    this.o.log(
      `AEP_BRIDGE_PAUSED: ${this.queue.length} events held (limit ${this.maxQueue} events, ${this.maxBytes} bytes) while ${why}: reading from the relay paused; it continues from the last acknowledged position`,
    );
    const s = this.sub;
    this.sub = null;
    s?.close();
  }

  private maybeResume(): void {
    if (!this.paused || this.stop.signal.aborted) return;
    if (this.queue.length > this.maxQueue / 2 || this.bytes > this.maxBytes / 2) return;
    this.paused = false;
    this.o.log(`AEP_BRIDGE_RESUMED: ${this.o.sender.target} is accepting again: reading from the relay (from its buffer, skipping what was acknowledged)`);
    this.subscribe();
  }

  /** Waits for the first event (`ms` null) or for a full batch, at most `ms`. */
  private waitForWork(ms: number | null): Promise<void> {
    return new Promise<void>((resolve) => {
      let t: ReturnType<typeof setTimeout> | undefined;
      this.wakeOn = ms === null ? 'any' : 'full';
      this.wakeUp = () => {
        if (t) clearTimeout(t);
        resolve();
      };
      if (ms !== null)
        t = setTimeout(() => {
          this.wakeUp = null;
          this.wakeOn = null;
          resolve();
        }, ms);
    });
  }

  private async loop(): Promise<void> {
    let attempt = 0;
    while (!this.stop.signal.aborted) {
      if (this.queue.length === 0) {
        this.maybeResume();
        await this.waitForWork(null);
        continue;
      }
      if (this.queue.length < this.batchSize && !this.paused && attempt === 0) {
        await this.waitForWork(this.flushMs);
        if (this.stop.signal.aborted) break;
      }
      const batch = this.queue.slice(0, this.batchSize);
      const items: T[] = [];
      for (const en of batch) if (en.item !== null) items.push(en.item);
      const r = items.length > 0 ? await this.o.sender.send(items) : { done: 0, rejected: 0 };
      // Acknowledge the leading entries whose items are done (entries with nothing to send go with them).
      let itemsLeft = r.done;
      let n = 0;
      for (const en of batch) {
        if (en.item !== null) {
          if (itemsLeft === 0) break;
          itemsLeft--;
        }
        n++;
      }
      if (r.failure === undefined) n = batch.length;
      this.acknowledge(n, r.done - r.rejected, r.rejected);
      if (r.rejected > 0)
        this.o.log(`AEP_BRIDGE_REJECTED: ${r.rejected} item(s) refused for good and dropped: ${r.rejectReason ?? 'refused'} (${this.stats.rejected} so far)`);
      if (r.failure?.kind === 'fatal') {
        this.fatal = new BridgeNodeError('AEP_BRIDGE_REFUSED', r.failure.message);
        this.halt();
        break;
      }
      this.failing = r.failure !== undefined;
      if (r.failure?.kind === 'retry') {
        this.stats.retries++;
        const base = Math.min(this.maxMs, this.initialMs * 2 ** Math.min(attempt, 20));
        const delay = Math.max(Math.round(base * (0.5 + Math.random() / 2)), r.failure.retryAfterMs ?? 0);
        attempt++;
        this.o.log(`AEP_BRIDGE_RETRY: ${r.failure.message}; attempt ${attempt}, next in ${delay} ms (${this.queue.length} events held)`);
        await sleep(delay, this.stop.signal);
        continue;
      }
      if (attempt > 0) this.o.log(`AEP_BRIDGE_DELIVERED: ${this.o.sender.target} accepted again after ${attempt} failed attempt(s)`);
      attempt = 0;
      this.maybeResume();
    }
  }

  private acknowledge(n: number, delivered: number, rejected: number): void {
    if (n === 0 && delivered === 0 && rejected === 0) return;
    const done = this.queue.splice(0, n);
    for (const en of done) {
      this.o.state.ack(en.mark);
      this.pending.delete(en.dk);
      this.bytes -= en.bytes;
    }
    this.stats.acknowledged += done.length;
    this.stats.delivered += delivered;
    this.stats.rejected += rejected;
    this.o.state.flush(); // after each acknowledged batch: a restart resumes exactly here
  }
}
