// CloudEvents in: an HTTP endpoint of the CE HTTP binding (structured content mode, and batched
// mode) that decodes AEP-typed CloudEvents (AEP-0005 §2) and ingests the events they carry into a
// relay over `POST /events` (AEP-0003 §3.2). A pure translator: the caller's `Authorization`
// header goes to the relay unchanged, so the relay's own token and scopes decide (this endpoint
// grants nothing the relay would not). Errors answer `{"error": AEP_CE_*, "detail": …}` with a
// stable code; nothing is ingested from a request that has a bad event (a batch is all or
// nothing, like the relay's own batches).
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { validateEnvelope } from '@aep/protocol';
import { CE_BATCH_MEDIA_TYPE, CE_STRUCTURED_MEDIA_TYPE, decodeCloudEvent } from '../index.js';
import type { BridgeDiagnostic } from '../index.js';
import { BridgeNodeError } from './errors.js';
import { displayUrl } from './http.js';

/** Options of {@link startCeReceiver}. */
export interface CeReceiverOptions {
  /** Relay base URL the events are ingested into. */
  relay: string;
  /** Interface; default 127.0.0.1. */
  host?: string;
  /** Port; 0 picks a free one. Default 8788. */
  port?: number;
  /** Largest request body in bytes (413 above); default 1 MiB. */
  maxBodyBytes?: number;
  /** Most events in one batch (413 above); default 500 (the relay's batch cap). */
  maxBatch?: number;
  /** Time for one relay request; default 10 000 ms. */
  relayTimeoutMs?: number;
  /** Operational log lines. */
  log?: (line: string) => void;
}

/** A running receiver. */
export interface CeReceiver {
  /** `http://HOST:PORT` */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

/** The stable error codes of the receiver and their HTTP status (docs/errors.md "Bridges"). */
export const CE_RECEIVER_ERRORS = {
  AEP_CE_NOT_FOUND: 404,
  AEP_CE_METHOD: 405,
  AEP_CE_FORBIDDEN_HOST: 403,
  AEP_CE_UNSUPPORTED_MODE: 415,
  AEP_CE_TOO_LARGE: 413,
  AEP_CE_BAD_JSON: 400,
  AEP_CE_INVALID: 400,
  AEP_CE_OUT_OF_SCOPE: 400,
  AEP_CE_RELAY_REFUSED: 0, // the relay's own 4xx status
  AEP_CE_RELAY_UNAVAILABLE: 502,
  AEP_CE_INTERNAL: 500,
} as const;

type Code = keyof typeof CE_RECEIVER_ERRORS;

function reply(res: ServerResponse, status: number, body: Record<string, unknown>): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), 'X-Content-Type-Options': 'nosniff' });
  res.end(text);
}

function error(res: ServerResponse, code: Code, detail: string, extra: Record<string, unknown> = {}, status?: number): void {
  reply(res, status ?? CE_RECEIVER_ERRORS[code], { error: code, detail, ...extra });
}

/** Media type without parameters, lowercased. */
function mediaType(h: string | undefined): string {
  return (h ?? '').split(';', 1)[0]!.trim().toLowerCase();
}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer | 'too-large'> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      req.resume();
      resolve('too-large');
      return;
    }
    const chunks: Buffer[] = [];
    let n = 0;
    let over = false;
    req.on('data', (c: Buffer) => {
      if (over) return;
      n += c.length;
      if (n > limit) {
        over = true;
        chunks.length = 0;
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(over ? 'too-large' : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** Starts the receiver. Rejects with `AEP_BRIDGE_OPTION` for a bad relay URL, or the listen error. */
export async function startCeReceiver(o: CeReceiverOptions): Promise<CeReceiver> {
  let relayEvents: string;
  try {
    const u = new URL(o.relay);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('protocol');
    relayEvents = new URL('/events', u).toString();
  } catch {
    throw new BridgeNodeError('AEP_BRIDGE_OPTION', 'the relay URL must be an http(s) URL');
  }
  const host = o.host ?? '127.0.0.1';
  const maxBody = o.maxBodyBytes ?? 1 << 20;
  const maxBatch = o.maxBatch ?? 500;
  const relayTimeoutMs = o.relayTimeoutMs ?? 10_000;
  const log = o.log ?? (() => {});
  const loopbackOnly = LOOPBACK.has(host);

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (path !== '/' && path !== '/ce') return error(res, 'AEP_CE_NOT_FOUND', 'POST CloudEvents to / or /ce');
    // DNS-rebinding guard, as the relay's: a loopback receiver answers loopback Host names only.
    if (loopbackOnly && !LOOPBACK.has((req.headers.host ?? '').replace(/:\d+$/, '').toLowerCase()))
      return error(res, 'AEP_CE_FORBIDDEN_HOST', 'this receiver listens on loopback and only answers loopback Host names');
    if (req.method !== 'POST') {
      res.setHeader('Allow', 'POST');
      return error(res, 'AEP_CE_METHOD', 'only POST is supported (CloudEvents HTTP binding)');
    }
    const ct = mediaType(req.headers['content-type']);
    const batch = ct === CE_BATCH_MEDIA_TYPE;
    if (ct !== CE_STRUCTURED_MEDIA_TYPE && !batch) {
      const binary = Object.keys(req.headers).some((h) => h.startsWith('ce-'));
      return error(
        res,
        'AEP_CE_UNSUPPORTED_MODE',
        binary
          ? 'binary content mode (ce-* headers) is not supported: send structured mode, Content-Type application/cloudevents+json (AEP-0005 §1: structured mode only)'
          : `Content-Type must be ${CE_STRUCTURED_MEDIA_TYPE} (one event) or ${CE_BATCH_MEDIA_TYPE} (a batch)`,
      );
    }
    const body = await readBody(req, maxBody);
    if (body === 'too-large') return error(res, 'AEP_CE_TOO_LARGE', `the body is over ${maxBody} bytes`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      return error(res, 'AEP_CE_BAD_JSON', 'the body is not JSON (CloudEvents JSON format)');
    }
    let list: unknown[];
    if (batch) {
      if (!Array.isArray(parsed)) return error(res, 'AEP_CE_INVALID', 'a batch is a JSON array of CloudEvents (CloudEvents JSON format §4)');
      if (parsed.length > maxBatch) return error(res, 'AEP_CE_TOO_LARGE', `the batch has more than ${maxBatch} events`);
      list = parsed;
    } else {
      list = [parsed];
    }
    const lines: string[] = [];
    const diagnostics: (BridgeDiagnostic & { index: number })[] = [];
    for (let i = 0; i < list.length; i++) {
      const at = batch ? { index: i } : {};
      const d = decodeCloudEvent(list[i]);
      if (!d.ok) return error(res, 'AEP_CE_INVALID', d.issue.message, { ...at, rule: d.issue.rule });
      if (d.value === null)
        return error(
          res,
          'AEP_CE_OUT_OF_SCOPE',
          "only CloudEvents whose type starts with dev.aep. carry AEP events (AEP-0005 §2); lifting foreign events is an adapter's job",
          { ...at, rule: 'ce.foreign-type' },
        );
      const issues = validateEnvelope(d.value);
      if (issues.length > 0) {
        const first = issues[0]!;
        return error(
          res,
          'AEP_CE_INVALID',
          `the AEP event it carries is invalid: ${first.rule}: ${first.message}${issues.length > 1 ? ` (+${issues.length - 1} more)` : ''}`,
          { ...at, rule: first.rule },
        );
      }
      for (const x of d.diagnostics) diagnostics.push({ ...x, index: i });
      lines.push(JSON.stringify(d.value));
    }
    if (lines.length === 0) return reply(res, 202, { accepted: 0 });
    const headers: Record<string, string> = { 'AEP-Version': '0.1', 'Content-Type': batch ? 'application/x-ndjson' : 'application/json' };
    if (typeof req.headers.authorization === 'string') headers['Authorization'] = req.headers.authorization;
    let r: Response;
    try {
      r = await fetch(relayEvents, { method: 'POST', headers, body: batch ? lines.join('\n') + '\n' : lines[0]!, signal: AbortSignal.timeout(relayTimeoutMs) });
    } catch (err) {
      const e = err as Error & { cause?: { code?: string } };
      log(`AEP_CE_RELAY_UNAVAILABLE: cannot reach ${displayUrl(relayEvents)}: ${e.cause?.code ?? e.name}`);
      return error(res, 'AEP_CE_RELAY_UNAVAILABLE', 'the relay cannot be reached; retry the same events (delivery is at-least-once)');
    }
    const text = await r.text().catch(() => '');
    if (r.status === 202) return reply(res, 202, diagnostics.length ? { accepted: lines.length, diagnostics } : { accepted: lines.length });
    let relayBody: unknown;
    try {
      relayBody = JSON.parse(text);
    } catch {
      relayBody = undefined;
    }
    const relay = typeof relayBody === 'object' && relayBody !== null ? relayBody : { status: r.status };
    if (r.status >= 400 && r.status < 500) return error(res, 'AEP_CE_RELAY_REFUSED', `the relay refused the events (HTTP ${r.status})`, { relay }, r.status);
    return error(res, 'AEP_CE_RELAY_UNAVAILABLE', `the relay answered HTTP ${r.status}; retry the same events`, { relay }, r.status === 503 ? 503 : 502);
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      log(`AEP_CE_INTERNAL: ${err instanceof Error ? err.message : String(err)}`);
      error(res, 'AEP_CE_INTERNAL', 'the receiver failed on this request (not a fault of the request)');
    });
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 8788, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
