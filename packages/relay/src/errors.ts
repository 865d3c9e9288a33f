// The relay's error vocabulary as code (issue 13 item 4): every HTTP error body and every
// WebSocket `error` frame the relay sends uses a code of these tables, so a code cannot be
// invented at a call site. `test/errors-table.test.ts` checks both tables against
// docs/errors.md (codes, statuses, connection afterwards) in both directions.
import type { ServerResponse } from 'node:http';
import { securityHeaders } from './headers.js';

/** One HTTP error: the statuses it is answered with and what it means. */
export interface HttpErrorSpec {
  readonly status: readonly number[];
  readonly message: string;
}

/** HTTP error bodies `{"error": CODE, "detail": …}` (AEP-0003 §3.2, §3.3; AEP-0003 §8.1). */
export const HTTP_ERRORS = {
  'invalid-event': { status: [400], message: 'an Event fails envelope validation, or the body is not JSON' },
  'invalid-filter': { status: [400], message: 'malformed filter, from, capture or Last-Event-ID on /stream' },
  'limit-exceeded': { status: [400], message: '/stream from names more positions than the limit' },
  'version-unsupported': { status: [426], message: 'AEP-Version missing or not supported' },
  'unsupported-media-type': { status: [415], message: 'content type is neither application/json nor application/x-ndjson' },
  'payload-too-large': { status: [413], message: 'body or batch over its limit' },
  unauthorized: { status: [401, 403], message: 'missing or wrong token (401); a command over HTTP (403)' },
  forbidden: { status: [403], message: 'the token lacks the scope this request needs (the detail names it)' },
  'forbidden-host': { status: [403], message: 'a loopback relay asked under a non-loopback Host' },
  'forbidden-origin': { status: [403], message: 'a WebSocket upgrade from a browser origin that is not allowed' },
  'method-not-allowed': { status: [405], message: 'wrong method for the path' },
  'not-found': { status: [404], message: 'unknown path' },
  'request-timeout': { status: [408], message: 'headers or body not received in time' },
  'bad-request': { status: [400, 431], message: 'malformed HTTP request or request target' },
  'upgrade-required': { status: [426], message: '/socket without a WebSocket upgrade' },
  'shutting-down': { status: [503], message: 'the relay is draining before it stops' },
  'store-unavailable': { status: [503], message: 'the durable store could not commit' },
  'nats-unavailable': { status: [503], message: 'scale-out mode: NATS JetStream did not acknowledge the Events (unreachable); retry with the same ids' },
  internal: { status: [500], message: 'a relay fault' },
} as const satisfies Record<string, HttpErrorSpec>;

/** A code of {@link HTTP_ERRORS}. */
export type HttpErrorCode = keyof typeof HTTP_ERRORS;

/** One WebSocket error frame: the connection afterwards and what it means. */
export interface FrameErrorSpec {
  readonly connection: 'closed' | 'open';
  readonly message: string;
}

/** WebSocket `{"type":"error","code":…}` frames (AEP-0003 §2, AEP-0004 §4.2). */
export const FRAME_ERRORS = {
  'hello-required': { connection: 'closed', message: 'the first frame was not hello' },
  'version-unsupported': { connection: 'closed', message: 'no common AEP version' },
  'invalid-filter': { connection: 'open', message: 'malformed subscribe' },
  'limit-exceeded': { connection: 'open', message: 'too many subscriptions or from positions' },
  unauthorized: { connection: 'open', message: 'not allowed: emitter-role subscribe/roster, unauthenticated command, a scope missing' },
  unsupported: { connection: 'open', message: 'the target did not declare the command' },
  ambiguous: { connection: 'open', message: 'more than one live claimant of the session' },
  'no-route': { connection: 'open', message: 'no live connection may receive the command' },
  'invalid-event': { connection: 'open', message: 'an Event on the socket fails envelope validation' },
  'invalid-frame': { connection: 'open', message: 'a frame that is not a JSON object with a string type (binary: closed)' },
} as const satisfies Record<string, FrameErrorSpec>;

/** A code of {@link FRAME_ERRORS}. */
export type FrameErrorCode = keyof typeof FRAME_ERRORS;

/** Write a JSON response with the relay's standard headers (contract C9 included). */
export function sendJson(res: ServerResponse, status: number, body: unknown, extra: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...securityHeaders(),
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
    ...extra,
  });
  res.end(text);
}

/** Answer an HTTP error of the table: `{"error": code, "detail": …, …more}`. */
export function sendError(
  res: ServerResponse,
  code: HttpErrorCode,
  detail: string,
  opts: { status?: number; more?: Record<string, unknown>; headers?: Record<string, string> } = {},
): void {
  const spec: HttpErrorSpec = HTTP_ERRORS[code];
  const status = opts.status ?? spec.status[0]!;
  // A status outside the table is a relay bug: answer it as documented instead.
  sendJson(res, spec.status.includes(status) ? status : spec.status[0]!, { error: code, detail, ...(opts.more ?? {}) }, opts.headers);
}

/** A whole HTTP/1.1 error response as text, for sockets that never reached a ServerResponse. */
export function rawError(code: HttpErrorCode, status: number, reason: string, detail: string): string {
  const body = JSON.stringify({ error: code, detail });
  const headers = Object.entries(securityHeaders())
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  return `HTTP/1.1 ${status} ${reason}\r\n${headers}Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

/** An error frame of the table. */
export function errorFrame(
  code: FrameErrorCode,
  detail: string,
  corr: { id?: unknown; cause?: unknown; more?: Record<string, unknown> } = {},
): Record<string, unknown> {
  const f: Record<string, unknown> = { type: 'error' };
  if (corr.id !== undefined) f['id'] = corr.id;
  if (corr.cause !== undefined) f['cause'] = corr.cause;
  f['code'] = code;
  f['detail'] = detail;
  if (corr.more) Object.assign(f, corr.more);
  return f;
}
