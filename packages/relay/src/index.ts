// Public API of @aep/relay: named exports only (no `export *`).
import { dirname, resolve } from 'node:path';
import { StoreLock, lockedError, readHolder } from './lock.js';
import { RelayStartError, defaultStorePath, resolveOptions, type RelayOptions } from './options.js';
import { Relay, type RelayStats } from './relay.js';
import { SqliteStore, prepareStorePath } from './store.js';

/** A running relay (architecture.md "@aep/relay"). */
export interface RelayHandle {
  /** `http://HOST:PORT` (origin root; the protocol paths hang off it). */
  url: string;
  /** The bound port (useful with `port: 0`). */
  port: number;
  /** Where Events are stored, or null for a memory-only relay. */
  storePath: string | null;
  /** Live counters (the same as GET /healthz). */
  stats(): RelayStats;
  /**
   * Graceful shutdown (contract C5): stop accepting connections and requests; keep the existing
   * ones up to `drainMs` (default 0), ingesting and committing what they send (the wait ends
   * early once no emitter is connected); then `closing` frames, SSE ends, store flushed and
   * closed, lock released. Idempotent; a later call with a shorter `drainMs` shortens the wait.
   */
  close(opts?: { drainMs?: number }): Promise<void>;
}

/** True when SQLite refused because another connection holds the database. */
function isLockedError(err: unknown): boolean {
  const m = err instanceof Error ? err.message : String(err);
  return /database is locked|SQLITE_BUSY/i.test(m) || (err as { code?: unknown })?.code === 'SQLITE_BUSY';
}

/**
 * Start an AEP relay (AEP-0003 collector + AEP-0004 command routing) with a durable SQLite
 * store unless `storePath` is null. Resolves once it listens. Throws `RelayOptionError`
 * (code `AEP_RELAY_BAD_OPTION`) for a bad option, `RelayStartError` (`AEP_RELAY_STORE_LOCKED`
 * with the holder, `AEP_RELAY_STORE_UNAVAILABLE`) when the store cannot be used, and the
 * listen error (`EADDRINUSE`, …) as is.
 */
export async function startRelay(opts: RelayOptions = {}): Promise<RelayHandle> {
  const o = resolveOptions(opts);
  let store: SqliteStore | null = null;
  let lock: StoreLock | null = null;
  if (o.storePath !== null) {
    const path = o.storePath;
    const ours = resolve(dirname(path)) === resolve(dirname(defaultStorePath()));
    prepareStorePath(path, ours); // directories 0700 and the file 0600, or AEP_RELAY_STORE_UNAVAILABLE at once
    lock = StoreLock.acquire(path);
    try {
      store = await SqliteStore.open(path, o.storeSync, { ours, ...(o.storeCommitHook ? { commitHook: o.storeCommitHook } : {}) });
    } catch (err) {
      lock.release();
      if (err instanceof RelayStartError) throw err;
      if (isLockedError(err)) throw lockedError(path, readHolder(`${path}.lock`));
      throw new RelayStartError('AEP_RELAY_STORE_UNAVAILABLE', `store ${path} cannot be opened: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  const backend = o.backend ? await o.backend(o) : null;
  const relay = new Relay(o, store, backend);
  try {
    try {
      await relay.load();
    } catch (err) {
      if (o.storePath === null || err instanceof RelayStartError) throw err;
      if (isLockedError(err)) throw lockedError(o.storePath, readHolder(`${o.storePath}.lock`));
      // Contract C6: a store that cannot be used (its writer thread could not start, a read
      // failed) is AEP_RELAY_STORE_UNAVAILABLE, named with its cause.
      const m = err instanceof Error ? err.message : String(err);
      throw new RelayStartError('AEP_RELAY_STORE_UNAVAILABLE', m.startsWith(`store ${o.storePath}`) ? m : `store ${o.storePath} cannot be loaded: ${m}`);
    }
    const port = await relay.listen();
    const host = o.host.includes(':') ? `[${o.host}]` : o.host;
    const url = `http://${host}:${port}`;
    lock?.listening(url);
    let closing: Promise<void> | null = null;
    return {
      url,
      port,
      storePath: o.storePath,
      stats: () => relay.stats(),
      close: (c = {}) => {
        relay.drainUntil(Date.now() + Math.max(0, c.drainMs ?? 0));
        closing ??= relay.close().finally(() => lock?.release());
        return closing;
      },
    };
  } catch (err) {
    await relay.abort();
    lock?.release();
    throw err;
  }
}

export { RELAY_DEFAULTS, defaultStorePath, RelayOptionError, RelayStartError } from './options.js';
export { tuneGc, scavengeMode, SCAVENGE_ENV, SMALL_MACHINE_CPUS } from './gc.js';
export type { ScavengeMode } from './gc.js';
export type { RelayOptions, ResolvedOptions } from './options.js';
export { BackendUnavailableError, isRemote } from './backend.js';
export type { BackendHealth, ClaimRegistry, CommandTarget, EventLog, RelayBackend, RelayBackendFactory, RemoteTarget } from './backend.js';
export { Claims } from './claims.js';
export type { Claimant, HelloInfo } from './claims.js';
export type { RelayCore } from './core.js';
export type { BufferSink, Entry, Pos } from './buffer.js';
export type { Incoming } from './ingest.js';
export type { StoredToken, TokenSink } from './tokens.js';
export type { RelayStats } from './relay.js';
export type { PushOptions, StoredPushSubscription } from './push.js';
