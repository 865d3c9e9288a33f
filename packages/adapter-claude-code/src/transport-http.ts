// The daemon's loopback HTTP endpoint (Claude Code `type:"http"` hooks, `GET /health`):
// POST /hooks/{Event} or /hook with the hook JSON; the answer is the response body.
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ADAPTER_ERRORS } from './errors.js';
import type { AdapterError } from './errors.js';
import type { HookExchange } from './exchange.js';

/** Options of {@link listenHttp}. */
export interface HttpTransportOptions {
  host: string;
  port: number;
  /** Hook bodies above this are refused with 413 at once. */
  maxHookBytes: number;
  log: (line: string) => void;
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
  server.on('clientError', (_err, socket) => { socket.destroy(); });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => { server.off('error', reject); resolve(); });
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

function onRequest(o: HttpTransportOptions, req: IncomingMessage, res: ServerResponse): void {
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  if (req.method === 'GET' && path === '/health') { json(res, 200, o.health()); return; }
  if (req.method !== 'POST' || !(path === '/' || path === '/hook' || path.startsWith('/hooks/'))) {
    refuse(res, 404, ADAPTER_ERRORS.NOT_FOUND, 'POST hook input to /hooks/{Event}');
    return;
  }
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > o.maxHookBytes) {
    tooLarge(o, res);
    req.resume();
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let over = false;
  req.on('data', (c: Buffer) => {
    if (over) return;
    size += c.length;
    if (size > o.maxHookBytes) { over = true; chunks.length = 0; tooLarge(o, res); return; }
    chunks.push(c);
  });
  req.on('error', () => { /* client went away; nothing to answer */ });
  req.on('end', () => {
    if (over) return;
    let answered = false;
    const abandon: (() => void)[] = [];
    res.on('close', () => { if (!answered) { answered = true; for (const cb of abandon) cb(); } });
    o.handle({
      body: Buffer.concat(chunks).toString('utf8'),
      reply: (output) => { if (answered) return; answered = true; json(res, 200, output); },
      refuse: (err: AdapterError) => { if (answered) return; answered = true; refuse(res, 400, err.code, err.message); },
      onAbandon: (cb) => { abandon.push(cb); },
    });
  });
}

function tooLarge(o: HttpTransportOptions, res: ServerResponse): void {
  o.log(`aep claude-code: ${ADAPTER_ERRORS.HOOK_TOO_LARGE}: hook body over ${o.maxHookBytes} bytes: no decision`);
  refuse(res, 413, ADAPTER_ERRORS.HOOK_TOO_LARGE, `hook body exceeds ${o.maxHookBytes} bytes (--max-hook-bytes)`, { connection: 'close' });
}
