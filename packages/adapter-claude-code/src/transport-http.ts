// The daemon's loopback HTTP endpoint (Claude Code `type:"http"` hooks, `GET /health`):
// POST /hooks/{Event} or /hook with the hook JSON; the answer is the response body. Every request
// must name a loopback Host (DNS rebinding), carry no browser Origin (no web page may plant or
// read hooks), present the per-install secret (`Authorization: Bearer`), and a hook must be
// `application/json` (a CORS-simple `text/plain` POST is refused). docs/security.md §6.
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { sameSecret } from './channel.js';
import { ADAPTER_ERRORS } from './errors.js';
import type { AdapterError } from './errors.js';
import type { HookExchange } from './exchange.js';
import type { RefusalLog } from './refusal-log.js';

/** Options of {@link listenHttp}. */
export interface HttpTransportOptions {
  host: string;
  port: number;
  /** Hook bodies above this are refused with 413 at once. */
  maxHookBytes: number;
  /** The per-install secret every request must present. */
  secret: string;
  refusals: RefusalLog;
  /** `GET /health` body. */
  health: () => Record<string, unknown>;
  /** Called once per readable hook. */
  handle: (x: HookExchange) => void;
}

/** A listening HTTP transport. */
export interface HttpTransport {
  url: string;
  port: number;
  close(): Promise<void>;
}

function json(res: ServerResponse, status: number, body: unknown, extra: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...extra });
  res.end(text);
}

function refuse(res: ServerResponse, status: number, code: string, message: string, extra: Record<string, string> = {}): void {
  json(res, status, { error: code, message }, extra);
}

/** Binds the endpoint; rejects with the listen error (EADDRINUSE, EACCES, ...). */
export async function listenHttp(o: HttpTransportOptions): Promise<HttpTransport> {
  const server: Server = createServer((req, res) => onRequest(o, req, res));
  server.on('clientError', (_err, socket) => {
    socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const url = `http://${o.host.includes(':') ? `[${o.host}]` : o.host}:${addr.port}`;
  return {
    url,
    port: addr.port,
    close: () => {
      const stopped = new Promise<void>((r) => server.close(() => r()));
      server.closeAllConnections();
      return stopped;
    },
  };
}

/** Loopback names a `Host` header may carry (with or without a port). */
const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/** The host part of a `Host` header (`[::1]:8377` -> `[::1]`, `localhost:8377` -> `localhost`). */
function hostName(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const h = header.trim().toLowerCase();
  if (h.startsWith('[')) {
    const end = h.indexOf(']');
    return end > 0 ? h.slice(0, end + 1) : undefined;
  }
  const colon = h.indexOf(':');
  return colon >= 0 ? h.slice(0, colon) : h;
}

/** A header value as it may appear in a log line: quoted, escaped, at most 80 characters. */
function shown(v: string | undefined): string {
  const t = v ?? '';
  return JSON.stringify(t.length > 80 ? `${t.slice(0, 80)}…` : t);
}

/** The security checks every request passes first; answers and returns false when one fails. */
function admitted(o: HttpTransportOptions, req: IncomingMessage, res: ServerResponse): boolean {
  const host = hostName(req.headers.host);
  if (host === undefined || !LOOPBACK_HOSTS.has(host)) {
    o.refusals.note(ADAPTER_ERRORS.FORBIDDEN_HOST, `refused a request for Host ${shown(req.headers.host)} (not a loopback name)`);
    refuse(res, 403, ADAPTER_ERRORS.FORBIDDEN_HOST, 'the Host header must be a loopback name (127.0.0.1, localhost, [::1])');
    return false;
  }
  if (req.headers.origin !== undefined) {
    o.refusals.note(ADAPTER_ERRORS.FORBIDDEN_ORIGIN, `refused a request carrying Origin ${shown(req.headers.origin)} (hooks never come from a web page)`);
    refuse(res, 403, ADAPTER_ERRORS.FORBIDDEN_ORIGIN, 'requests carrying a browser Origin are refused');
    return false;
  }
  const auth = req.headers.authorization;
  const given = typeof auth === 'string' && /^Bearer /i.test(auth) ? auth.slice(7).trim() : undefined;
  if (!sameSecret(given, o.secret)) {
    o.refusals.note(ADAPTER_ERRORS.UNAUTHORIZED, 'refused a request without the hook secret (Authorization: Bearer)');
    refuse(res, 401, ADAPTER_ERRORS.UNAUTHORIZED, 'present the hook secret: Authorization: Bearer <secret> (aep claude-code install)', {
      'www-authenticate': 'Bearer',
    });
    return false;
  }
  return true;
}

function onRequest(o: HttpTransportOptions, req: IncomingMessage, res: ServerResponse): void {
  if (!admitted(o, req, res)) {
    req.resume();
    return;
  }
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  if (req.method === 'GET' && path === '/health') {
    json(res, 200, o.health());
    return;
  }
  if (req.method !== 'POST' || !(path === '/' || path === '/hook' || path.startsWith('/hooks/'))) {
    refuse(res, 404, ADAPTER_ERRORS.NOT_FOUND, 'POST hook input to /hooks/{Event}');
    return;
  }
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') {
    o.refusals.note(ADAPTER_ERRORS.UNSUPPORTED_MEDIA_TYPE, `refused a hook POST of type ${shown(type)} (only application/json)`);
    refuse(res, 415, ADAPTER_ERRORS.UNSUPPORTED_MEDIA_TYPE, 'hook bodies are application/json');
    req.resume();
    return;
  }
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > o.maxHookBytes) {
    tooLarge(o, req, res);
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let over = false;
  req.on('data', (c: Buffer) => {
    if (over) return;
    size += c.length;
    if (size > o.maxHookBytes) {
      over = true;
      chunks.length = 0;
      tooLarge(o, req, res);
      return;
    }
    chunks.push(c);
  });
  req.on('error', () => {
    /* client went away; nothing to answer */
  });
  req.on('end', () => {
    if (over) return;
    let answered = false;
    const abandon: (() => void)[] = [];
    res.on('close', () => {
      if (!answered) {
        answered = true;
        for (const cb of abandon) cb();
      }
    });
    o.handle({
      body: Buffer.concat(chunks).toString('utf8'),
      reply: (output) => {
        if (answered) return;
        answered = true;
        json(res, 200, output);
      },
      refuse: (err: AdapterError) => {
        if (answered) return;
        answered = true;
        refuse(res, 400, err.code, err.message);
      },
      onAbandon: (cb) => {
        abandon.push(cb);
      },
    });
  });
}

/** How long a refused connection is read and discarded after its answer, at most. */
const LINGER_MS = 5_000;

/**
 * Answers 413 at once and closes without a reset: the answer, then a FIN, and the rest of the body
 * is read and discarded until the client closes its side (at most LINGER_MS). Closing with the
 * client's bytes still arriving makes the kernel reset the connection, and a client still writing
 * its body (as Claude Code's HTTP hook handler does) gets EPIPE and never reads the answer.
 */
function tooLarge(o: HttpTransportOptions, req: IncomingMessage, res: ServerResponse): void {
  o.refusals.note(ADAPTER_ERRORS.HOOK_TOO_LARGE, `hook body over ${o.maxHookBytes} bytes (--max-hook-bytes): no decision`);
  const socket: Duplex = req.socket;
  // node:http closes a `connection: close` response's socket with destroySoon(): end it instead.
  (socket as Duplex & { destroySoon: () => void }).destroySoon = () => socket.end();
  const timer = setTimeout(() => socket.destroy(), LINGER_MS).unref();
  socket.once('close', () => clearTimeout(timer));
  req.resume();
  refuse(res, 413, ADAPTER_ERRORS.HOOK_TOO_LARGE, `hook body exceeds ${o.maxHookBytes} bytes (--max-hook-bytes)`, { connection: 'close' });
}
