// Public API of @aep/relay: named exports only (no `export *`).
import { resolveOptions, type RelayOptions } from './options.js';
import { Relay, type RelayStats } from './relay.js';
import { SqliteStore } from './store.js';

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
  /** Graceful shutdown: `closing` frames, SSE ends, store flushed and closed. Idempotent. */
  close(): Promise<void>;
}

/**
 * Start an AEP relay (AEP-0003 collector + AEP-0004 command routing) with a durable SQLite
 * store unless `storePath` is null. Resolves once it listens. Throws `RelayOptionError`
 * (code `AEP_RELAY_BAD_OPTION`) for a bad option.
 */
export async function startRelay(opts: RelayOptions = {}): Promise<RelayHandle> {
  const o = resolveOptions(opts);
  let store: SqliteStore | null = null;
  try {
    store = o.storePath === null ? null : await SqliteStore.open(o.storePath, o.storeSync);
  } catch (err) {
    throw new Error(`store ${o.storePath ?? ''} cannot be opened: ${err instanceof Error ? err.message : String(err)}`);
  }
  const relay = new Relay(o, store);
  try {
    await relay.load();
    const port = await relay.listen();
    const host = o.host.includes(':') ? `[${o.host}]` : o.host;
    return { url: `http://${host}:${port}`, port, storePath: o.storePath, stats: () => relay.stats(), close: () => relay.close() };
  } catch (err) {
    await store?.close();
    throw err;
  }
}

export { RELAY_DEFAULTS, defaultStorePath, RelayOptionError } from './options.js';
export type { RelayOptions } from './options.js';
export type { RelayStats } from './relay.js';
export type { PushOptions, StoredPushSubscription } from './push.js';
