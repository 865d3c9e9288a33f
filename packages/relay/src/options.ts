// Relay options: one object of documented defaults, validated at start (docs/conventions.md §7: limits are
// options, a bad option fails fast and names itself).
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { RelayBackendFactory } from './backend.js';
import type { PushOptions } from './push.js';

/** Options of `startRelay`. Every limit has a documented default (see `RELAY_DEFAULTS`). */
export interface RelayOptions {
  /** TCP port (default 8787; 0 picks a free port). */
  port?: number;
  /** Interface to bind (default 127.0.0.1). */
  host?: string;
  /** Bearer token. Absent => observe-only: every command refused `unauthorized` (AEP-0004 §4.1). */
  token?: string;
  /** SQLite file; `null` => memory only; absent => `defaultStorePath()`. */
  storePath?: string | null;
  /** Events held per session, advertised as `replay.buffer` (default 10000). */
  bufferDepth?: number;
  /** Sessions held; the least recently written is evicted past it (default 1000). */
  maxSessions?: number;
  /** Total raw bytes held across sessions (default 256 MiB). */
  totalBytes?: number;
  /** Largest accepted POST body / WebSocket message in bytes (default 4 MiB). */
  maxBodyBytes?: number;
  /** Most Events in one POST (default 10000). */
  maxBatchEvents?: number;
  /** Most `from` positions in one subscription (default = maxSessions). */
  maxFromPositions?: number;
  /** Most subscriptions on one WebSocket connection (default 64). */
  maxSubscriptions?: number;
  /** Bytes queued to one consumer above which `debug`/`info` are dropped (default 1 MiB). */
  slowConsumerBytes?: number;
  /** Bytes queued to one consumer above which it is disconnected (default 8 MiB). */
  maxConsumerBytes?: number;
  /** Time allowed to receive request headers (default 10000 ms; slowloris guard). */
  headersTimeoutMs?: number;
  /** Time allowed to receive a whole request (default 30000 ms). */
  requestTimeoutMs?: number;
  /** SSE heartbeat comment interval (default 15000 ms; the spec asks for <= 30 s). */
  heartbeatMs?: number;
  /**
   * SQLite `synchronous` mode (default `full`: the WAL is fsynced before any 202 is written).
   * `normal` survives a process crash but not a power loss; the bench measures both.
   */
  storeSync?: 'full' | 'normal';
  /** How long a pending request whose asker is gone stays in the roster's `offline` list (default 24 h; contract C4). */
  offlineTtlMs?: number;
  /**
   * Browser origins allowed to open the WebSocket besides the relay's own (`http(s)://<Host>`, the
   * inbox it serves). A foreign `Origin` is refused 403 `forbidden-origin`. `*` allows any.
   */
  allowOrigins?: readonly string[];
  /** Allow a non-loopback `host` without a token (default false: such a relay refuses to start). */
  insecureNoAuth?: boolean;
  /**
   * Test seam: awaited before every store commit is handed to the writer; a throw (or rejection)
   * fails that commit as a disk error would (503 `store-unavailable`, rows kept queued).
   */
  storeCommitHook?: () => void | Promise<void>;
  /** Directory served at `/` (the web inbox). */
  staticDir?: string;
  /** Web Push subscriptions (contract C10, `src/push.ts`); absent => `/push/*` answers 404. */
  push?: PushOptions;
  /**
   * Scale-out backend (issue 16, seam in backend.ts), e.g. `natsBackend()` of @aep/relay-nats:
   * storage, ordering, dedupe, claims, roster and command routing shared with other relays.
   * Absent => the SQLite store (or memory). With a backend `storePath` must be null.
   */
  backend?: RelayBackendFactory;
  /** Log sink (one line per call); tokens and query strings are never passed to it. */
  log?: (line: string) => void;
}

/** Resolved options (every member set). */
export interface ResolvedOptions {
  port: number;
  host: string;
  token: string | undefined;
  storePath: string | null;
  bufferDepth: number;
  maxSessions: number;
  totalBytes: number;
  maxBodyBytes: number;
  maxBatchEvents: number;
  maxFromPositions: number;
  maxSubscriptions: number;
  slowConsumerBytes: number;
  maxConsumerBytes: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  heartbeatMs: number;
  offlineTtlMs: number;
  allowOrigins: readonly string[];
  insecureNoAuth: boolean;
  storeCommitHook: (() => void | Promise<void>) | undefined;
  staticDir: string | undefined;
  storeSync: 'full' | 'normal';
  push: PushOptions | undefined;
  backend: RelayBackendFactory | undefined;
  log: (line: string) => void;
}

/** Documented defaults (also printed by `aep relay --help`). */
export const RELAY_DEFAULTS = {
  port: 8787,
  host: '127.0.0.1',
  bufferDepth: 10_000,
  maxSessions: 1_000,
  totalBytes: 256 * 1024 * 1024,
  maxBodyBytes: 4 * 1024 * 1024,
  maxBatchEvents: 10_000,
  maxSubscriptions: 64,
  slowConsumerBytes: 1024 * 1024,
  maxConsumerBytes: 8 * 1024 * 1024,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  heartbeatMs: 15_000,
  offlineTtlMs: 24 * 60 * 60 * 1000,
} as const;

/** Default store path: `$XDG_DATA_HOME/aep/relay.sqlite`, else `~/.local/share/aep/relay.sqlite`. */
export function defaultStorePath(env: NodeJS.ProcessEnv = process.env): string {
  const base = env['XDG_DATA_HOME'] && env['XDG_DATA_HOME'].startsWith('/') ? env['XDG_DATA_HOME'] : join(homedir(), '.local', 'share');
  return join(base, 'aep', 'relay.sqlite');
}

/** True for a loopback interface name (127.0.0.0/8, ::1, localhost). */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h);
}

/** Why a relay could not start (contract C6): the store is locked by another relay, or unusable. */
export class RelayStartError extends Error {
  constructor(
    readonly code: 'AEP_RELAY_STORE_LOCKED' | 'AEP_RELAY_STORE_UNAVAILABLE',
    message: string,
    /** The relay holding the store (from `<store>.lock`), when locked. */
    readonly holder?: { pid: number; url?: string; started?: string },
  ) {
    super(message);
    this.name = 'RelayStartError';
  }
}

/** Error thrown for a bad option (code `AEP_RELAY_BAD_OPTION`). */
export class RelayOptionError extends Error {
  readonly code = 'AEP_RELAY_BAD_OPTION';
  constructor(message: string) {
    super(message);
    this.name = 'RelayOptionError';
  }
}

function int(name: string, v: number | undefined, def: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (v === undefined) return def;
  if (!Number.isInteger(v) || v < min || v > max) throw new RelayOptionError(`option ${name} must be an integer in [${min}, ${max}], got ${String(v)}`);
  return v;
}

/** Apply defaults and validate. Throws `RelayOptionError` naming the option. */
export function resolveOptions(o: RelayOptions): ResolvedOptions {
  const maxSessions = int('maxSessions', o.maxSessions, RELAY_DEFAULTS.maxSessions, 1);
  const slow = int('slowConsumerBytes', o.slowConsumerBytes, RELAY_DEFAULTS.slowConsumerBytes, 1024);
  const r: ResolvedOptions = {
    port: int('port', o.port, RELAY_DEFAULTS.port, 0, 65535),
    host: o.host ?? RELAY_DEFAULTS.host,
    token: o.token === undefined || o.token === '' ? undefined : o.token,
    storePath: o.storePath === undefined ? defaultStorePath() : o.storePath,
    bufferDepth: int('bufferDepth', o.bufferDepth, RELAY_DEFAULTS.bufferDepth, 1),
    maxSessions,
    totalBytes: int('totalBytes', o.totalBytes, RELAY_DEFAULTS.totalBytes, 1024),
    maxBodyBytes: int('maxBodyBytes', o.maxBodyBytes, RELAY_DEFAULTS.maxBodyBytes, 1024),
    maxBatchEvents: int('maxBatchEvents', o.maxBatchEvents, RELAY_DEFAULTS.maxBatchEvents, 1),
    maxFromPositions: int('maxFromPositions', o.maxFromPositions, maxSessions, 1),
    maxSubscriptions: int('maxSubscriptions', o.maxSubscriptions, RELAY_DEFAULTS.maxSubscriptions, 1),
    slowConsumerBytes: slow,
    maxConsumerBytes: int('maxConsumerBytes', o.maxConsumerBytes, Math.max(RELAY_DEFAULTS.maxConsumerBytes, slow), slow),
    headersTimeoutMs: int('headersTimeoutMs', o.headersTimeoutMs, RELAY_DEFAULTS.headersTimeoutMs, 100),
    requestTimeoutMs: int('requestTimeoutMs', o.requestTimeoutMs, RELAY_DEFAULTS.requestTimeoutMs, 100),
    heartbeatMs: int('heartbeatMs', o.heartbeatMs, RELAY_DEFAULTS.heartbeatMs, 10),
    offlineTtlMs: int('offlineTtlMs', o.offlineTtlMs, RELAY_DEFAULTS.offlineTtlMs, 0),
    allowOrigins: origins(o.allowOrigins),
    insecureNoAuth: o.insecureNoAuth === true,
    storeCommitHook: o.storeCommitHook,
    staticDir: o.staticDir,
    push: o.push,
    storeSync: o.storeSync ?? 'full',
    backend: o.backend,
    log: o.log ?? (() => {}),
  };
  if (r.backend !== undefined && typeof r.backend !== 'function')
    throw new RelayOptionError('option backend must be a backend factory (e.g. natsBackend() of @aep/relay-nats)');
  if (r.backend !== undefined && r.storePath !== null)
    throw new RelayOptionError('option storePath must be null with a backend: the backend holds the Events (a SQLite store would be a second, diverging copy)');
  if (r.token !== undefined && /[\s]/.test(r.token)) throw new RelayOptionError('option token must not contain whitespace');
  if (r.storeSync !== 'full' && r.storeSync !== 'normal') throw new RelayOptionError(`option storeSync must be "full" or "normal", got ${String(r.storeSync)}`);
  if (r.requestTimeoutMs < r.headersTimeoutMs) r.requestTimeoutMs = r.headersTimeoutMs;
  // AEP-0003 §8.1: off-host bindings need a token (and TLS, deployment-owned). Refuse rather than
  // serve an open relay to the network by accident.
  if (!isLoopback(r.host) && r.token === undefined && !r.insecureNoAuth) {
    throw new RelayOptionError(
      `option host ${r.host} is not a loopback address and no token is set: anyone on the network could read and write this relay; set a token (--token / AEP_TOKEN) or accept it explicitly with insecureNoAuth (--insecure-no-auth)`,
    );
  }
  return r;
}

function origins(list: readonly string[] | undefined): readonly string[] {
  if (list === undefined) return [];
  if (!Array.isArray(list)) throw new RelayOptionError('option allowOrigins must be an array of origins');
  return list.map((o: unknown) => {
    if (o === '*') return '*';
    let u: URL | null = null;
    try {
      u = typeof o === 'string' ? new URL(o) : null;
    } catch {
      u = null;
    }
    if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:') || u.origin !== String(o).replace(/\/$/, '').toLowerCase()) {
      throw new RelayOptionError(`option allowOrigins: ${JSON.stringify(o)} is not an origin (scheme://host[:port], e.g. http://localhost:5173) nor *`);
    }
    return u.origin;
  });
}
