// Control sender (AEP-0004 §5.4; AEP-0004 §4). Browser-safe: the socket comes from the socket
// seam (a standard WebSocket, or `ws` in the Node entry), frames from the protocol wire layer.
import {
  createEmitter,
  encodeFrame,
  helloFrame,
  isRosterReply,
  parseSocketMessage,
  pongFrame,
  redactUrl,
  rosterRequestFrame,
  subscribeFrame,
  unsubscribeFrame,
} from '@aep/protocol';
import type { EventBuilder, EventInput, Issue } from '@aep/protocol';
import { ClientError, isRefusalStatus, refusedError } from './errors.js';
import { resolveSocketFactory } from './socket.js';
import type { ClientSocket, SocketFactory } from './socket.js';
import type { CancelInput, CommandResult, CommandSenderOptions, RespondInput, RosterSnapshot, SteerInput, WireEvent } from './types.js';
import { defaultSource, isObject } from './util.js';

/** Standing ack subscriptions kept per sender. */
const MAX_ACK_SUBS = 32;
const ROSTER_TIMEOUT_MS = 5_000;

interface Waiter {
  onAck: (ack: WireEvent) => void;
  onRefusal: (code: string, detail?: string) => void;
}

/**
 * Sends commands on an authenticated WebSocket and waits for their ack: subscribes to the
 * target session's acks before sending, retries silently-unacked commands with the identical
 * envelope (reconnecting first when the socket dropped), and reports `accepted` / `rejected`
 * (reason, issues) / `refused` (relay error frame) / `no-ack` (window passed). Connects on
 * first use; {@link CommandSender.connect} connects at once.
 */
export class CommandSender {
  private sock: ClientSocket | undefined;
  private opening: Promise<void> | undefined;
  private helloed = false;
  private rosterAdvertised = false;
  private readonly waiters = new Map<string, Waiter>();
  private readonly subAcks = new Map<string, { resolve: () => void; reject: (e: Error) => void }>();
  private readonly rosterWaiters = new Map<string, (r: RosterSnapshot | null) => void>();
  private counter = 0;
  private readonly ackSubs = new Map<string, { id: string; ready: Promise<void> }>();
  private closed = false;
  private readonly agent: string;
  private readonly source: string;
  private readonly builder: EventBuilder;
  private readonly factory: SocketFactory;

  constructor(readonly options: CommandSenderOptions) {
    this.agent = options.agent ?? 'aep-cli';
    this.source = options.source ?? defaultSource(this.agent);
    this.builder = createEmitter({ source: this.source, agent: this.agent });
    this.factory = resolveSocketFactory(options);
  }

  /**
   * Connect and complete `hello`. Rejects with `AEP_CLIENT_REFUSED` (HTTP 401/403: the token),
   * `AEP_CLIENT_HELLO` (the relay refused the hello) or `AEP_CLIENT_UNREACHABLE`.
   */
  static async connect(options: CommandSenderOptions): Promise<CommandSender> {
    const s = new CommandSender(options);
    await s.open();
    return s;
  }

  /** Connects now (idempotent; resolves at once while connected). Same rejections as {@link CommandSender.connect}. */
  open(): Promise<void> {
    if (this.closed) return Promise.reject(new ClientError('AEP_CLIENT_CLOSED', 'sender is closed'));
    if (this.sock?.isOpen && this.helloed) return Promise.resolve();
    if (!this.opening) {
      this.opening = this.connectOnce();
      this.opening.then(
        () => {
          this.opening = undefined;
        },
        () => {
          this.opening = undefined;
        },
      );
    }
    return this.opening;
  }

  /** Build a `control.attention.respond` (subject = cause = request id) and send it. */
  respond(input: RespondInput): Promise<CommandResult> {
    const a = input.answer;
    const hasText = a.text !== undefined || Object.values(a.values ?? {}).some((v) => typeof v === 'string' || Array.isArray(v));
    const capture = input.capture ?? (hasText ? 'redacted' : 'metadata');
    const answer: Record<string, unknown> = {};
    if (a.option !== undefined) answer['option'] = a.option;
    if (a.text !== undefined) answer['text'] = a.text;
    if (a.values !== undefined) answer['values'] = a.values;
    return this.build({
      type: 'control.attention.respond',
      session: input.session,
      ...(input.id !== undefined ? { id: input.id } : {}),
      data: { answer },
      subject: input.requestId,
      cause: input.requestId,
      capture,
      ...(input.extensions ? { extensions: input.extensions } : {}),
    });
  }

  /** Build a `control.cancel` (AEP-0004 §5: `scope`, optional `reason`; envelope `run` for run scope) and send it. */
  cancel(input: CancelInput): Promise<CommandResult> {
    if (input.scope === 'run' && input.run === undefined) {
      return Promise.reject(new ClientError('AEP_CLIENT_OPTION', 'control.cancel with scope "run" names the run (envelope run, AEP-0004 §5)'));
    }
    const capture = input.capture ?? (input.reason !== undefined ? 'redacted' : 'metadata');
    return this.build({
      type: 'control.cancel',
      session: input.session,
      ...(input.id !== undefined ? { id: input.id } : {}),
      data: { scope: input.scope, ...(input.reason !== undefined ? { reason: input.reason } : {}) },
      capture,
      ...(input.run !== undefined ? { run: input.run } : {}),
      ...(input.extensions ? { extensions: input.extensions } : {}),
    });
  }

  /** Build a `control.pause` (payload `{}`, AEP-0004 §5) and send it. */
  pause(input: SteerInput): Promise<CommandResult> {
    return this.steer('control.pause', input);
  }

  /** Build a `control.resume` (payload `{}`, AEP-0004 §5) and send it. */
  resume(input: SteerInput): Promise<CommandResult> {
    return this.steer('control.resume', input);
  }

  /**
   * Send a prebuilt command envelope (no `seq`). Subscribes to the target session first so the
   * ack cannot be missed (AEP-0004 §5.4 step 2); every attempt sends the same bytes.
   */
  async send(command: WireEvent): Promise<CommandResult> {
    if (typeof command.session !== 'string') throw new ClientError('AEP_CLIENT_OPTION', 'a command names its target session (AEP-0004 §2)');
    const session = command.session;
    const raw = JSON.stringify(command);
    const window = this.options.ackWindowMs ?? 10_000;
    const attempts = 1 + Math.max(0, this.options.retries ?? 1);
    await this.open();
    await this.ackSubscription(session);
    return await new Promise<CommandResult>((resolve) => {
      let attempt = 0;
      let timer: ReturnType<typeof setTimeout> | undefined;
      let settled = false;
      const finish = (r: CommandResult) => {
        if (settled) return;
        settled = true;
        if (timer) clearTimeout(timer);
        this.waiters.delete(command.id);
        resolve(r);
      };
      this.waiters.set(command.id, {
        onAck: (ack) => {
          if (ack.type === 'control.accepted') return finish({ status: 'accepted', command, ack });
          const d = isObject(ack.data) ? ack.data : {};
          finish({
            status: 'rejected',
            command,
            ack,
            ...(typeof d['reason'] === 'string' ? { reason: d['reason'] } : {}),
            ...(typeof d['detail'] === 'string' ? { detail: d['detail'] } : {}),
            ...(Array.isArray(d['issues']) ? { issues: d['issues'] as Issue[] } : {}),
          });
        },
        onRefusal: (code, detail) => finish({ status: 'refused', reason: code, command, ...(detail !== undefined ? { detail } : {}) }),
      });
      const fire = async () => {
        if (settled) return;
        if (attempt >= attempts || this.closed) return finish({ status: 'no-ack', command });
        attempt++;
        if (!this.sock?.isOpen) {
          // The socket dropped during the window: reconnect and re-subscribe before the retry.
          try {
            await this.open();
            await this.ackSubscription(session);
          } catch {
            /* counted as a silent attempt */
          }
        }
        if (settled) return;
        // Identical bytes on every attempt (AEP-0004 §2: a retry reuses the id and source).
        this.sock?.send(raw);
        timer = setTimeout(() => {
          void fire();
        }, window);
      };
      void fire();
    });
  }

  /**
   * The relay's roster snapshot (AEP-0003 §4.1): live (connection, session) claims with their
   * declared `control`, and, on a relay that tracks them, the `offline` requests (contract C4).
   * `null` when unavailable: not advertised, refused, or no reply within 5 s.
   */
  async roster(): Promise<RosterSnapshot | null> {
    try {
      await this.open();
    } catch {
      return null;
    }
    if (!this.rosterAdvertised || !this.sock) return null;
    const id = `roster-${++this.counter}`;
    const sock = this.sock;
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.rosterWaiters.delete(id);
        resolve(null);
      }, ROSTER_TIMEOUT_MS);
      this.rosterWaiters.set(id, (r) => {
        clearTimeout(t);
        resolve(r);
      });
      sock.send(encodeFrame(rosterRequestFrame(id)));
    });
  }

  /** Settle a pending command from an ack seen on another transport (e.g. an SSE stream). */
  observe(event: WireEvent): void {
    if ((event.type === 'control.accepted' || event.type === 'control.rejected') && typeof event.cause === 'string') {
      this.waiters.get(event.cause)?.onAck(event);
    }
  }

  /** Close the socket; pending commands settle as `no-ack`. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const sock = this.sock;
    this.sock = undefined;
    if (!sock) return;
    if (!sock.isOpen) {
      sock.terminate();
      return;
    }
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        sock.terminate();
        resolve();
      }, 1_000);
      this.onSocketClosed = () => {
        clearTimeout(t);
        resolve();
      };
      sock.close(1000);
    });
  }

  // ---- internals -------------------------------------------------------------------------

  private onSocketClosed: (() => void) | undefined;

  private steer(type: 'control.pause' | 'control.resume', input: SteerInput): Promise<CommandResult> {
    return this.build({
      type,
      session: input.session,
      ...(input.id !== undefined ? { id: input.id } : {}),
      data: {},
      ...(input.run !== undefined ? { run: input.run } : {}),
      ...(input.extensions ? { extensions: input.extensions } : {}),
    });
  }

  /** Builds with the protocol builder (validated, AEP-0001 §10); a refusal rejects the promise. */
  private build(input: EventInput): Promise<CommandResult> {
    let cmd: WireEvent;
    try {
      cmd = this.builder.build(input) as unknown as WireEvent;
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    return this.send(cmd);
  }

  private connectOnce(): Promise<void> {
    const timeoutMs = this.options.connectTimeoutMs ?? 5_000;
    const where = `relay at ${redactUrl(this.options.url)}`;
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      let failure: ClientError | undefined;
      const settle = (err?: ClientError) => {
        if (settled) return;
        settled = true;
        clearTimeout(t);
        if (err) {
          reject(err);
          sock.terminate();
        } else resolve();
      };
      const t = setTimeout(() => settle(new ClientError('AEP_CLIENT_UNREACHABLE', `${where} did not answer hello within ${timeoutMs} ms`)), timeoutMs);
      const sock: ClientSocket = this.factory(
        { url: this.options.url, ...(this.options.token ? { token: this.options.token } : {}), handshakeTimeoutMs: timeoutMs },
        {
          open: () => {
            sock.send(
              encodeFrame(
                helloFrame({ role: 'consumer', identity: { agent: this.agent, ...(this.options.instance ? { instance: this.options.instance } : {}) } }),
              ),
            );
          },
          message: (text) =>
            this.onMessage(
              sock,
              text,
              () => settle(),
              (e) => settle(e),
            ),
          refused: (status) => {
            failure = isRefusalStatus(status)
              ? refusedError(`${where} refused the socket`, status)
              : new ClientError('AEP_CLIENT_HTTP', `${where} refused the socket: HTTP ${status}`, { status });
          },
          error: (message) => {
            if (!failure) failure = new ClientError('AEP_CLIENT_UNREACHABLE', `cannot reach ${where}: ${message}`);
          },
          close: () => {
            settle(failure ?? new ClientError('AEP_CLIENT_UNREACHABLE', `${where} closed the socket`));
            if (this.sock === sock) {
              this.sock = undefined;
              this.resetConnectionState();
            }
            this.onSocketClosed?.();
          },
        },
      );
      this.resetConnectionState();
      this.sock = sock;
    });
  }

  /** Standing subscriptions and pending frame replies die with a socket; they are re-made on the next command. */
  private resetConnectionState(): void {
    this.helloed = false;
    this.ackSubs.clear();
    for (const s of this.subAcks.values()) s.reject(new ClientError('AEP_CLIENT_CLOSED', 'socket closed'));
    this.subAcks.clear();
    for (const w of this.rosterWaiters.values()) w(null);
    this.rosterWaiters.clear();
  }

  private onMessage(sock: ClientSocket, text: string, helloOk: () => void, helloFailed: (e: ClientError) => void): void {
    const m = parseSocketMessage(text);
    if (m.kind === 'event') {
      const ev = m.event as unknown as WireEvent;
      try {
        this.options.onEvent?.(ev, text);
      } catch {
        /* a consumer callback never breaks the sender */
      }
      if ((m.type === 'control.accepted' || m.type === 'control.rejected') && typeof ev.cause === 'string') this.waiters.get(ev.cause)?.onAck(ev);
      return;
    }
    if (m.kind !== 'frame') return; // unknown frames are ignored (AEP-0003 §2)
    const f = m.frame;
    switch (f.type) {
      case 'hello': {
        if (this.helloed) return;
        this.helloed = true;
        const caps = f.capabilities;
        // Ask for a roster only where it is advertised (AEP-0003 §4.1 rule 1).
        this.rosterAdvertised = isObject(caps) && isObject(caps['roster']);
        helloOk();
        return;
      }
      case 'ping':
        sock.send(encodeFrame(pongFrame(f.t)));
        return;
      case 'subscribed':
        this.subAcks.get(f.id)?.resolve();
        this.subAcks.delete(f.id);
        return;
      case 'roster':
        if (isRosterReply(f)) {
          const w = this.rosterWaiters.get(f.id);
          if (w) {
            this.rosterWaiters.delete(f.id);
            w({ entries: f.entries, ...(f.offline ? { offline: f.offline } : {}) });
          }
        }
        return;
      case 'error': {
        const detail = f.detail;
        // Any cause-matched error frame is that command's refusal, whatever the code (AEP-0004 §4.2).
        if (f.cause !== undefined) this.waiters.get(f.cause)?.onRefusal(f.code, detail);
        if (f.id !== undefined) {
          const s = this.subAcks.get(f.id);
          if (s) {
            this.subAcks.delete(f.id);
            s.reject(
              new ClientError(
                f.code === 'unauthorized' ? 'AEP_CLIENT_REFUSED' : 'AEP_CLIENT_HTTP',
                `subscribe refused: ${f.code}${detail ? `: ${detail}` : ''}`,
                { wireCode: f.code },
              ),
            );
          }
          const r = this.rosterWaiters.get(f.id);
          if (r) {
            this.rosterWaiters.delete(f.id);
            r(null);
          }
        }
        if (!this.helloed && f.cause === undefined && f.id === undefined) {
          helloFailed(new ClientError('AEP_CLIENT_HELLO', `relay refused hello: ${f.code}${detail ? `: ${detail}` : ''}`, { wireCode: f.code }));
        }
        return;
      }
      default:
        return;
    }
  }

  /**
   * One standing subscription per target session (`{session, type: acks}`, or `{session}` with
   * `watch:"session"`), opened before the first command to it and reused (bounded to
   * {@link MAX_ACK_SUBS} sessions).
   */
  private ackSubscription(session: string): Promise<void> {
    const known = this.ackSubs.get(session);
    if (known) return known.ready;
    const id = `acks-${++this.counter}`;
    const ready = this.subscribeAcks(id, session);
    this.ackSubs.set(session, { id, ready });
    ready.catch(() => {
      if (this.ackSubs.get(session)?.id === id) this.ackSubs.delete(session);
    });
    if (this.ackSubs.size > MAX_ACK_SUBS) {
      const [oldSession, old] = this.ackSubs.entries().next().value as [string, { id: string }];
      this.ackSubs.delete(oldSession);
      this.sock?.send(encodeFrame(unsubscribeFrame(old.id)));
    }
    return ready;
  }

  private subscribeAcks(id: string, session: string): Promise<void> {
    const sock = this.sock;
    if (!sock?.isOpen) return Promise.reject(new ClientError('AEP_CLIENT_CLOSED', 'sender is not connected'));
    return new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => {
        this.subAcks.delete(id);
        reject(new ClientError('AEP_CLIENT_UNREACHABLE', 'relay did not confirm the ack subscription'));
      }, this.options.connectTimeoutMs ?? 5_000);
      this.subAcks.set(id, {
        resolve: () => {
          clearTimeout(t);
          resolve();
        },
        reject: (e) => {
          clearTimeout(t);
          reject(e);
        },
      });
      const filter = this.options.watch === 'session' ? { session } : { session, type: ['control.accepted', 'control.rejected'] };
      sock.send(encodeFrame(subscribeFrame({ id, filter })));
    });
  }
}
