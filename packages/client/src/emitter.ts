// Emitter connection over the WebSocket binding (AEP-0003 §3.5, §4; AEP-0004 §5.3). Node only
// (the `@aep/client/node` entry): durable epochs use `node:fs`, the default socket is `ws`.
import { homedir } from 'node:os';
import {
  captureRank,
  scopeClass,
  encodeFrame,
  generateClaim,
  helloFrame,
  isRosterReply,
  parseSocketMessage,
  pingFrame,
  pongFrame,
  redactUrl,
  rosterRequestFrame,
} from '@aep/protocol';
import type { CaptureLevel, OfflineRequest, RedactOptions } from '@aep/protocol';
import { createEmitter, downlevel, isCommandType } from './proto.js';
import type { EventBuilder } from './proto.js';
import { allocateEpoch } from './epoch.js';
import { ClientError, isRefusalStatus, refusedError } from './errors.js';
import { ackData, clampCapture } from './build.js';
import { hostName } from './host.js';
import { redactPayload } from './redaction.js';
import { standardSocketFactory } from './socket.js';
import type { ClientSocket, SocketFactory } from './socket.js';
import { nodeSocketFactory } from './socket-node.js';
import type { CommandDecision, CommandHandler, EmitAttributes, EmitterOptions, EmitterStats, WireEvent } from './types.js';
import { BoundedMap, backoffDelay, defaultSource } from './util.js';

interface Pending {
  raw: string;
  severity: string;
  session: string | undefined;
}
type DedupeEntry = { state: 'deciding' } | { state: 'acked'; raw: string };

/** Dedupe memory of commands (and their recorded acks), AEP-0004 §3 "Retention". */
const DEDUPE_LIMIT = 10_000;
const RESEND_WINDOW_MS = 2_000;
const PING_INTERVAL_MS = 30_000;
const LIVENESS_TIMEOUT_MS = 90_000;
const RESEND_MAX = 256;
/** Offline requests remembered until this connection owns their session (contract C4). */
const OFFLINE_LIMIT = 10_000;
/** Request ids this connection raised / sessions it emitted into (bounded memories). */
const OWN_LIMIT = 100_000;

/**
 * One duplex connection to a relay as an emitter: sends `hello` (role `both`, identity,
 * `capabilities.control`, and a random `claim` kept for the life of the instance, contract C3),
 * assigns `seq` per session and a monotonic `epoch`, claims sessions by emitting into them (and
 * re-claims them after a reconnect), reconnects with backoff (never after HTTP 401/403: the
 * token is refused, `AEP_CLIENT_REFUSED`), buffers while disconnected (bounded, drops
 * debug/info first, counted), runs the §9.4 pipeline on everything it sends at `redacted`,
 * dismisses the offline requests of its own sessions it did not raise (contract C4), and
 * receives commands (dedupe on `(source, id)`, one recorded ack per command, byte-identical
 * re-ack).
 */
export class EmitterConnection {
  /** The epoch used for every session of this connection (AEP-0001 §7.2). */
  readonly epoch: number;
  /** The capture ceiling applied to every emitted event. */
  readonly ceiling: CaptureLevel;
  private readonly baseSource: string;
  /** One builder per source: `{source}/session/{s}` per session, the base source for agent-scoped events. */
  private readonly builders = new Map<string, EventBuilder>();
  /** Last raw event per live session, re-sent after a reconnect to re-claim it (AEP-0003 §7.2 [choice]). */
  private readonly claims = new Map<string, string>();
  /**
   * Events written in the last {@link RESEND_WINDOW_MS} (at most {@link RESEND_MAX}). The WS
   * binding has no per-event ack, so frames in flight when a socket dies may be lost; they are
   * re-sent after a reconnect (the relay dedupes on `(source, id)`, AEP-0001 §7.4).
   */
  private readonly recent: { raw: string; at: number; session: string | undefined }[] = [];
  private readonly queue: Pending[] = [];
  private readonly handlers = new Map<string, CommandHandler>();
  private readonly dedupe = new BoundedMap<string, DedupeEntry>(DEDUPE_LIMIT);
  private ws: ClientSocket | undefined;
  private readonly factory: SocketFactory;
  /** Ownership secret presented in every `hello` (contract C3). Never logged, never in stats. */
  readonly #claim: string = generateClaim();
  private readonly redactOptions: RedactOptions;
  /** Why the relay will not take this connection (HTTP 401/403): no more reconnects. */
  private refusal: ClientError | undefined;
  private rosterCounter = 0;
  private rosterId: string | undefined;
  /** Offline requests (contract C4) of our source not yet dismissed, by request id (bounded). */
  private readonly offline = new Map<string, OfflineRequest>();
  /** Sessions this connection emitted sequenced events into. */
  private readonly owned = new BoundedMap<string, true>(OWN_LIMIT);
  /** `attention.requested` ids this connection raised (never dismissed as offline). */
  private readonly raised = new BoundedMap<string, true>(OWN_LIMIT);
  private readonly dismissedIds = new BoundedMap<string, true>(OWN_LIMIT);
  private closeWaiter: (() => void) | undefined;
  private ready = false;
  private readonly stateListeners = new Set<(connected: boolean) => void>();
  private closed = false;
  private attempts = 0;
  private everConnected = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly counters = { dropped: 0, reconnects: 0, commands: 0, dismissed: 0 };
  private readonly helloWaiters: { resolve: () => void; reject: (e: Error) => void }[] = [];
  private readonly drainWaiters: (() => void)[] = [];

  constructor(readonly options: EmitterOptions) {
    if (!options.agent) throw new ClientError('AEP_CLIENT_OPTION', 'option "agent" is required (AEP-0003 §4: identity.agent)');
    this.epoch = allocateEpoch(options.agent, options.stateDir);
    this.ceiling = options.capture ?? 'metadata';
    this.baseSource = options.source ?? defaultSource(options.agent, hostName());
    this.redactOptions = { home: homedir(), ...(options.redact ?? {}) };
    this.factory = options.socketFactory ?? (options.WebSocket ? standardSocketFactory(options.WebSocket) : nodeSocketFactory);
    this.open();
  }

  /**
   * Open the connection and resolve once the relay's `hello` arrived; rejects with
   * `AEP_CLIENT_REFUSED` at once when the relay refuses the token (HTTP 401/403),
   * `AEP_CLIENT_HELLO` when it refuses the hello, or `AEP_CLIENT_UNREACHABLE` after `timeoutMs`
   * (default 5 000); keeps no socket behind.
   */
  static async connect(options: EmitterOptions & { timeoutMs?: number }): Promise<EmitterConnection> {
    const conn = new EmitterConnection(options);
    try {
      await conn.waitReady(options.timeoutMs ?? 5_000);
    } catch (err) {
      await conn.close(0);
      throw err;
    }
    return conn;
  }

  /** Resolves when the relay's `hello` has been received (now or after a reconnect). */
  waitReady(timeoutMs = 5_000): Promise<void> {
    if (this.ready) return Promise.resolve();
    if (this.refusal) return Promise.reject(this.refusal);
    return new Promise<void>((resolve, reject) => {
      const w = {
        resolve: () => {
          clearTimeout(t);
          resolve();
        },
        reject: (e: Error) => {
          clearTimeout(t);
          reject(e);
        },
      };
      const t = setTimeout(() => {
        const i = this.helloWaiters.indexOf(w);
        if (i >= 0) this.helloWaiters.splice(i, 1);
        reject(new ClientError('AEP_CLIENT_UNREACHABLE', `relay at ${redactUrl(this.options.url)} did not complete hello within ${timeoutMs} ms`));
      }, timeoutMs);
      this.helloWaiters.push(w);
    });
  }

  /** Source URI of a session's events (`{source}/session/{session}`), or the agent's for agent-scoped ones. */
  sourceFor(session: string | undefined): string {
    return session === undefined ? this.baseSource : `${this.baseSource}/session/${encodeURIComponent(session)}`;
  }

  /**
   * Build, sequence and send one event (buffered while disconnected; never blocks). `session`
   * is `null` for agent-scoped types (`agent.*`). Returns the event as sent (after the capture
   * ceiling was applied).
   */
  emit(session: string | null, type: string, data?: Record<string, unknown>, attrs?: EmitAttributes): WireEvent {
    return this.emitRaw(session, type, data, attrs).event;
  }

  /** Same as `emit`, also returning the exact serialized bytes sent. */
  emitRaw(session: string | null, type: string, data?: Record<string, unknown>, attrs: EmitAttributes = {}): { event: WireEvent; raw: string } {
    if (this.closed) throw new ClientError('AEP_CLIENT_CLOSED', 'emit after close()');
    const agentScoped = scopeClass(type) === 'agent';
    const s = agentScoped ? undefined : (session ?? undefined);
    if (!agentScoped && s === undefined) throw new ClientError('AEP_CLIENT_OPTION', `type ${type} is session-scoped: a session is required (AEP-0001 §5.2)`);
    const source = this.sourceFor(s);
    let builder = this.builders.get(source);
    if (!builder) {
      builder = createEmitter({ source, agent: this.options.agent, epoch: this.epoch });
      this.builders.set(source, builder);
    }
    const requested = attrs.capture ?? 'metadata';
    const capture = clampCapture(requested, this.ceiling);
    // At `redacted` this connection is the redacting emitter (AEP-0003 §9.4, §9.5): the §9.4
    // pipeline runs on every member the capture tree puts at `redacted` (and on the [metadata*]
    // text members and unannotated ones), `full` members are dropped, whatever the caller
    // passed, so nothing built on this SDK claims `redacted` for unredacted text (issue 12).
    // Below `redacted`: build at the requested level, then down-level (AEP-0001 §8.2(b)).
    const redacting = capture === 'redacted' && data !== undefined;
    const payload = redacting ? redactPayload(type, data, this.redactOptions) : data;
    const buildAt = redacting ? capture : requested;
    let event = builder.build({
      type,
      ...(s !== undefined ? { session: s } : {}),
      ...(payload !== undefined && requested !== 'none' ? { data: payload } : {}),
      ...(attrs.subject !== undefined ? { subject: attrs.subject } : {}),
      ...(attrs.run !== undefined ? { run: attrs.run } : {}),
      ...(attrs.step !== undefined ? { step: attrs.step } : {}),
      ...(attrs.cause !== undefined ? { cause: attrs.cause } : {}),
      ...(attrs.traceparent !== undefined ? { traceparent: attrs.traceparent } : {}),
      ...(attrs.severity !== undefined ? { severity: attrs.severity } : {}),
      capture: buildAt,
      ...(attrs.extensions ? { extensions: attrs.extensions } : {}),
    }) as unknown as WireEvent;
    if (capture !== buildAt) event = downlevel(event, capture);
    const raw = JSON.stringify(event);
    let newlyOwned = false;
    if (s !== undefined && typeof event.seq === 'number') {
      // Only sequenced events claim a session (AEP-0003 §7.2).
      if (type === 'session.ended') this.claims.delete(s);
      else this.claims.set(s, raw);
      if (!this.owned.has(s)) {
        this.owned.set(s, true);
        newlyOwned = true;
      }
    }
    if (type === 'attention.requested') this.raised.set(event.id, true);
    this.enqueue({ raw, severity: event.severity ?? 'info', session: s });
    if (newlyOwned && s !== undefined) this.dismissOfflineOf(s);
    return { event, raw };
  }

  /**
   * Register the handler for a command type (one per type; later calls replace). Types not in
   * `options.control.accepts`, or with no handler, are nacked `unsupported` (AEP-0004 §4.2).
   * Returns an unregister function.
   */
  /**
   * Connection state changes: `true` when the relay's `hello` arrived (first connect or a
   * reconnect), `false` when the socket went away or the connection was closed. Returns a
   * function that removes the listener. A throwing listener is logged, never propagated.
   */
  onState(listener: (connected: boolean) => void): () => void {
    this.stateListeners.add(listener);
    return () => {
      this.stateListeners.delete(listener);
    };
  }

  private setReady(ready: boolean): void {
    if (this.ready === ready) return;
    this.ready = ready;
    for (const l of [...this.stateListeners]) {
      try {
        l(ready);
      } catch (err) {
        this.log(`emitter: state listener failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }

  onCommand(type: string, handler: CommandHandler): () => void {
    this.handlers.set(type, handler);
    return () => {
      if (this.handlers.get(type) === handler) this.handlers.delete(type);
    };
  }

  /** Resolves true when everything buffered has been written, false after `timeoutMs` (default 5 000). */
  flush(timeoutMs = 5_000): Promise<boolean> {
    if (this.queue.length === 0 && (!this.ws || this.ws.bufferedAmount === 0)) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const start = Date.now();
      const tick = () => {
        if (this.queue.length === 0 && (!this.ws || this.ws.bufferedAmount === 0)) return resolve(true);
        if (Date.now() - start >= timeoutMs) return resolve(false);
        setTimeout(tick, 5);
      };
      tick();
    });
  }

  /** Counters. */
  stats(): EmitterStats {
    return { connected: this.ready, buffered: this.queue.length, ...this.counters };
  }

  /** Flush (bounded by `flushMs`, default 2 000), then close. Idempotent. */
  async close(flushMs = 2_000): Promise<void> {
    if (this.closed) return;
    if (flushMs > 0 && this.ready) await this.flush(flushMs);
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    for (const w of this.helloWaiters.splice(0)) w.reject(new ClientError('AEP_CLIENT_CLOSED', 'connection closed'));
    for (const d of this.drainWaiters.splice(0)) d();
    const ws = this.ws;
    this.ws = undefined;
    this.setReady(false);
    if (!ws) return;
    if (!ws.isOpen) {
      ws.terminate();
      return;
    }
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        ws.terminate();
        resolve();
      }, 1_000);
      this.closeWaiter = () => {
        clearTimeout(t);
        resolve();
      };
      ws.close(1000);
    });
  }

  // ---- internals -------------------------------------------------------------------------

  private log(line: string): void {
    this.options.log?.(line);
  }

  private open(): void {
    if (this.closed || this.refusal) return;
    const where = `relay at ${redactUrl(this.options.url)}`;
    let lastHeard = Date.now();
    let refused: number | undefined;
    const ws: ClientSocket = this.factory(
      { url: this.options.url, ...(this.options.token ? { token: this.options.token } : {}) },
      {
        open: () => {
          lastHeard = Date.now();
          const control = this.options.control;
          // Role `both`: the connection emits and also asks for the roster (AEP-0003 §4.1 rule 2:
          // an emitter-role connection may not), to find its own offline requests (contract C4).
          ws.send(
            encodeFrame(
              helloFrame({
                role: 'both',
                identity: { agent: this.options.agent, instance: this.options.instance ?? `${hostName()}/${process.pid}` },
                capabilities: {
                  capture: captureLevelsUpTo(this.ceiling),
                  ...(this.options.emits ? { emits: this.options.emits } : {}),
                  ...(control ? { control: { accepts: control.accepts, ack_window_ms: control.ackWindowMs ?? 10_000 } } : {}),
                },
                claim: this.#claim,
              }),
            ),
          );
        },
        message: (text) => {
          lastHeard = Date.now();
          if (this.ws === ws) this.onFrame(text);
        },
        refused: (status) => {
          refused = status;
          if (isRefusalStatus(status)) {
            // A refused token will not become right by retrying (issue 14): stop, say it once.
            this.refusal = refusedError(`${where} refused the emitter connection`, status);
            this.log(`emitter: ${this.refusal.message}; not retrying`);
            for (const w of this.helloWaiters.splice(0)) w.reject(this.refusal);
          } else {
            this.log(`emitter: ${where} refused the socket: HTTP ${status}`);
          }
        },
        error: (message) => {
          if (refused === undefined) this.log(`emitter: socket error: ${message}`);
        },
        close: () => {
          clearInterval(live);
          this.closeWaiter?.();
          this.closeWaiter = undefined;
          if (this.ws !== ws) return;
          this.ws = undefined;
          this.setReady(false);
          this.scheduleReconnect();
        },
      },
    );
    this.ws = ws;
    // Liveness (AEP-0003 §3.5.5: ping every 30 s, give up after 90 s of silence) so a half-open
    // socket is noticed and the emitter reconnects instead of buffering into the void.
    const live = setInterval(() => {
      if (Date.now() - lastHeard > LIVENESS_TIMEOUT_MS) {
        this.log('emitter: relay silent; reconnecting');
        ws.terminate();
        return;
      }
      if (ws.isOpen && this.ready) ws.send(encodeFrame(pingFrame()));
    }, PING_INTERVAL_MS);
    live.unref?.();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.refusal) return;
    const max = this.options.reconnect?.maxAttempts ?? Infinity;
    if (this.attempts >= max) {
      for (const w of this.helloWaiters.splice(0)) w.reject(new ClientError('AEP_CLIENT_UNREACHABLE', `gave up after ${this.attempts} attempts`));
      return;
    }
    const delay = backoffDelay(this.attempts++, this.options.reconnect);
    this.timer = setTimeout(() => this.open(), delay);
    this.timer.unref?.();
  }

  private onFrame(text: string): void {
    const m = parseSocketMessage(text);
    if (m.kind === 'event') {
      // An Event (AEP-0003 §2). Emitters receive commands this way (AEP-0004 §5.2 step 6).
      if (isCommandType(m.type)) void this.onCommandEvent(m.event as unknown as WireEvent, text);
      return;
    }
    if (m.kind !== 'frame') return; // unknown frames are ignored (AEP-0003 §2)
    const f = m.frame;
    switch (f.type) {
      case 'hello':
        this.onHello(isObject(f.capabilities) && isObject(f.capabilities['roster']));
        break;
      case 'ping':
        this.sendFrame(encodeFrame(pongFrame(f.t)));
        break;
      case 'roster':
        if (isRosterReply(f) && f.id === this.rosterId) {
          this.rosterId = undefined;
          if (f.offline) this.onOffline(f.offline);
        }
        break;
      case 'error':
        if (!this.ready && f.id === undefined && f.cause === undefined) {
          // The relay refused the hello itself (version-unsupported, hello-required).
          const err = new ClientError('AEP_CLIENT_HELLO', `relay refused hello: ${f.code}${f.detail ? `: ${f.detail}` : ''}`, { wireCode: f.code });
          for (const w of this.helloWaiters.splice(0)) w.reject(err);
        }
        if (f.id !== undefined && f.id === this.rosterId) this.rosterId = undefined;
        // e.g. invalid-event for an event we sent; never includes our token or claim.
        this.log(`emitter: relay error ${f.code}${f.cause ? ` (cause ${f.cause})` : ''}: ${f.detail ?? ''}`);
        break;
      default:
        break;
    }
  }

  private onHello(rosterAdvertised: boolean): void {
    const wasConnected = this.everConnected;
    this.ready = true; // listeners are told at the end, once claims and the queue went out
    this.attempts = 0;
    this.everConnected = true;
    if (wasConnected) this.counters.reconnects++;
    // Re-claim live sessions that have nothing queued (queued events claim on their own).
    const now = Date.now();
    const resend = this.recent.filter((r) => now - r.at <= RESEND_WINDOW_MS + 1_000);
    this.recent.length = 0;
    const covered = new Set([...this.queue.map((p) => p.session), ...resend.map((r) => r.session)]);
    for (const [session, raw] of this.claims) if (!covered.has(session)) this.write(raw, session);
    for (const r of resend) this.write(r.raw, r.session);
    this.drain();
    // Contract C4: ask which requests of our sessions lost their asker (only where advertised,
    // AEP-0003 §4.1 rule 1). The reply is matched against the sessions this connection owns.
    if (rosterAdvertised && this.options.dismissOffline !== false) {
      this.rosterId = `offline-${++this.rosterCounter}`;
      this.sendFrame(encodeFrame(rosterRequestFrame(this.rosterId)));
    }
    for (const w of this.helloWaiters.splice(0)) w.resolve();
    this.ready = false;
    this.setReady(true);
  }

  /** Remember the offline requests of our own source; dismiss those of sessions we already own. */
  private onOffline(entries: readonly OfflineRequest[]): void {
    // Each roster is a complete snapshot (AEP-0003 §4.1 rule 6): it replaces the previous one.
    this.offline.clear();
    for (const o of entries) {
      if (this.offline.size >= OFFLINE_LIMIT) break;
      if (o.source !== this.sourceFor(o.session) || this.raised.has(o.request) || this.dismissedIds.has(o.request)) continue;
      this.offline.set(o.request, o);
    }
    const sessions = new Set<string>();
    for (const o of this.offline.values()) if (this.owned.has(o.session)) sessions.add(o.session);
    for (const s of sessions) this.dismissOfflineOf(s);
  }

  /**
   * Contract C4: this connection owns `(source, session)` again and did not raise these
   * requests; it resolves them as dismissed, as the session owner (`subject` = request id).
   */
  private dismissOfflineOf(session: string): void {
    if (this.offline.size === 0 || this.closed) return;
    for (const [id, o] of [...this.offline]) {
      if (o.session !== session) continue;
      this.offline.delete(id);
      if (this.raised.has(id) || this.dismissedIds.has(id)) continue;
      this.dismissedIds.set(id, true);
      try {
        this.emitRaw(session, 'attention.resolved', { resolution: 'dismissed' }, { subject: id, capture: 'metadata' });
        this.counters.dismissed++;
      } catch (err) {
        this.log(`emitter: could not dismiss offline request ${id}: ${(err as Error).message}`);
      }
    }
  }

  private sendFrame(text: string): void {
    if (this.ws && this.ready) this.ws.send(text);
  }

  private enqueue(p: Pending): void {
    if (this.ready && this.ws && this.queue.length === 0) {
      this.write(p.raw, p.session);
      return;
    }
    const limit = this.options.bufferLimit ?? 10_000;
    if (this.queue.length >= limit) {
      // Drop debug/info first and count (AEP-0003 §8.4, AEP-0001 §7).
      let idx = this.queue.findIndex((q) => q.severity === 'debug');
      if (idx < 0) idx = this.queue.findIndex((q) => q.severity === 'info');
      if (idx < 0 && (p.severity === 'debug' || p.severity === 'info')) {
        this.counters.dropped++;
        return;
      }
      if (idx < 0) idx = 0;
      this.queue.splice(idx, 1);
      this.counters.dropped++;
      if (this.counters.dropped === 1) this.log('emitter: buffer full while disconnected; dropping events (debug/info first)');
    }
    this.queue.push(p);
    if (this.ready) this.drain();
  }

  private drain(): void {
    while (this.ready && this.ws && this.queue.length > 0) {
      const p = this.queue.shift();
      if (p) this.write(p.raw, p.session);
    }
  }

  private write(raw: string, session: string | undefined): void {
    this.ws?.send(raw);
    const now = Date.now();
    this.recent.push({ raw, at: now, session });
    while (this.recent.length > RESEND_MAX || (this.recent[0] && now - this.recent[0].at > RESEND_WINDOW_MS)) this.recent.shift();
  }

  /** AEP-0004 §5.3: dedupe, decide once, ack as the next sequenced event, re-ack byte-identically. */
  private async onCommandEvent(cmd: WireEvent, raw: string): Promise<void> {
    this.counters.commands++;
    if (typeof cmd.id !== 'string' || typeof cmd.source !== 'string' || typeof cmd.session !== 'string') {
      this.log('emitter: command without id/source/session ignored (cannot be acked)');
      return;
    }
    const key = `${cmd.source}\n${cmd.id}`;
    const known = this.dedupe.get(key);
    if (known?.state === 'acked') {
      this.ws?.send(known.raw); // byte-identical re-ack (AEP-0004 §3)
      return;
    }
    if (known?.state === 'deciding') return; // the forthcoming ack answers every delivery
    this.dedupe.set(key, { state: 'deciding' });
    let decision: CommandDecision;
    const accepts = this.options.control?.accepts ?? [];
    const handler = this.handlers.get(cmd.type);
    if (!accepts.includes(cmd.type) || !handler) {
      decision = { status: 'rejected', reason: 'unsupported' };
    } else {
      try {
        decision = await handler({ event: cmd, raw });
      } catch (err) {
        this.log(`emitter: command handler failed: ${(err as Error).message}`);
        decision = { status: 'rejected', reason: 'busy' };
      }
    }
    if (this.closed) return;
    const capture = decision.status === 'rejected' ? clampCapture(decision.capture ?? this.ceiling, this.ceiling) : 'metadata';
    const ack = this.emitRaw(
      cmd.session,
      decision.status === 'accepted' ? 'control.accepted' : 'control.rejected',
      decision.status === 'accepted' ? undefined : ackData(decision, capture),
      { cause: cmd.id, capture },
    );
    this.dedupe.set(key, { state: 'acked', raw: ack.raw });
    try {
      decision.after?.();
    } catch (err) {
      this.log(`emitter: command follow-up failed: ${(err as Error).message}`);
    }
  }
}

function captureLevelsUpTo(ceiling: CaptureLevel): CaptureLevel[] {
  const all: CaptureLevel[] = ['none', 'metadata', 'redacted', 'full'];
  return all.filter((l) => captureRank(l) <= captureRank(ceiling));
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
