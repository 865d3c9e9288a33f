// Binding constants and URLs shared by every peer (AEP-0003 §3, §8.1; AEP-0003 §3.2, §3.5): the
// version gate, media types, the fixed origin-root paths, and the `GET /stream` query. Pure.
import type { CaptureLevel } from './levels.js';
import type { ResumePosition } from './resume.js';

/** The protocol version this implementation speaks (AEP-0003 §4 rule 1). */
export const AEP_VERSION = '0.1';
/** Every version this implementation speaks, in preference order. */
export const SUPPORTED_VERSIONS: readonly string[] = [AEP_VERSION];
/** The HTTP ingest version header (AEP-0003 §3.2: REQUIRED). */
export const AEP_VERSION_HEADER = 'AEP-Version';
/** Media type of the SSE binding (AEP-0003 §3.3). */
export const SSE_CONTENT_TYPE = 'text/event-stream';
/** Media type of a single-Event POST (AEP-0003 §3.2). */
export const JSON_CONTENT_TYPE = 'application/json';

/** The fixed paths of the bindings, at the origin root (AEP-0003 §3.4: the checker never reads others). */
export const WIRE_PATHS = { events: '/events', stream: '/stream', socket: '/socket', discovery: '/.well-known/aep' } as const;

/**
 * The version both sides speak: the first of ours the peer lists (AEP-0003 §4 rule 1), or
 * `undefined` when there is no overlap (answer `version-unsupported` with our `versions`).
 */
export function selectVersion(theirs: unknown): string | undefined {
  if (!Array.isArray(theirs)) return undefined;
  return SUPPORTED_VERSIONS.find((v) => theirs.includes(v));
}

/**
 * AEP-0003 §2: on the WebSocket a `type` containing a dot is an Event, one without a dot a
 * connection-scoped frame.
 */
export function isEventType(type: string): boolean {
  return type.indexOf('.') >= 0;
}

function originUrl(base: string, path: string): URL {
  const u = new URL(base);
  u.pathname = path;
  u.search = '';
  u.hash = '';
  return u;
}

/** `http(s)://host[:port]/events` for any base URL of the relay (origin root, AEP-0003 §3.4). */
export function eventsUrl(base: string): string {
  return originUrl(base, WIRE_PATHS.events).toString();
}

/**
 * `ws(s)://host[:port]/socket` for an `http(s)` (or `ws(s)`) base URL. `accessToken` is the
 * query carrier for clients that cannot set headers (browsers, AEP-0003 §8): never log the URL.
 */
export function socketUrl(base: string, opts: { accessToken?: string } = {}): string {
  const u = originUrl(base, WIRE_PATHS.socket);
  if (u.protocol === 'https:') u.protocol = 'wss:';
  else if (u.protocol === 'http:') u.protocol = 'ws:';
  if (opts.accessToken) u.searchParams.set('access_token', opts.accessToken);
  return u.toString();
}

/** The query of `GET /stream` (AEP-0003 §3.3). */
export interface StreamQuery {
  /** attr-match filter (AEP-0003 §6); absent or `{}` = everything (no `filter` parameter). */
  filter?: Readonly<Record<string, unknown>>;
  /** Subscription ceiling (AEP-0003 §6.4). */
  capture?: CaptureLevel;
  /** Exact resume positions or `all` (AEP-0003 §5). */
  from?: 'all' | readonly ResumePosition[];
  /** `false`: replay only (`live=0`), the response ends after the replay. */
  live?: boolean;
  /** Header-less carrier of the token (`access_token`, AEP-0003 §8): prefer `Authorization`. */
  accessToken?: string;
}

/** `http(s)://host[:port]/stream?…` with the query of {@link StreamQuery}. */
export function streamUrl(base: string, q: StreamQuery = {}): string {
  const u = originUrl(base, WIRE_PATHS.stream);
  if (q.filter && Object.keys(q.filter).length > 0) u.searchParams.set('filter', JSON.stringify(q.filter));
  if (q.capture) u.searchParams.set('capture', q.capture);
  if (q.from !== undefined) u.searchParams.set('from', q.from === 'all' ? 'all' : JSON.stringify(q.from));
  if (q.live === false) u.searchParams.set('live', '0');
  if (q.accessToken) u.searchParams.set('access_token', q.accessToken);
  return u.toString();
}

/** A URL safe to print: no user info, no query, no fragment (AEP-0003 §11: never log `access_token`). */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    u.search = '';
    u.hash = '';
    return u.toString();
  } catch {
    return '<invalid url>';
  }
}
