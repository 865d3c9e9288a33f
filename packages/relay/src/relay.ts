// The relay: HTTP ingest + discovery + SSE + WebSocket + control routing over one node:http
// server (AEP-0003 §3, §4, §5, §6, §7, §8; AEP-0004 §4). Protocol logic (validation, filters,
// down-levelling) comes from @aep/protocol; this module does I/O, ordering and routing.
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket, type RawData } from 'ws';
import { captureRank, severityRank, isCommandType, parseResumeToken } from '@aep/protocol';
import type { AepEvent } from './hub.js';
import type { CaptureLevel } from '@aep/protocol';
import { Auth, scrubUrl } from './auth.js';
import { ReplayBuffer, type Entry, type Pos, type ReplayPart } from './buffer.js';
import { Hub, Outgoing, Subscription, compileSpec, type ConsumerSink, type SubscriptionSpec } from './hub.js';
import { checkEvent, parseBody, type Incoming } from './ingest.js';
import type { ResolvedOptions } from './options.js';
import { serveStatic } from './static.js';
import { PushRoutes, tokenKey } from './push.js';
import type { SqliteStore } from './store.js';

/** The AEP versions this relay speaks (AEP-0001 §11). */
export const SUPPORTED_VERSIONS = ['0.1'] as const;

const PROTOCOL_PATHS = new Set(['/events', '/stream', '/socket', '/.well-known/aep', '/healthz']);
const WS_PING_MS = 30_000;      // AEP-0003 §3.5.5 RECOMMENDED interval
const WS_IDLE_MS = 90_000;      // and timeout

function json(res: ServerResponse, status: number, body: unknown, extra: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), 'Cache-Control': 'no-store', ...extra });
  res.end(text);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The request target as a URL, or null when it cannot be parsed (answered 400, never 500). */
function parseUrl(target: string | undefined): URL | null {
  try { return new URL(target ?? '/', 'http://relay.invalid'); } catch { return null; }
}

/** Session text safe inside one SSE line (session ids are untrusted, AEP-0001 §12). */
function sseSafe(s: string): string {
  return s.replace(/[\r\n]/g, '?');
}

/**
 * Cork a socket for the rest of this tick: every Event of one ingest batch goes out in one
 * syscall instead of one per Event (fan-out cost, not semantics).
 */
function corkForTick(owner: { corked: boolean }, s: { cork(): void; uncork(): void }): void {
  if (owner.corked) return;
  owner.corked = true;
  s.cork();
  process.nextTick(() => { owner.corked = false; s.uncork(); });
}

class SseSink implements ConsumerSink {
  readonly kind = 'sse' as const;
  closed = false;
  corked = false;
  constructor(readonly res: ServerResponse) {}
  buffered(): number { return this.res.writableLength; }
  deliver(_sub: Subscription, o: Outgoing, ceiling: CaptureLevel | undefined): void {
    if (this.closed) return;
    if (this.res.socket) corkForTick(this, this.res.socket);
    this.res.write(o.frame('sse', ceiling, (text) => {
      const id = o.positioned && o.session !== null && !/[\r\n]/.test(o.session) ? `id: ${o.session}:${o.pos[0]}:${o.pos[1]}\n` : '';
      return `event: ${o.type}\ndata: ${text}\n${id}\n`;
    }));
  }
  marker(_sub: Subscription, session: string, earliest: { epoch: number; seq: number }): void {
    if (!this.closed) this.res.write(`: replay-exhausted ${sseSafe(session)} ${earliest.epoch}:${earliest.seq}\n\n`);
  }
  replayDone(sub: Subscription): void {
    if (!sub.liveAfterReplay && !this.closed) { this.closed = true; this.res.end(); }
  }
  disconnectSlow(): void {
    // End the stream: the consumer resumes exactly from its Last-Event-ID (AEP-0003 §8.4).
    this.closed = true;
    this.res.destroy();
  }
  drained(): Promise<void> {
    return new Promise((resolve) => {
      if (this.closed || this.res.writableLength === 0) return resolve();
      const done = () => { this.res.off('drain', done); this.res.off('close', done); resolve(); };
      this.res.on('drain', done); this.res.on('close', done);
    });
  }
}

interface HelloInfo { role: 'emitter' | 'consumer' | 'both'; identity: Record<string, unknown>; capabilities: Record<string, unknown> }

class WsConn implements ConsumerSink {
  readonly kind = 'ws' as const;
  closed = false;
  corked = false;
  hello: HelloInfo | null = null;
  readonly claims = new Set<string>();
  readonly subs = new Map<string, Subscription>();
  lastSeen = Date.now();
  lastPing = Date.now();
  constructor(readonly ws: WebSocket, readonly authed: boolean, private readonly socket: Duplex) {}
  buffered(): number { return this.ws.bufferedAmount; }
  frame(f: Record<string, unknown>): void {
    if (!this.closed && this.ws.readyState === 1) this.ws.send(JSON.stringify(f));
  }
  deliver(_sub: Subscription, o: Outgoing, ceiling: CaptureLevel | undefined): void {
    if (this.closed || this.ws.readyState !== 1) return;
    corkForTick(this, this.socket);
    // A text frame whose UTF-8 payload is encoded once for every subscriber.
    this.ws.send(o.frame('ws', ceiling, (text) => Buffer.from(text, 'utf8')), { binary: false });
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
  drained(): Promise<void> {
    return new Promise((resolve) => {
      const tick = () => {
        if (this.closed || this.ws.bufferedAmount === 0) resolve(); else setTimeout(tick, 5);
      };
      tick();
    });
  }
}

/** Health counters (GET /healthz). */
export interface RelayStats {
  ingested: number; duplicates: number; held: number; heldBytes: number; sessions: number;
  evicted: number; sessionsEvicted: number; consumers: number; subscriptions: number;
  delivered: number; dropped: number; slowDisconnects: number; maxQueuedBytes: number; sockets: number;
  commandsForwarded: number; commandsRefused: number; storeCommits: number; storeFailures: number;
}

/** One running relay. Create through `startRelay`. */
export class Relay {
  readonly server: Server;
  private readonly wss: WebSocketServer;
  readonly buffer: ReplayBuffer;
  readonly hub: Hub;
  private readonly auth: Auth;
  private readonly claims = new Map<string, Set<WsConn>>();
  private readonly sockets = new Set<WsConn>();
  private readonly sse = new Set<SseSink>();
  private nextRowid = 1;
  private ticker: NodeJS.Timeout | undefined;
  private closing = false;
  private readonly counters = { ingested: 0, commandsForwarded: 0, commandsRefused: 0 };
  private readonly loopbackHosts: Set<string> | null;
  private push: PushRoutes | null = null;

  constructor(readonly opts: ResolvedOptions, private readonly store: SqliteStore | null) {
    this.auth = new Auth(opts.token);
    this.buffer = new ReplayBuffer({ depth: opts.bufferDepth, maxSessions: opts.maxSessions, totalBytes: opts.totalBytes }, store);
    this.hub = new Hub({ slowConsumerBytes: opts.slowConsumerBytes, maxConsumerBytes: opts.maxConsumerBytes }, opts.log);
    const loop = ['127.0.0.1', 'localhost', '::1', '[::1]'];
    // DNS-rebinding guard: a loopback relay only answers Host names that are loopback.
    this.loopbackHosts = loop.includes(opts.host) ? new Set([...loop, opts.host]) : null;
    this.server = createServer({ headersTimeout: opts.headersTimeoutMs, requestTimeout: opts.requestTimeoutMs, connectionsCheckingInterval: Math.min(1000, opts.headersTimeoutMs) }, (req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        opts.log(`internal error on ${req.method ?? '?'} ${scrubUrl(req.url)}: ${err instanceof Error ? err.message : String(err)}`);
        if (!res.headersSent) json(res, 500, { error: 'internal', detail: 'internal relay error' });
        else res.destroy();
      });
    });
    this.server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
      if (!socket.writable) { socket.destroy(); return; }
      const status = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? '408 Request Timeout' : err.code === 'HPE_HEADER_OVERFLOW' ? '431 Request Header Fields Too Large' : '400 Bad Request';
      const body = JSON.stringify({ error: status.startsWith('408') ? 'request-timeout' : 'bad-request', detail: 'malformed or incomplete HTTP request' });
      socket.end(`HTTP/1.1 ${status}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    });
    this.wss = new WebSocketServer({ noServer: true, maxPayload: opts.maxBodyBytes, clientTracking: false });
    this.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      try { this.upgrade(req, socket, head); } catch (err) {
        opts.log(`upgrade failed: ${err instanceof Error ? err.message : String(err)}`);
        socket.destroy();
      }
    });
  }

  // ---------------------------------------------------------------- store

  /** Rebuild the buffer from the durable store (marks first, so tombstones apply). */
  async load(): Promise<void> {
    if (this.opts.push) this.push = await PushRoutes.open(this.opts.storePath, this.opts.push);
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

  // ---------------------------------------------------------------- ingest

  /** Attributes the buffer orders and routes on (AEP-0001 §5, §7), from a parsed Event. */
  private describe(ev: Record<string, unknown>): { source: string; id: string; session: string | null; pos: Pos; positioned: boolean; type: string; captureRank: number } {
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
  ingest(inc: Incoming, from: WsConn | null): void {
    const ev = inc.event;
    const d = this.describe(ev);
    this.counters.ingested++;
    this.buffer.admitNew(d.source, d.id, (rowid) => ({ rowid, source: d.source, id: d.id, session: d.session, pos: d.pos, positioned: d.positioned, type: d.type, raw: inc.raw, bytes: inc.bytes, captureRank: d.captureRank }), () => this.nextRowid++);
    if (from && d.positioned && d.session !== null && !from.claims.has(d.session)) {
      from.claims.add(d.session);
      let set = this.claims.get(d.session);
      if (!set) this.claims.set(d.session, (set = new Set()));
      set.add(from);
    }
    // Live fan-out as received, redeliveries included (AEP-0003 §5): consumers dedupe.
    if (this.hub.consumerCount > 0) this.hub.publish(new Outgoing(inc.raw, d.type, d.session, d.pos, d.positioned, d.captureRank, severityRank(ev['severity'] ?? 'info'), ev));
  }

  // ---------------------------------------------------------------- HTTP

  private discovery(): Record<string, unknown> {
    return {
      aep: [...SUPPORTED_VERSIONS],
      role: 'collector',
      endpoints: { events: '/events', stream: '/stream', socket: '/socket' },
      capabilities: this.capabilities(),
    };
  }

  private capabilities(): Record<string, unknown> {
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

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = parseUrl(req.url);
    if (!url) return json(res, 400, { error: 'bad-request', detail: 'the request target is not a valid path' });
    const path = url.pathname;
    if (this.loopbackHosts) {
      const host = (req.headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
      if (!this.loopbackHosts.has(host)) return json(res, 403, { error: 'forbidden-host', detail: 'this relay listens on loopback and only answers loopback Host names' });
    }
    if (this.auth.required) {
      res.setHeader('Access-Control-Allow-Origin', '*');
      res.setHeader('Access-Control-Expose-Headers', 'Content-Type');
    }
    if (req.method === 'OPTIONS') {
      res.writeHead(204, this.auth.required ? {
        'Access-Control-Allow-Methods': 'GET, POST, HEAD, OPTIONS',
        'Access-Control-Allow-Headers': 'authorization, content-type, aep-version, last-event-id',
        'Access-Control-Max-Age': '600',
      } : {});
      res.end();
      return;
    }
    const authed = this.auth.authenticated(req, url);
    if (PROTOCOL_PATHS.has(path) && path !== '/healthz' && this.auth.required && !authed) {
      req.resume();
      return json(res, 401, { error: 'unauthorized', detail: 'missing or invalid bearer token (AEP-0003 §8.1)' }, { 'WWW-Authenticate': 'Bearer' });
    }
    if (this.push && PushRoutes.handles(path)) { const t = Auth.presented(req, url); return this.push.handle(req, res, path, authed && t ? { key: tokenKey(t), owner: true } : null, this.auth.required); }
    switch (path) {
      case '/events':
        if (req.method === 'GET' || req.method === 'HEAD') return json(res, 200, this.discovery());
        if (req.method === 'POST') return this.post(req, res);
        return json(res, 405, { error: 'method-not-allowed', detail: 'use GET (discovery) or POST (ingest)' }, { Allow: 'GET, POST' });
      case '/.well-known/aep':
        if (req.method === 'GET' || req.method === 'HEAD') return json(res, 200, this.discovery());
        return json(res, 405, { error: 'method-not-allowed', detail: 'use GET' }, { Allow: 'GET' });
      case '/stream':
        if (req.method === 'GET') return this.stream(req, res, url);
        return json(res, 405, { error: 'method-not-allowed', detail: 'use GET' }, { Allow: 'GET' });
      case '/socket':
        return json(res, 426, { error: 'upgrade-required', detail: 'the WebSocket binding needs an Upgrade request (AEP-0003 §3.5)' }, { Upgrade: 'websocket' });
      case '/healthz':
        return json(res, 200, !this.auth.required || authed ? { ok: true, ...this.stats() } : { ok: true });
      default:
        if ((req.method === 'GET' || req.method === 'HEAD') && this.opts.staticDir !== undefined) {
          if (await serveStatic(this.opts.staticDir, path, req, res)) return;
        }
        return json(res, 404, { error: 'not-found', detail: `no resource at ${path.slice(0, 200)}` });
    }
  }

  /** Counters for /healthz and tests. */
  stats(): RelayStats {
    return {
      ingested: this.counters.ingested, duplicates: this.buffer.stats.duplicates, held: this.buffer.heldEvents,
      heldBytes: this.buffer.heldBytes, sessions: this.buffer.sessionCount, evicted: this.buffer.stats.evicted,
      sessionsEvicted: this.buffer.stats.sessionsEvicted, consumers: this.hub.consumerCount, subscriptions: this.hub.stats.subscriptions,
      delivered: this.hub.stats.delivered, dropped: this.hub.stats.dropped, slowDisconnects: this.hub.stats.slowDisconnects,
      maxQueuedBytes: this.hub.stats.maxQueuedBytes,
      sockets: this.sockets.size, commandsForwarded: this.counters.commandsForwarded, commandsRefused: this.counters.commandsRefused,
      storeCommits: this.store?.stats.commits ?? 0, storeFailures: this.store?.stats.failures ?? 0,
    };
  }

  private async post(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // Version gate before reading the body (AEP-0003 §3.2.2).
    const version = req.headers['aep-version'];
    if (version !== '0.1') {
      req.resume();
      return json(res, 426, { error: 'version-unsupported', detail: `AEP-Version ${typeof version === 'string' ? `"${version.slice(0, 20)}"` : 'header missing'}; supported: 0.1`, versions: [...SUPPORTED_VERSIONS] });
    }
    const ct = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (ct !== 'application/json' && ct !== 'application/x-ndjson') {
      req.resume();
      return json(res, 415, { error: 'unsupported-media-type', detail: 'Content-Type must be application/json or application/x-ndjson (AEP-0003 §3.2)' });
    }
    const max = this.opts.maxBodyBytes;
    const tooLarge = () => {
      json(res, 413, { error: 'payload-too-large', detail: `body exceeds maxBodyBytes=${max}` }, { Connection: 'close' });
      // Drain what the client is still sending for a moment so it can read the answer, then cut.
      req.on('data', () => {});
      setTimeout(() => req.socket.destroy(), 2000).unref();
    };
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > max) return tooLarge();
    const chunks: Buffer[] = [];
    let size = 0;
    const body = await new Promise<Buffer | null>((resolve) => {
      const onData = (c: Buffer) => {
        size += c.length;
        if (size > max) { req.off('data', onData); resolve(null); return; }
        chunks.push(c);
      };
      req.on('data', onData);
      req.on('end', () => resolve(Buffer.concat(chunks)));
      req.on('error', () => resolve(Buffer.alloc(0)));
      req.on('close', () => resolve(Buffer.concat(chunks)));
    });
    if (body === null) return tooLarge();
    if (req.destroyed && !req.complete) return;
    const parsed = parseBody(body, ct === 'application/x-ndjson', this.opts.maxBatchEvents);
    if (!parsed.ok) return json(res, parsed.err.status, parsed.err.body);
    for (const inc of parsed.events) this.ingest(inc, null);
    try {
      await this.store?.durable();
    } catch (err) {
      this.opts.log(`store write failed: ${err instanceof Error ? err.message : String(err)}`);
      return json(res, 503, { error: 'store-unavailable', detail: 'the durable store could not commit; retry with the same Event ids' });
    }
    json(res, 202, { accepted: parsed.events.length });
  }

  private stream(req: IncomingMessage, res: ServerResponse, url: URL): void {
    const q = url.searchParams;
    const fail = (code: string, detail: string) => json(res, 400, { error: code, detail });
    let filter: unknown; let from: unknown;
    const fq = q.get('filter');
    if (fq !== null) { try { filter = JSON.parse(fq); } catch { return fail('invalid-filter', 'filter is not valid JSON (AEP-0003 §6.1)'); } }
    const fromQ = q.get('from');
    if (fromQ !== null) {
      if (fromQ === 'all') from = 'all';
      else { try { from = JSON.parse(fromQ); } catch { return fail('invalid-filter', 'from is not valid JSON nor "all" (AEP-0003 §7)'); } }
    } else {
      const lei = req.headers['last-event-id'];
      if (typeof lei === 'string' && lei !== '') {
        const t = parseToken(lei);
        if (!t) return fail('invalid-filter', 'Last-Event-ID must be {session}:{epoch}:{seq} (AEP-0003 §7)');
        from = [t];
      }
    }
    const capture = q.get('capture') ?? undefined;
    const c = compileSpec(filter, from, capture, this.opts.maxFromPositions);
    if (!c.ok) return fail(c.code, c.detail);
    const live = q.get('live') !== '0';
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no' });
    res.flushHeaders();
    const sink = new SseSink(res);
    const sub = new Subscription('sse', c.spec, sink, live);
    this.sse.add(sink);
    res.on('close', () => { sink.closed = true; this.sse.delete(sink); this.hub.remove(sub); });
    // Register before the snapshot (same synchronous block): nothing lost, nothing doubled.
    if (live) this.hub.add(sub);
    const parts = this.snapshot(c.spec, live);
    if (parts.length === 0 && live) return;
    this.hub.replay(sub, parts, () => sink.drained()).catch(() => res.destroy());
  }

  private snapshot(spec: SubscriptionSpec, live: boolean): ReplayPart[] {
    if (spec.from === 'all') return this.buffer.snapshotAll();
    if (spec.from) return this.buffer.snapshotFrom(spec.from);
    return live ? [] : this.buffer.snapshotAll();
  }

  // ---------------------------------------------------------------- WebSocket

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    const refuse = (status: string, error: string) => {
      const body = JSON.stringify({ error });
      socket.end(`HTTP/1.1 ${status}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    };
    const url = parseUrl(req.url);
    if (!url) return refuse('400 Bad Request', 'bad-request');
    if (url.pathname !== '/socket' || this.closing) return refuse('404 Not Found', 'not-found');
    if (this.loopbackHosts && !this.loopbackHosts.has((req.headers.host ?? '').replace(/:\d+$/, '').toLowerCase())) return refuse('403 Forbidden', 'forbidden-host');
    const authed = this.auth.authenticated(req, url);
    if (this.auth.required && !authed) return refuse('401 Unauthorized', 'unauthorized');
    this.wss.handleUpgrade(req, socket, head, (ws) => this.connection(ws, authed, socket));
  }

  private connection(ws: WebSocket, authed: boolean, socket: Duplex): void {
    const conn = new WsConn(ws, authed, socket);
    this.sockets.add(conn);
    ws.on('error', () => {});
    ws.on('message', (data: RawData, isBinary: boolean) => {
      try { this.frame(conn, data, isBinary); } catch (err) {
        this.opts.log(`error handling a WebSocket frame: ${err instanceof Error ? err.message : String(err)}`);
      }
    });
    ws.on('pong', () => { conn.lastSeen = Date.now(); }); // protocol-level pong counts as liveness too
    ws.on('close', () => this.dropConn(conn));
  }

  private dropConn(conn: WsConn): void {
    if (!this.sockets.delete(conn)) return;
    conn.closed = true;
    for (const s of conn.claims) {
      const set = this.claims.get(s);
      set?.delete(conn);
      if (set && set.size === 0) this.claims.delete(s);
    }
    this.hub.removeSink(conn);
  }

  private frame(conn: WsConn, data: RawData, isBinary: boolean): void {
    conn.lastSeen = Date.now();
    if (conn.closed) return;
    if (isBinary) {
      // Binary frames are reserved in 0.1 (AEP-0003 §3.5): error, then close 1003.
      conn.frame({ type: 'error', code: 'invalid-frame', detail: 'binary frames are reserved in AEP 0.1 (AEP-0003 §3.5)' });
      conn.closed = true;
      conn.ws.close(1003, 'binary frames are not supported');
      return;
    }
    const text = Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data as ArrayBuffer).toString('utf8');
    let msg: unknown;
    try { msg = JSON.parse(text); } catch { msg = undefined; }
    const type = isObject(msg) && typeof msg['type'] === 'string' ? msg['type'] : undefined;
    if (conn.hello === null) {
      if (type !== 'hello' || !isObject(msg)) {
        conn.frame({ type: 'error', code: 'hello-required', detail: 'the first frame must be hello (AEP-0003 §3.5.1)' });
        conn.closed = true;
        conn.ws.close(1008, 'hello required');
        return;
      }
      return this.hello(conn, msg);
    }
    if (!isObject(msg) || type === undefined) {
      conn.frame({ type: 'error', code: 'invalid-frame', detail: 'a frame must be a JSON object with a string type (AEP-0003 §2)' });
      return;
    }
    if (type.includes('.')) return this.wsEvent(conn, msg, text);
    switch (type) {
      case 'subscribe': return this.subscribe(conn, msg);
      case 'unsubscribe': return this.unsubscribe(conn, msg);
      case 'roster': return this.roster(conn, msg);
      case 'ping': return conn.frame(msg['t'] === undefined ? { type: 'pong' } : { type: 'pong', t: msg['t'] });
      default: return; // pong, closing, a second hello, unknown frames: ignored (AEP-0003 §2)
    }
  }

  private hello(conn: WsConn, msg: Record<string, unknown>): void {
    const versions = msg['versions'];
    const pick = Array.isArray(versions) ? versions.find((v) => typeof v === 'string' && (SUPPORTED_VERSIONS as readonly string[]).includes(v)) as string | undefined : undefined;
    if (pick === undefined) {
      conn.frame({ type: 'error', code: 'version-unsupported', detail: 'no common AEP version (AEP-0003 §4 rule 1)', versions: [...SUPPORTED_VERSIONS] });
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
    conn.frame({ type: 'hello', versions: [pick], role: 'both', capabilities: this.capabilities() });
  }

  private wsEvent(conn: WsConn, msg: Record<string, unknown>, text: string): void {
    const c = checkEvent(msg, true);
    if (!c.ok) {
      const f: Record<string, unknown> = { type: 'error', code: 'invalid-event', detail: c.detail };
      if (typeof msg['id'] === 'string') f['cause'] = msg['id'];
      conn.frame(f);
      return;
    }
    const trimmed = text.trim();
    const raw = /[\r\n]/.test(trimmed) ? JSON.stringify(msg) : trimmed;
    const inc: Incoming = { event: msg as unknown as AepEvent, raw, bytes: Buffer.byteLength(raw) };
    if (isCommandType(msg['type'] as string)) return this.route(conn, inc, text);
    this.ingest(inc, conn);
  }

  /** Control routing, AEP-0004 §4 (brief 06 §5.2). Refusals are frames to the sender only. */
  private route(conn: WsConn, inc: Incoming, text: string): void {
    const ev = inc.event as unknown as Record<string, unknown>;
    const id = ev['id'] as string;
    const type = ev['type'] as string;
    const session = ev['session'] as string;
    const refuse = (code: string, detail: string) => {
      this.counters.commandsRefused++;
      conn.frame({ type: 'error', cause: id, code, detail });
    };
    if (!this.auth.required) return refuse('unauthorized', 'this relay runs without a token (observe-only): commands are refused (AEP-0004 §4.1)');
    if (!conn.authed) return refuse('unauthorized', 'commands need an authenticated connection (AEP-0004 §4.1)');
    const claimants = [...(this.claims.get(session) ?? [])].filter((c) => !c.closed && c.ws.readyState === 1);
    if (claimants.length === 0) return refuse('no-route', `no connected emitter claims session ${session.slice(0, 200)} (AEP-0004 §4.2)`);
    if (claimants.length > 1) return refuse('ambiguous', `${claimants.length} live connections claim session ${session.slice(0, 200)} (AEP-0004 §4.5)`);
    const target = claimants[0]!;
    const control = target.hello?.capabilities['control'];
    const accepts = isObject(control) && Array.isArray(control['accepts']) ? control['accepts'] : [];
    if (!accepts.includes(type)) return refuse('unsupported', `the target of session ${session.slice(0, 200)} does not accept ${type} (AEP-0004 §4.2)`);
    // Forward the received bytes (retransmits too: the target's recorded re-ack recovers a lost ack).
    target.ws.send(text);
    this.counters.commandsForwarded++;
    this.ingest(inc, null); // persisted in the session history and fanned out (AEP-0004 §4.4)
  }

  private subscribe(conn: WsConn, msg: Record<string, unknown>): void {
    const id = msg['id'];
    const err = (code: string, detail: string) => conn.frame({ type: 'error', id, code, detail });
    if (typeof id !== 'string' || id === '') return err('invalid-filter', 'subscribe needs a non-empty string id (AEP-0003 §6.5)');
    if (conn.hello?.role === 'emitter') return err('unauthorized', 'an emitter-role connection may not subscribe (AEP-0003 §6.5)');
    if (conn.subs.has(id)) return err('invalid-filter', `subscription id ${id.slice(0, 100)} is already in use on this connection`);
    if (conn.subs.size >= this.opts.maxSubscriptions) return err('limit-exceeded', `maxSubscriptions=${this.opts.maxSubscriptions} per connection`);
    const c = compileSpec(msg['filter'], msg['from'], msg['capture'], this.opts.maxFromPositions);
    if (!c.ok) return err(c.code, c.detail);
    const sub = new Subscription(id, c.spec, conn, true);
    conn.subs.set(id, sub);
    conn.frame({ type: 'subscribed', id });
    this.hub.add(sub);
    const parts = this.snapshot(c.spec, true);
    if (parts.length === 0) return;
    this.hub.replay(sub, parts, () => conn.drained()).catch(() => conn.ws.terminate());
  }

  private unsubscribe(conn: WsConn, msg: Record<string, unknown>): void {
    const id = msg['id'];
    if (typeof id !== 'string') { conn.frame({ type: 'error', id, code: 'invalid-filter', detail: 'unsubscribe needs the subscription id' }); return; }
    const sub = conn.subs.get(id);
    if (sub) { conn.subs.delete(id); this.hub.remove(sub); sub.cancelled = true; sub.pending = []; }
    conn.frame({ type: 'unsubscribed', id });
  }

  private roster(conn: WsConn, msg: Record<string, unknown>): void {
    const id = msg['id'];
    if (typeof id !== 'string' || id === '') { conn.frame({ type: 'error', id, code: 'invalid-frame', detail: 'roster needs a non-empty string id (AEP-0003 §4.1)' }); return; }
    if (conn.hello?.role === 'emitter') { conn.frame({ type: 'error', id, code: 'unauthorized', detail: 'an emitter-role connection may not ask for the roster (AEP-0003 §4.1)' }); return; }
    const entries: Array<Record<string, unknown>> = [];
    for (const [session, set] of this.claims) {
      for (const c of set) {
        if (c.closed || c.ws.readyState !== 1) continue;
        const e: Record<string, unknown> = { session };
        const ident = c.hello?.identity ?? {};
        if (typeof ident['agent'] === 'string') e['agent'] = ident['agent'];
        if (typeof ident['instance'] === 'string') e['instance'] = ident['instance'];
        const caps = c.hello?.capabilities ?? {};
        if (caps['control'] !== undefined) e['control'] = caps['control'];
        if (caps['emits'] !== undefined) e['emits'] = caps['emits'];
        entries.push(e);
      }
    }
    conn.frame({ type: 'roster', id, entries });
  }

  // ---------------------------------------------------------------- lifecycle

  /** Listen; resolves with the bound port. */
  async listen(): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.opts.port, this.opts.host, () => { this.server.off('error', reject); resolve(); });
    });
    this.ticker = setInterval(() => this.tick(), this.opts.heartbeatMs);
    this.ticker.unref();
    const addr = this.server.address();
    return typeof addr === 'object' && addr ? addr.port : this.opts.port;
  }

  private tick(): void {
    for (const s of this.sse) if (!s.closed && s.buffered() < this.opts.slowConsumerBytes) s.res.write(': ping\n\n');
    const now = Date.now();
    for (const c of this.sockets) {
      if (now - c.lastSeen > WS_IDLE_MS) { c.closed = true; c.ws.terminate(); continue; }
      if (c.hello && now - c.lastPing >= WS_PING_MS) {
        c.lastPing = now;
        c.frame({ type: 'ping', t: now });
        try { c.ws.ping(); } catch { /* closing */ }
      }
    }
  }

  /** Graceful shutdown (AEP-0003 §3.5.4): stop accepting, `closing` + 1001 on sockets, end SSE, flush the store. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    if (this.ticker) clearInterval(this.ticker);
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const s of this.sse) { if (!s.closed) { s.closed = true; s.res.end(': closing\n\n'); } }
    const waits: Array<Promise<void>> = [];
    for (const c of this.sockets) {
      c.closingFrame('shutdown');
      c.closed = true;
      waits.push(new Promise<void>((resolve) => {
        if (c.ws.readyState === 3) return resolve();
        c.ws.once('close', () => resolve());
        c.ws.close(1001, 'relay shutting down');
        setTimeout(() => { c.ws.terminate(); resolve(); }, 1000).unref();
      }));
    }
    await Promise.all(waits);
    this.server.closeIdleConnections();
    setTimeout(() => this.server.closeAllConnections(), 1000).unref();
    await closed;
    this.push?.close();
    await this.store?.close();
  }
}

/** Parse a resume token `{session}:{epoch}:{seq}` (from the right, AEP-0003 §7). */
function parseToken(s: string): { session: string; epoch: number; seq: number } | null {
  return parseResumeToken(s) ?? null;
}
