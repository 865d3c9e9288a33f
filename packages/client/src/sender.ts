// Control sender (AEP-0004 §5.4).
import WebSocket from 'ws';
import type { Issue } from '@aep/protocol';
import { createEmitter } from './proto.js';
import type { EventBuilder } from './proto.js';
import { safeUrl } from './emitter.js';
import { ClientError } from './errors.js';
import type { CancelInput, CommandResult, CommandSenderOptions, RespondInput, WireEvent } from './types.js';
import { defaultSource, isObject, socketUrl, tryParse } from './util.js';

/** Standing ack subscriptions kept per sender. */
const MAX_ACK_SUBS = 32;

interface Waiter {
  id: string;
  onAck: (ack: WireEvent) => void;
  onRefusal: (code: string, detail?: string) => void;
}

/**
 * Sends commands on an authenticated WebSocket and waits for their ack: subscribes to the
 * target session's acks before sending, retries silently-unacked commands with the identical
 * envelope, reports `accepted` / `rejected` (reason, issues) / `refused` (relay error frame) /
 * `no-ack` (window passed).
 */
export class CommandSender {
  private ws: WebSocket | undefined;
  private readonly waiters = new Map<string, Waiter>();
  private readonly subAcks = new Map<string, { resolve: () => void; reject: (e: Error) => void }>();
  private subCounter = 0;
  private readonly ackSubs = new Map<string, { id: string; ready: Promise<void> }>();
  private closed = false;
  private readonly agent: string;
  private readonly source: string;
  private readonly builder: EventBuilder;

  constructor(readonly options: CommandSenderOptions) {
    this.agent = options.agent ?? 'aep-cli';
    this.source = options.source ?? defaultSource(this.agent);
    this.builder = createEmitter({ source: this.source, agent: this.agent });
  }

  /** Connect and complete `hello`; rejects with `ClientError('AEP_CLIENT_UNREACHABLE')` when the relay cannot be reached. */
  static async connect(options: CommandSenderOptions): Promise<CommandSender> {
    const s = new CommandSender(options);
    await s.open();
    return s;
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
    const cmd = this.builder.build({
      type: 'control.attention.respond', session: input.session, ...(input.id !== undefined ? { id: input.id } : {}),
      data: { answer }, subject: input.requestId, cause: input.requestId, capture,
    }) as unknown as WireEvent;
    return this.send(cmd);
  }

  /** Build a `control.cancel` and send it. */
  cancel(input: CancelInput): Promise<CommandResult> {
    const capture = input.capture ?? (input.reason !== undefined ? 'redacted' : 'metadata');
    const cmd = this.builder.build({
      type: 'control.cancel', session: input.session, ...(input.id !== undefined ? { id: input.id } : {}),
      data: { scope: input.scope, ...(input.reason !== undefined ? { reason: input.reason } : {}) },
      capture, ...(input.run !== undefined ? { run: input.run } : {}),
    }) as unknown as WireEvent;
    return this.send(cmd);
  }

  /**
   * Send a prebuilt command envelope (no `seq`). Subscribes to `{session, cause: id}` first so
   * the ack cannot be missed (AEP-0004 §5.4 step 2); every attempt sends the same bytes.
   */
  async send(command: WireEvent): Promise<CommandResult> {
    if (typeof command.session !== 'string') throw new ClientError('AEP_CLIENT_OPTION', 'a command names its target session (AEP-0004 §2)');
    const raw = JSON.stringify(command);
    const window = this.options.ackWindowMs ?? 10_000;
    const attempts = 1 + Math.max(0, this.options.retries ?? 1);
    await this.ackSubscription(command.session);
    return await new Promise<CommandResult>((resolve) => {
      let attempt = 0;
      let timer: NodeJS.Timeout | undefined;
      const finish = (r: CommandResult) => {
        if (timer) clearTimeout(timer);
        this.waiters.delete(command.id);
        resolve(r);
      };
      this.waiters.set(command.id, {
        id: command.id,
        onAck: (ack) => {
          if (ack.type === 'control.accepted') return finish({ status: 'accepted', command, ack });
          const d = isObject(ack.data) ? ack.data : {};
          finish({
            status: 'rejected', command, ack,
            ...(typeof d['reason'] === 'string' ? { reason: d['reason'] } : {}),
            ...(typeof d['detail'] === 'string' ? { detail: d['detail'] } : {}),
            ...(Array.isArray(d['issues']) ? { issues: d['issues'] as Issue[] } : {}),
          });
        },
        onRefusal: (code, detail) => finish({ status: 'refused', reason: code, command, ...(detail !== undefined ? { detail } : {}) }),
      });
      const fire = () => {
        if (attempt >= attempts || this.closed) return finish({ status: 'no-ack', command });
        attempt++;
        // Identical bytes on every attempt (AEP-0004 §2: a retry reuses the id and source).
        if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(raw);
        timer = setTimeout(fire, window);
      };
      fire();
    });
  }

  /** Close the socket. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const ws = this.ws;
    this.ws = undefined;
    if (!ws || ws.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => { ws.terminate(); resolve(); }, 1_000);
      ws.once('close', () => { clearTimeout(t); resolve(); });
      try { ws.close(1000); } catch { clearTimeout(t); resolve(); }
    });
  }

  // ---- internals -------------------------------------------------------------------------

  private open(): Promise<void> {
    const headers: Record<string, string> = {};
    if (this.options.token) headers['Authorization'] = `Bearer ${this.options.token}`;
    const timeoutMs = this.options.connectTimeoutMs ?? 5_000;
    return new Promise<void>((resolve, reject) => {
      let ws: WebSocket;
      try {
        ws = new WebSocket(socketUrl(this.options.url), { headers, perMessageDeflate: false, handshakeTimeout: timeoutMs });
      } catch {
        reject(new ClientError('AEP_CLIENT_OPTION', `invalid relay URL ${safeUrl(this.options.url)}`));
        return;
      }
      this.ws = ws;
      let settled = false;
      const fail = (msg: string) => {
        if (settled) return;
        settled = true;
        clearTimeout(t);
        ws.terminate();
        reject(new ClientError('AEP_CLIENT_UNREACHABLE', msg));
      };
      const t = setTimeout(() => fail(`relay at ${safeUrl(this.options.url)} did not answer hello within ${timeoutMs} ms`), timeoutMs);
      ws.on('open', () => ws.send(JSON.stringify({ type: 'hello', versions: ['0.1'], role: 'consumer', identity: { agent: this.agent } })));
      ws.on('unexpected-response', (_req, res) => fail(`relay at ${safeUrl(this.options.url)} refused the socket: HTTP ${res.statusCode}`));
      ws.on('error', (err) => fail(`cannot reach relay at ${safeUrl(this.options.url)}: ${err.message}`));
      ws.on('close', () => {
        fail(`relay at ${safeUrl(this.options.url)} closed the socket`);
        for (const s of this.subAcks.values()) s.reject(new ClientError('AEP_CLIENT_CLOSED', 'socket closed'));
        this.subAcks.clear();
      });
      ws.on('message', (buf: Buffer, isBinary: boolean) => {
        if (isBinary) return;
        const msg = tryParse(buf.toString('utf8'));
        if (!isObject(msg) || typeof msg['type'] !== 'string') return;
        const type = msg['type'];
        if (type === 'hello') {
          if (!settled) { settled = true; clearTimeout(t); resolve(); }
          return;
        }
        if (type === 'ping') { ws.send(JSON.stringify({ type: 'pong', t: msg['t'] })); return; }
        if (type === 'subscribed' && typeof msg['id'] === 'string') { this.subAcks.get(msg['id'])?.resolve(); this.subAcks.delete(msg['id']); return; }
        if (type === 'error') {
          const code = typeof msg['code'] === 'string' ? msg['code'] : 'error';
          const detail = typeof msg['detail'] === 'string' ? msg['detail'] : undefined;
          if (typeof msg['cause'] === 'string') this.waiters.get(msg['cause'])?.onRefusal(code, detail);
          if (typeof msg['id'] === 'string') {
            this.subAcks.get(msg['id'])?.reject(new ClientError('AEP_CLIENT_HTTP', `subscribe refused: ${code}${detail ? `: ${detail}` : ''}`));
            this.subAcks.delete(msg['id']);
          }
          if (!settled && code === 'hello-required') fail(`relay refused hello: ${code}`);
          return;
        }
        if (type === 'control.accepted' || type === 'control.rejected') {
          const cause = msg['cause'];
          if (typeof cause === 'string') this.waiters.get(cause)?.onAck(msg as unknown as WireEvent);
        }
      });
    });
  }

  /**
   * One standing ack subscription per target session (`{session, type: acks}`), opened before
   * the first command to it and reused (bounded to {@link MAX_ACK_SUBS} sessions).
   */
  private ackSubscription(session: string): Promise<void> {
    const known = this.ackSubs.get(session);
    if (known) return known.ready;
    const id = `acks-${++this.subCounter}`;
    const ready = this.subscribeAcks(id, session);
    this.ackSubs.set(session, { id, ready });
    ready.catch(() => { this.ackSubs.delete(session); });
    if (this.ackSubs.size > MAX_ACK_SUBS) {
      const [oldSession, old] = this.ackSubs.entries().next().value as [string, { id: string }];
      this.ackSubs.delete(oldSession);
      if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify({ type: 'unsubscribe', id: old.id }));
    }
    return ready;
  }

  private subscribeAcks(id: string, session: string): Promise<void> {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) return Promise.reject(new ClientError('AEP_CLIENT_CLOSED', 'sender is not connected'));
    return new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => { this.subAcks.delete(id); reject(new ClientError('AEP_CLIENT_UNREACHABLE', 'relay did not confirm the ack subscription')); }, this.options.connectTimeoutMs ?? 5_000);
      this.subAcks.set(id, { resolve: () => { clearTimeout(t); resolve(); }, reject: (e) => { clearTimeout(t); reject(e); } });
      ws.send(JSON.stringify({ type: 'subscribe', id, filter: { session, type: ['control.accepted', 'control.rejected'] } }));
    });
  }
}
