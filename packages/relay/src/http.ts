// HTTP routes (AEP-0003 §3.2, §3.4): discovery, the ingest endpoint
// `POST /events`, `/stream` (handed to the SSE binding), `/healthz`, static files.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { Auth, scrubUrl, type Principal } from './auth.js';
import { BackendUnavailableError } from './backend.js';
import { PushRoutes, tokenKey } from './push.js';
import { SUPPORTED_VERSIONS, type RelayCore } from './core.js';
import { rawError, sendError, sendJson } from './errors.js';
import { securityHeaders } from './headers.js';
import { parseBody } from './ingest.js';
import type { SseBinding } from './sse.js';
import { serveStatic } from './static.js';
import { TokenRequestError } from './tokens.js';
import { errText, hostName, parseUrl } from './util.js';

const PROTOCOL_PATHS = new Set(['/events', '/stream', '/socket', '/.well-known/aep', '/healthz', '/tokens']);
const TOKEN_PATH = /^\/tokens\/([^/]{1,64})$/;
const MAX_ADMIN_BODY = 64 * 1024;
/** Bytes of an oversize body read and discarded before the 413 (at least 4x the limit). */
const DRAIN_LIMIT = 64 * 1024 * 1024;
/** How long a connection cut after an oversize body is still read (and discarded) after the answer. */
const LINGER_MS = 5000;

/**
 * Close a connection whose client may still be sending, without a reset (a lingering close, as
 * nginx and Apache do). Node closes a `Connection: close` response's socket with destroySoon():
 * FIN, then close(2) as soon as the FIN is written; with bytes from the client still unread,
 * close(2) makes the kernel answer with a reset, and a client that is still writing sees the reset
 * on its write and drops the answer it had received but not read yet. Here the socket sends its
 * FIN and goes on reading (the request, resumed, discards the rest of its body) until the client
 * closes its side, for at most LINGER_MS.
 */
function lingerClose(socket: Duplex): void {
  (socket as Duplex & { destroySoon: () => void }).destroySoon = () => socket.end();
  const timer = setTimeout(() => socket.destroy(), LINGER_MS).unref();
  socket.once('close', () => clearTimeout(timer));
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** The HTTP side of the relay. */
export class HttpRoutes {
  constructor(
    private readonly core: RelayCore,
    private readonly sse: SseBinding,
    private readonly stats: () => Record<string, unknown>,
    private readonly loopbackHosts: Set<string> | null,
  ) {}

  /** Called after a token is revoked (live connections using it are closed). */
  onRevoke: (id: string) => void = () => {};

  /** A malformed or timed-out request that never became a ServerResponse (node:http `clientError`). */
  static clientError(err: NodeJS.ErrnoException, socket: Duplex): void {
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      socket.end(rawError('request-timeout', 408, 'Request Timeout', 'malformed or incomplete HTTP request'));
      return;
    }
    if (err.code === 'HPE_HEADER_OVERFLOW') {
      socket.end(rawError('bad-request', 431, 'Request Header Fields Too Large', 'malformed or incomplete HTTP request'));
      return;
    }
    socket.end(rawError('bad-request', 400, 'Bad Request', 'malformed or incomplete HTTP request'));
  }

  /** The request handler; a throw is answered 500 `internal` (never a client-fault code). */
  request(req: IncomingMessage, res: ServerResponse): void {
    this.handle(req, res).catch((err: unknown) => {
      this.core.opts.log(`internal error on ${req.method ?? '?'} ${scrubUrl(req.url)}: ${errText(err)}`);
      if (!res.headersSent) sendError(res, 'internal', 'internal relay error');
      else res.destroy();
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = parseUrl(req.url);
    if (!url) return sendError(res, 'bad-request', 'the request target is not a valid path');
    const path = url.pathname;
    if (this.loopbackHosts && !this.loopbackHosts.has(hostName(req.headers.host))) {
      return sendError(res, 'forbidden-host', 'this relay listens on loopback and only answers loopback Host names');
    }
    const auth = this.core.auth;
    if (auth.required) {
      res.setHeader('Access-Control-Allow-Origin', '*');
      res.setHeader('Access-Control-Expose-Headers', 'Content-Type');
    }
    if (req.method === 'OPTIONS') {
      res.writeHead(
        204,
        auth.required
          ? {
              ...securityHeaders(),
              'Access-Control-Allow-Methods': 'GET, POST, DELETE, HEAD, OPTIONS',
              'Access-Control-Allow-Headers': 'authorization, content-type, aep-version, last-event-id',
              'Access-Control-Max-Age': '600',
            }
          : securityHeaders(),
      );
      res.end();
      return;
    }
    // Draining (contract C5): the connections kept may still deliver Events; nothing else starts.
    if (this.core.closing && !(path === '/events' && req.method === 'POST')) {
      req.resume();
      return sendError(res, 'shutting-down', 'the relay is stopping', { headers: { Connection: 'close' } });
    }
    const principal = auth.principal(req, url);
    const tokenPath = TOKEN_PATH.exec(path);
    if ((PROTOCOL_PATHS.has(path) || tokenPath) && path !== '/healthz' && principal === null) {
      req.resume();
      return sendError(res, 'unauthorized', 'missing or invalid bearer token (AEP-0003 §8.1)', { status: 401, headers: { 'WWW-Authenticate': 'Bearer' } });
    }
    if (tokenPath) return this.tokensApi(req, res, principal!, tokenPath[1]!);
    const push = this.core.push;
    if (push && PushRoutes.handles(path)) {
      // Contract C10 routes (push.ts): the owner lists and deletes everything; a scoped token is
      // keyed by its id, needs `read`, and administers subscriptions only with `admin` (C7).
      if (principal && principal.kind === 'scoped' && !principal.readCeiling()) {
        req.resume();
        return sendError(res, 'forbidden', 'token lacks scope read');
      }
      const t = Auth.presented(req, url);
      const who =
        principal === null || !principal.authenticated || t === undefined
          ? null
          : principal.kind === 'owner'
            ? { key: tokenKey(t), owner: true }
            : { key: `token:${principal.tokenId ?? ''}`, owner: principal.check('admin') === null };
      return push.handle(req, res, path, who, auth.required);
    }
    switch (path) {
      case '/events':
        if (req.method === 'GET' || req.method === 'HEAD') return sendJson(res, 200, this.core.discovery());
        if (req.method === 'POST') return this.post(req, res, principal!);
        return sendError(res, 'method-not-allowed', 'use GET (discovery) or POST (ingest)', { headers: { Allow: 'GET, POST' } });
      case '/.well-known/aep':
        if (req.method === 'GET' || req.method === 'HEAD') return sendJson(res, 200, this.core.discovery());
        return sendError(res, 'method-not-allowed', 'use GET', { headers: { Allow: 'GET' } });
      case '/stream':
        if (req.method === 'GET') {
          if (!principal!.readCeiling()) return sendError(res, 'forbidden', 'token lacks scope read');
          return this.sse.open(req, res, url, principal!);
        }
        return sendError(res, 'method-not-allowed', 'use GET', { headers: { Allow: 'GET' } });
      case '/socket':
        return sendError(res, 'upgrade-required', 'the WebSocket binding needs an Upgrade request (AEP-0003 §3.5)', { headers: { Upgrade: 'websocket' } });
      case '/healthz': {
        // Topology counts only for a reader or an administrator (AEP-0003 §8).
        const counters = principal !== null && (principal.check('read') === null || principal.check('admin') === null);
        // A scale-out backend that cannot take Events makes the relay unhealthy (503), so a load
        // balancer stops sending it traffic until it recovers by itself (issue 16 item 3).
        const health = this.core.backend?.health();
        if (health && !health.ok) {
          return sendJson(
            res,
            503,
            counters
              ? { ok: false, error: 'nats-unavailable', backend: { name: this.core.backend!.name, ...health.detail }, ...this.stats() }
              : { ok: false, error: 'nats-unavailable' },
          );
        }
        const backend = this.core.backend && counters ? { backend: { name: this.core.backend.name, ...health?.detail } } : {};
        return sendJson(res, 200, counters ? { ok: true, ...backend, ...this.stats() } : { ok: true });
      }
      case '/tokens':
        return this.tokensApi(req, res, principal!, undefined);
      default:
        if ((req.method === 'GET' || req.method === 'HEAD') && this.core.opts.staticDir !== undefined) {
          if (await serveStatic(this.core.opts.staticDir, path, req, res)) return;
        }
        return sendError(res, 'not-found', `no resource at ${path.slice(0, 200)}`);
    }
  }

  /**
   * Token management (contract C7), owner or `admin`: `POST /tokens` → 201 (the token is shown
   * once), `GET /tokens`, `DELETE /tokens/{id}`. Answered after the store committed.
   */
  private async tokensApi(req: IncomingMessage, res: ServerResponse, principal: Principal, id: string | undefined): Promise<void> {
    if (!principal.authenticated) {
      req.resume();
      return sendError(res, 'forbidden', 'this relay runs without a token: scoped tokens need an owner token (--token)');
    }
    const missing = principal.check('admin');
    if (missing) {
      req.resume();
      return sendError(res, 'forbidden', `token lacks scope ${missing}`);
    }
    const tokens = this.core.auth.tokens;
    if (id === undefined && req.method === 'GET') return sendJson(res, 200, { tokens: tokens.list() });
    if (id === undefined && req.method === 'POST') {
      const ct = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      if (ct !== 'application/json') {
        req.resume();
        return sendError(res, 'unsupported-media-type', 'Content-Type must be application/json');
      }
      const body = await readBody(req, MAX_ADMIN_BODY);
      if (body === 'too-large') return this.tooLarge(req, res, MAX_ADMIN_BODY);
      if (body === null) return;
      let parsed: unknown;
      try {
        parsed = JSON.parse(body.toString('utf8'));
      } catch {
        return sendError(res, 'bad-request', 'the body is not valid JSON');
      }
      let made;
      try {
        made = tokens.create(parsed, new Date());
      } catch (err) {
        if (err instanceof TokenRequestError) return sendError(res, 'bad-request', err.message);
        throw err;
      }
      if (!(await this.commit(res))) return;
      this.core.opts.log(`token ${made.view.id} created (${made.view.scopes.join(' ')})`);
      return sendJson(res, 201, {
        id: made.view.id,
        token: made.token,
        name: made.view.name,
        scopes: made.view.scopes,
        created: made.view.created,
        ...(made.view.expires ? { expires: made.view.expires } : {}),
      });
    }
    if (id !== undefined && req.method === 'DELETE') {
      const rec = tokens.revoke(id, new Date());
      if (!rec) return sendError(res, 'not-found', `no token ${id}`);
      // The revocation holds in memory from here on (the token is refused): its live connections
      // are cut now too, before the commit. A commit that fails answers 503 (the revocation may
      // not survive a restart: retry), but never leaves a revoked token's streams open.
      this.onRevoke(id);
      if (!(await this.commit(res))) return;
      this.core.opts.log(`token ${id} revoked`);
      return sendJson(res, 200, { id, revoked: true });
    }
    req.resume();
    return sendError(res, 'method-not-allowed', id === undefined ? 'use GET (list) or POST (create)' : 'use DELETE (revoke)', {
      headers: { Allow: id === undefined ? 'GET, POST' : 'DELETE' },
    });
  }

  /** Wait for the store to commit what was queued; false (after a 503) when it cannot. */
  private async commit(res: ServerResponse): Promise<boolean> {
    try {
      await this.core.durable();
      return true;
    } catch (err) {
      this.core.opts.log(`store write failed: ${errText(err)}`);
      sendError(res, 'store-unavailable', 'the durable store could not commit; retry with the same Event ids');
      return false;
    }
  }

  /**
   * 413 reliably (issue 12 item 6): read and discard the rest of the body first, then answer and
   * close. Answering first and closing with unread bytes in the socket makes the kernel send a
   * reset, which the client may see before the answer. Bounded: past `DRAIN_LIMIT` more bytes
   * (or the request timeout) the answer goes out, then a FIN, and the connection lingers
   * (lingerClose) until the client closes it.
   */
  private tooLarge(req: IncomingMessage, res: ServerResponse, max: number): void {
    const answer = () => {
      if (!res.headersSent) sendError(res, 'payload-too-large', `body exceeds maxBodyBytes=${max}`, { headers: { Connection: 'close' } });
    };
    if (req.complete || req.readableEnded) {
      answer();
      return;
    }
    let drained = 0;
    const limit = Math.max(DRAIN_LIMIT, 4 * max);
    req.on('data', (c: Buffer) => {
      drained += c.length;
      if (drained > limit) {
        req.removeAllListeners('data');
        // The answer, then FIN; what the client still sends is read and discarded until it
        // closes (lingerClose): a close with unread bytes would reset the connection, and the
        // client would lose the answer (found as the 64 MiB drain test failing under load).
        lingerClose(req.socket);
        req.resume();
        answer();
      }
    });
    req.on('end', answer);
    req.on('error', () => req.socket.destroy());
    req.resume();
  }

  /** `POST /events` (AEP-0003 §3.2): version → media type → size → parse/validate → scope → admit → commit → 202. */
  private async post(req: IncomingMessage, res: ServerResponse, principal: Principal): Promise<void> {
    // Version gate before reading the body (AEP-0003 §3.2.2).
    const version = req.headers['aep-version'];
    if (version !== '0.1') {
      req.resume();
      return sendError(
        res,
        'version-unsupported',
        `AEP-Version ${typeof version === 'string' ? `"${version.slice(0, 20)}"` : 'header missing'}; supported: 0.1`,
        { more: { versions: [...SUPPORTED_VERSIONS] } },
      );
    }
    const ct = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (ct !== 'application/json' && ct !== 'application/x-ndjson') {
      req.resume();
      return sendError(res, 'unsupported-media-type', 'Content-Type must be application/json or application/x-ndjson (AEP-0003 §3.2)');
    }
    const max = this.core.opts.maxBodyBytes;
    const body = await readBody(req, max);
    if (body === 'too-large') return this.tooLarge(req, res, max);
    if (body === null) return;
    const admitted = this.admit(body, ct === 'application/x-ndjson', principal, res);
    if (admitted === null) return;
    // 202 only once the log (SQLite commit, or the backend's acknowledgement) made them durable.
    try {
      await admitted.durable;
    } catch (err) {
      if (!(err instanceof BackendUnavailableError)) throw err;
      this.core.opts.log(err.code === 'store-unavailable' ? `store write failed: ${err.message}` : `ingest refused: ${err.message}`);
      return sendError(
        res,
        err.code,
        `${err.code === 'nats-unavailable' ? 'the shared event log (NATS JetStream) is unreachable' : 'the durable store could not commit'}; retry with the same Event ids`,
      );
    }
    sendJson(res, 202, { accepted: admitted.count });
  }

  /**
   * Parse, check the scope of and append one body (synchronously): the parsed Events are not
   * referenced while `post()` waits for the commit, so they die young (issue 19: a body's parsed
   * objects kept across the commit were promoted by the scavenger). null: answered already.
   */
  private admit(body: Buffer, ndjson: boolean, principal: Principal, res: ServerResponse): { count: number; durable: Promise<void> } | null {
    const parsed = parseBody(body, ndjson, this.core.opts.maxBatchEvents);
    if (!parsed.ok) {
      sendJson(res, parsed.err.status, parsed.err.body);
      return null;
    }
    // Scope (contract C7): the whole batch is refused when one Event is outside the token's emit scope.
    for (let i = 0; i < parsed.events.length; i++) {
      const e = parsed.events[i]!.event;
      const missing = principal.check('emit', { agent: str(e['agent']), session: str(e['session']) });
      if (missing) {
        sendError(res, 'forbidden', `token lacks scope ${missing}`, { more: { line: i } });
        return null;
      }
    }
    let durable: Promise<void>;
    try {
      durable = this.core.log.append(parsed.events, null);
    } catch (err) {
      durable = Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    return { count: parsed.events.length, durable };
  }
}

/** Read a request body up to `max` bytes: the bytes, 'too-large', or null when the client went away. */
function readBody(req: IncomingMessage, max: number): Promise<Buffer | 'too-large' | null> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > max) return Promise.resolve('too-large');
  const chunks: Buffer[] = [];
  let size = 0;
  return new Promise((resolve) => {
    const onData = (c: Buffer) => {
      size += c.length;
      if (size > max) {
        req.off('data', onData);
        resolve('too-large');
        return;
      }
      chunks.push(c);
    };
    req.on('data', onData);
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', () => resolve(null));
    req.on('close', () => resolve(req.complete ? Buffer.concat(chunks) : null));
  });
}
