// WebSocket binding: `/socket` (AEP-0003 §3.5, §4, §6.5): upgrade, `hello`,
// frames in arrival order, Events from emitters, subscriptions, roster, liveness, `closing`.
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket, type RawData } from 'ws';
import { isCommandType, relayHelloFrame } from '@aep/protocol';
import type { CaptureLevel } from '@aep/protocol';
import type { Principal } from './auth.js';
import type { Claimant, HelloInfo } from './claims.js';
import type { ControlRouter } from './control.js';
import { SUPPORTED_VERSIONS, unpresentableClaim, type RelayCore } from './core.js';
import { errorFrame, rawError, type FrameErrorCode } from './errors.js';
import { securityHeaders } from './headers.js';
import { Subscription, compileSpec, type AepEvent, type ConsumerSink, type Outgoing } from './hub.js';
import { checkEvent, type Incoming } from './ingest.js';
import { TickBatch, errText, hostName, isObject, parseUrl } from './util.js';

const WS_PING_MS = 30_000; // AEP-0003 §3.5.5 RECOMMENDED interval
const WS_IDLE_MS = 90_000; // and timeout
/** Contract C3: a `claim` is a random base64url string of 22 to 64 characters. */
const CLAIM = /^[A-Za-z0-9_-]{22,64}$/;
let serials = 0;

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** An unmasked, final text frame (RFC 6455 §5.2) carrying `text` as UTF-8: what a server sends. */
export function wsTextFrame(text: string): Buffer {
  const n = Buffer.byteLength(text, 'utf8');
  const head = n < 126 ? 2 : n < 65536 ? 4 : 10;
  const f = Buffer.allocUnsafe(head + n);
  f[0] = 0x81;
  if (head === 2) f[1] = n;
  else if (head === 4) {
    f[1] = 126;
    f.writeUInt16BE(n, 2);
  } else {
    f[1] = 127;
    f.writeUInt32BE(Math.floor(n / 0x100000000), 2);
    f.writeUInt32BE(n >>> 0, 6);
  }
  f.write(text, head, 'utf8');
  return f;
}

/** The frame of an Event rendered as `text` (Outgoing.frame's builder). */
function wsEventFrame(_o: Outgoing, text: string): Buffer {
  return wsTextFrame(text);
}

/** One WebSocket connection: a consumer sink, a claimant, a command sender. */
export class WsConn implements ConsumerSink, Claimant {
  readonly kind = 'ws' as const;
  closed = false;
  hello: HelloInfo | null = null;
  readonly sessions = new Set<string>();
  readonly subs = new Map<string, Subscription>();
  /** Digest of the hello `claim` (set at hello; until then one nobody holds). */
  claim = unpresentableClaim();
  readonly serial = ++serials;
  lastSeen = Date.now();
  lastPing = Date.now();
  constructor(
    readonly ws: WebSocket,
    readonly principal: Principal,
    private readonly socket: Duplex,
  ) {}
  /**
   * Event frames of this tick, written to the socket as one buffer. Every frame `ws` writes for
   * us (sendText, frame, close) flushes them first, so order holds; `ws`'s own pings and pongs
   * may pass them, as control frames may (RFC 6455 §5.5).
   */
  private readonly batch = new TickBatch((b, done) => {
    if (this.live()) this.socket.write(b, done);
    else done();
  });
  live(): boolean {
    return !this.closed && this.ws.readyState === 1;
  }
  sendText(text: string): void {
    if (this.live()) {
      this.batch.flush();
      this.ws.send(text);
    }
  }
  buffered(): number {
    return this.ws.bufferedAmount + this.batch.bytes;
  }
  frame(f: object): void {
    this.sendText(JSON.stringify(f));
  }
  error(code: FrameErrorCode, detail: string, corr: { id?: unknown; cause?: unknown; more?: Record<string, unknown> } = {}): void {
    this.frame(errorFrame(code, detail, corr));
  }
  deliver(_sub: Subscription, o: Outgoing, ceiling: CaptureLevel | undefined): void {
    if (this.closed || this.ws.readyState !== 1) return;
    // The whole frame (header and UTF-8 payload) is built once per (Event, ceiling) and written
    // as is to every subscriber's socket (issue 19): what `ws.send` would write, without its
    // per-send header and option objects. Safe beside `ws`: without an extension (the server
    // negotiates none) its sender writes every frame synchronously, so order is kept, and
    // `bufferedAmount` counts the socket's queue.
    this.batch.add(o.frame('ws', ceiling, wsEventFrame));
  }
  marker(sub: Subscription, session: string, earliest: { epoch: number; seq: number }): void {
    this.frame({ type: 'replay-exhausted', sub: sub.id, session, earliest });
  }
  replayDone(): void {}
  closingFrame(reason: string): void {
    const delivered: Array<Record<string, unknown>> = [];
    for (const sub of this.subs.values()) for (const [session, p] of sub.delivered) delivered.push({ sub: sub.id, session, epoch: p[0], seq: p[1] });
    this.frame({ type: 'closing', reason, delivered });
  }
  disconnectSlow(): void {
    this.closingFrame('slow-consumer');
    this.closed = true;
    this.ws.close(1013, 'slow consumer');
    setTimeout(() => this.ws.terminate(), 1000).unref();
  }
  /** Resolves once everything queued reached the socket (or the connection ended); event driven, no polling loop. */
  drained(): Promise<void> {
    this.batch.flush(); // what waits for the end of the tick is part of what must drain
    return new Promise((resolve) => {
      const done = () => this.closed || this.ws.readyState !== 1 || this.ws.bufferedAmount === 0;
      if (done()) return resolve();
      let timer: NodeJS.Timeout | undefined;
      const check = () => {
        if (timer) clearTimeout(timer);
        if (!done()) {
          timer = setTimeout(check, 250);
          timer.unref();
          return;
        } // ws may still hold a frame after 'drain'
        this.socket.off('drain', check);
        this.socket.off('close', check);
        resolve();
      };
      this.socket.on('drain', check);
      this.socket.on('close', check);
    });
  }
  /** Close the handshake way (shutdown), resolving when closed or after 1 s. */
  shutdown(): Promise<void> {
    this.closingFrame('shutdown');
    this.closed = true;
    return new Promise<void>((resolve) => {
      if (this.ws.readyState === 3) return resolve();
      this.ws.once('close', () => resolve());
      this.ws.close(1001, 'relay shutting down');
      setTimeout(() => {
        this.ws.terminate();
        resolve();
      }, 1000).unref();
    });
  }
}

/** The WebSocket binding: upgrades, connections and their frames. */
export class WsBinding {
  readonly sockets = new Set<WsConn>();
  private readonly wss: WebSocketServer;

  constructor(
    private readonly core: RelayCore,
    private readonly control: ControlRouter,
    private readonly loopbackHosts: Set<string> | null,
  ) {
    this.wss = new WebSocketServer({ noServer: true, maxPayload: core.opts.maxBodyBytes, clientTracking: false });
    // The 101 answer carries the same headers as every other response (contract C9).
    this.wss.on('headers', (headers: string[]) => {
      for (const [k, v] of Object.entries(securityHeaders())) headers.push(`${k}: ${v}`);
    });
  }

  /** `upgrade` on the HTTP server. Refusals are plain HTTP answers on the socket. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    const url = parseUrl(req.url);
    if (!url) {
      socket.end(rawError('bad-request', 400, 'Bad Request', 'the request target is not a valid path'));
      return;
    }
    if (url.pathname !== '/socket') {
      socket.end(rawError('not-found', 404, 'Not Found', `no WebSocket endpoint at ${url.pathname.slice(0, 200)}`));
      return;
    }
    if (this.core.closing) {
      socket.end(rawError('shutting-down', 503, 'Service Unavailable', 'the relay is stopping'));
      return;
    }
    if (this.loopbackHosts && !this.loopbackHosts.has(hostName(req.headers.host))) {
      socket.end(rawError('forbidden-host', 403, 'Forbidden', 'this relay listens on loopback and only answers loopback Host names'));
      return;
    }
    // A browser page of another origin must not drive the relay (no CORS on WebSockets): only the
    // relay's own origin (the inbox it serves) and --allow-origin ones; clients without Origin pass.
    const origin = req.headers.origin;
    if (origin !== undefined && !this.originAllowed(origin, req.headers.host)) {
      socket.end(rawError('forbidden-origin', 403, 'Forbidden', 'WebSocket upgrades from this browser origin are refused (allow it with --allow-origin)'));
      return;
    }
    const principal = this.core.auth.principal(req, url);
    if (!principal) {
      socket.end(rawError('unauthorized', 401, 'Unauthorized', 'missing or invalid bearer token (AEP-0003 §8.1)'));
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => this.connection(ws, principal, socket));
  }

  private originAllowed(origin: string, host: string | undefined): boolean {
    const allowed = this.core.opts.allowOrigins;
    if (allowed.includes('*')) return true;
    const o = origin.toLowerCase();
    if (host !== undefined && (o === `http://${host.toLowerCase()}` || o === `https://${host.toLowerCase()}`)) return true;
    return allowed.includes(o);
  }

  private connection(ws: WebSocket, principal: Principal, socket: Duplex): void {
    const conn = new WsConn(ws, principal, socket);
    this.sockets.add(conn);
    ws.on('error', () => {});
    ws.on('message', (data: RawData, isBinary: boolean) => {
      try {
        this.frame(conn, data, isBinary);
      } catch (err) {
        this.core.opts.log(`error handling a WebSocket frame: ${errText(err)}`);
      }
    });
    ws.on('pong', () => {
      conn.lastSeen = Date.now();
    }); // protocol-level pong counts as liveness too
    ws.on('close', () => this.drop(conn));
  }

  private drop(conn: WsConn): void {
    if (!this.sockets.delete(conn)) return;
    conn.closed = true;
    this.core.claims.drop(conn);
    this.core.hub.removeSink(conn);
  }

  private frame(conn: WsConn, data: RawData, isBinary: boolean): void {
    conn.lastSeen = Date.now();
    if (conn.closed) return;
    if (!conn.principal.valid()) return this.revoked(conn);
    if (isBinary) {
      // Binary frames are reserved in 0.1 (AEP-0003 §3.5): error, then close 1003.
      conn.error('invalid-frame', 'binary frames are reserved in AEP 0.1 (AEP-0003 §3.5)');
      conn.closed = true;
      conn.ws.close(1003, 'binary frames are not supported');
      return;
    }
    const text = Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data as ArrayBuffer).toString('utf8');
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      msg = undefined;
    }
    const type = isObject(msg) && typeof msg['type'] === 'string' ? msg['type'] : undefined;
    if (conn.hello === null) {
      if (type !== 'hello' || !isObject(msg)) {
        conn.error('hello-required', 'the first frame must be hello (AEP-0003 §3.5.1)');
        conn.closed = true;
        conn.ws.close(1008, 'hello required');
        return;
      }
      return this.hello(conn, msg);
    }
    if (!isObject(msg) || type === undefined) {
      conn.error('invalid-frame', 'a frame must be a JSON object with a string type (AEP-0003 §2)');
      return;
    }
    if (type.includes('.')) return this.event(conn, msg, text);
    switch (type) {
      case 'subscribe':
        return this.subscribe(conn, msg);
      case 'unsubscribe':
        return this.unsubscribe(conn, msg);
      case 'roster':
        return this.roster(conn, msg);
      case 'ping':
        return conn.frame(msg['t'] === undefined ? { type: 'pong' } : { type: 'pong', t: msg['t'] });
      default:
        return; // pong, closing, a second hello, unknown frames: ignored (AEP-0003 §2)
    }
  }

  private hello(conn: WsConn, msg: Record<string, unknown>): void {
    const versions = msg['versions'];
    const pick = Array.isArray(versions)
      ? (versions.find((v) => typeof v === 'string' && (SUPPORTED_VERSIONS as readonly string[]).includes(v)) as string | undefined)
      : undefined;
    if (pick === undefined) {
      conn.error('version-unsupported', 'no common AEP version (AEP-0003 §4 rule 1)', { more: { versions: [...SUPPORTED_VERSIONS] } });
      conn.closed = true;
      conn.ws.close(1002, 'version unsupported');
      return;
    }
    const role = msg['role'] === 'emitter' || msg['role'] === 'both' ? msg['role'] : 'consumer';
    conn.hello = {
      role,
      identity: isObject(msg['identity']) ? msg['identity'] : {},
      capabilities: isObject(msg['capabilities']) ? msg['capabilities'] : {},
    };
    // Only the digest is kept: the claim itself is never stored, logged or sent (contract C3).
    const claim = msg['claim'];
    if (typeof claim === 'string' && CLAIM.test(claim)) conn.claim = createHash('sha256').update(claim).digest('hex');
    this.core.claims.present(conn);
    conn.frame(relayHelloFrame(this.core.capabilities(), [pick]));
  }

  private event(conn: WsConn, msg: Record<string, unknown>, text: string): void {
    const c = checkEvent(msg, true);
    const cause = typeof msg['id'] === 'string' ? msg['id'] : undefined;
    if (!c.ok) {
      conn.error('invalid-event', c.detail, { cause });
      return;
    }
    if (!isCommandType(msg['type'] as string)) {
      const missing = conn.principal.check('emit', { agent: str(msg['agent']), session: str(msg['session']) });
      if (missing) {
        conn.error('unauthorized', `token lacks scope ${missing}`, { cause });
        return;
      }
    }
    const trimmed = text.trim();
    const raw = /[\r\n]/.test(trimmed) ? JSON.stringify(msg) : trimmed;
    const inc: Incoming = { event: msg as unknown as AepEvent, raw, bytes: Buffer.byteLength(raw) };
    if (isCommandType(msg['type'] as string)) return this.control.route(conn, inc, text);
    // A WebSocket Event has no acknowledgement on the wire: if the log cannot keep it (scale-out
    // backend unreachable) the connection is closed 1013 so the emitter reconnects and re-sends.
    this.core.log.offer(inc, conn, (err) => this.unavailable(conn, err));
  }

  private subscribe(conn: WsConn, msg: Record<string, unknown>): void {
    const id = msg['id'];
    const err = (code: FrameErrorCode, detail: string) => conn.error(code, detail, { id });
    if (typeof id !== 'string' || id === '') return err('invalid-filter', 'subscribe needs a non-empty string id (AEP-0003 §6.5)');
    if (conn.hello?.role === 'emitter') return err('unauthorized', 'an emitter-role connection may not subscribe (AEP-0003 §6.5)');
    if (!conn.principal.readCeiling()) return err('unauthorized', 'token lacks scope read');
    if (conn.subs.has(id)) return err('invalid-filter', `subscription id ${id.slice(0, 100)} is already in use on this connection`);
    const max = this.core.opts.maxSubscriptions;
    if (conn.subs.size >= max) return err('limit-exceeded', `maxSubscriptions=${max} per connection`);
    const c = compileSpec(msg['filter'], msg['from'], msg['capture'], this.core.opts.maxFromPositions);
    if (!c.ok) return err(c.code, c.detail);
    c.spec.ceiling = conn.principal.cap(c.spec.ceiling); // never above the token's read level (C7)
    const sub = new Subscription(id, c.spec, conn, true);
    conn.subs.set(id, sub);
    conn.frame({ type: 'subscribed', id });
    const hub = this.core.hub;
    hub.add(sub);
    const parts = this.core.snapshot(c.spec, true);
    if (parts.length === 0) return;
    hub.replay(sub, parts, () => conn.drained(), this.core.read, this.core.fetch).catch(() => conn.ws.terminate());
  }

  private unsubscribe(conn: WsConn, msg: Record<string, unknown>): void {
    const id = msg['id'];
    if (typeof id !== 'string') {
      conn.error('invalid-filter', 'unsubscribe needs the subscription id', { id });
      return;
    }
    const sub = conn.subs.get(id);
    if (sub) {
      conn.subs.delete(id);
      this.core.hub.remove(sub);
      sub.cancelled = true;
      sub.pending = [];
      sub.pendingHead = 0;
      sub.pendingBytes = 0;
    }
    conn.frame({ type: 'unsubscribed', id });
  }

  private roster(conn: WsConn, msg: Record<string, unknown>): void {
    const id = msg['id'];
    if (typeof id !== 'string' || id === '') {
      conn.error('invalid-frame', 'roster needs a non-empty string id (AEP-0003 §4.1)', { id });
      return;
    }
    if (conn.hello?.role === 'emitter') {
      conn.error('unauthorized', 'an emitter-role connection may not ask for the roster (AEP-0003 §4.1)', { id });
      return;
    }
    if (!conn.principal.readCeiling()) {
      conn.error('unauthorized', 'token lacks scope read', { id });
      return;
    }
    // `offline` (contract C4): pending requests whose asker has no live connection.
    conn.frame({ type: 'roster', id, entries: this.core.claims.roster(), offline: this.core.requests.offline(Date.now(), this.core.opts.offlineTtlMs) });
  }

  /** The shared log could not keep an Event of this connection: `closing`, then close 1013 (try again later). */
  private unavailable(conn: WsConn, err: Error): void {
    if (conn.closed) return;
    this.core.opts.log(`closing a WebSocket whose Event could not be stored: ${errText(err)}`);
    conn.closingFrame('unavailable');
    conn.closed = true;
    conn.ws.close(1013, 'event log unavailable, retry');
    setTimeout(() => conn.ws.terminate(), 1000).unref();
  }

  /** A connection whose token was revoked or expired: `closing`, then close 1008. */
  private revoked(conn: WsConn): void {
    conn.closingFrame('revoked');
    conn.closed = true;
    conn.ws.close(1008, 'token revoked or expired');
    setTimeout(() => conn.ws.terminate(), 1000).unref();
  }

  /** Close every connection authenticated with token `id`. */
  revoke(id: string): void {
    for (const c of this.sockets) if (!c.closed && c.principal.tokenId === id) this.revoked(c);
  }

  /** Liveness: AEP `ping` + protocol ping every 30 s, terminate after 90 s of silence. */
  tick(): void {
    const now = Date.now();
    for (const c of this.sockets) {
      if (!c.closed && !c.principal.valid(now)) {
        this.revoked(c);
        continue;
      }
      if (now - c.lastSeen > WS_IDLE_MS) {
        c.closed = true;
        c.ws.terminate();
        continue;
      }
      if (c.hello && now - c.lastPing >= WS_PING_MS) {
        c.lastPing = now;
        c.frame({ type: 'ping', t: now });
        try {
          c.ws.ping();
        } catch {
          /* closing */
        }
      }
    }
  }

  /** Live connections of emitters (hello role emitter/both, or claiming a session): a drain waits for them. */
  emitters(): number {
    let n = 0;
    for (const c of this.sockets) if (c.live() && (c.hello?.role === 'emitter' || c.hello?.role === 'both' || c.sessions.size > 0)) n++;
    return n;
  }

  /** `closing` + 1001 on every socket (AEP-0003 §3.5.4). */
  async closeAll(): Promise<void> {
    await Promise.all([...this.sockets].map((c) => c.shutdown()));
  }
}
