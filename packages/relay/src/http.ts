// HTTP routes (AEP-0003 §3.2, §3.4; brief 05 §4, §5): discovery, the ingest endpoint
// `POST /events`, `/stream` (handed to the SSE binding), `/healthz`, static files.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { scrubUrl } from './auth.js';
import { SUPPORTED_VERSIONS, type RelayCore } from './core.js';
import { rawError, sendError, sendJson } from './errors.js';
import { parseBody } from './ingest.js';
import type { SseBinding } from './sse.js';
import { serveStatic } from './static.js';
import { errText, hostName, parseUrl } from './util.js';

const PROTOCOL_PATHS = new Set(['/events', '/stream', '/socket', '/.well-known/aep', '/healthz']);

/** The HTTP side of the relay. */
export class HttpRoutes {
  constructor(
    private readonly core: RelayCore,
    private readonly sse: SseBinding,
    private readonly stats: () => Record<string, unknown>,
    private readonly loopbackHosts: Set<string> | null,
  ) {}

  /** A malformed or timed-out request that never became a ServerResponse (node:http `clientError`). */
  static clientError(err: NodeJS.ErrnoException, socket: Duplex): void {
    if (!socket.writable) { socket.destroy(); return; }
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') { socket.end(rawError('request-timeout', 408, 'Request Timeout', 'malformed or incomplete HTTP request')); return; }
    if (err.code === 'HPE_HEADER_OVERFLOW') { socket.end(rawError('bad-request', 431, 'Request Header Fields Too Large', 'malformed or incomplete HTTP request')); return; }
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
      res.writeHead(204, auth.required ? {
        'Access-Control-Allow-Methods': 'GET, POST, HEAD, OPTIONS',
        'Access-Control-Allow-Headers': 'authorization, content-type, aep-version, last-event-id',
        'Access-Control-Max-Age': '600',
      } : {});
      res.end();
      return;
    }
    const authed = auth.authenticated(req, url);
    if (PROTOCOL_PATHS.has(path) && path !== '/healthz' && auth.required && !authed) {
      req.resume();
      return sendError(res, 'unauthorized', 'missing or invalid bearer token (AEP-0003 §8.1)', { status: 401, headers: { 'WWW-Authenticate': 'Bearer' } });
    }
    switch (path) {
      case '/events':
        if (req.method === 'GET' || req.method === 'HEAD') return sendJson(res, 200, this.core.discovery());
        if (req.method === 'POST') return this.post(req, res);
        return sendError(res, 'method-not-allowed', 'use GET (discovery) or POST (ingest)', { headers: { Allow: 'GET, POST' } });
      case '/.well-known/aep':
        if (req.method === 'GET' || req.method === 'HEAD') return sendJson(res, 200, this.core.discovery());
        return sendError(res, 'method-not-allowed', 'use GET', { headers: { Allow: 'GET' } });
      case '/stream':
        if (req.method === 'GET') return this.sse.open(req, res, url);
        return sendError(res, 'method-not-allowed', 'use GET', { headers: { Allow: 'GET' } });
      case '/socket':
        return sendError(res, 'upgrade-required', 'the WebSocket binding needs an Upgrade request (AEP-0003 §3.5)', { headers: { Upgrade: 'websocket' } });
      case '/healthz':
        return sendJson(res, 200, !auth.required || authed ? { ok: true, ...this.stats() } : { ok: true });
      default:
        if ((req.method === 'GET' || req.method === 'HEAD') && this.core.opts.staticDir !== undefined) {
          if (await serveStatic(this.core.opts.staticDir, path, req, res)) return;
        }
        return sendError(res, 'not-found', `no resource at ${path.slice(0, 200)}`);
    }
  }

  /** `POST /events` (brief 05 §4): version → media type → size → parse/validate → admit → commit → 202. */
  private async post(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // Version gate before reading the body (AEP-0003 §3.2.2).
    const version = req.headers['aep-version'];
    if (version !== '0.1') {
      req.resume();
      return sendError(res, 'version-unsupported', `AEP-Version ${typeof version === 'string' ? `"${version.slice(0, 20)}"` : 'header missing'}; supported: 0.1`, { more: { versions: [...SUPPORTED_VERSIONS] } });
    }
    const ct = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (ct !== 'application/json' && ct !== 'application/x-ndjson') {
      req.resume();
      return sendError(res, 'unsupported-media-type', 'Content-Type must be application/json or application/x-ndjson (AEP-0003 §3.2)');
    }
    const max = this.core.opts.maxBodyBytes;
    const tooLarge = () => {
      sendError(res, 'payload-too-large', `body exceeds maxBodyBytes=${max}`, { headers: { Connection: 'close' } });
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
    const parsed = parseBody(body, ct === 'application/x-ndjson', this.core.opts.maxBatchEvents);
    if (!parsed.ok) return sendJson(res, parsed.err.status, parsed.err.body);
    for (const inc of parsed.events) this.core.ingest(inc, null);
    try {
      await this.core.store?.durable();
    } catch (err) {
      this.core.opts.log(`store write failed: ${errText(err)}`);
      return sendError(res, 'store-unavailable', 'the durable store could not commit; retry with the same Event ids');
    }
    sendJson(res, 202, { accepted: parsed.events.length });
  }
}
