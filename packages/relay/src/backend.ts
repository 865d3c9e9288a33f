// Relay seams (contract C11, issue 16): what the relay needs from wherever its Events, claims,
// tokens and command routes live. The default implementation is in-process: the ReplayBuffer
// mirrored to SQLite (`LocalLog` below, `Claims` in claims.ts). A scale-out backend (e.g.
// @aep/relay-nats on JetStream) implements the same interfaces, so the HTTP/SSE/WebSocket
// surface is identical from outside. Only the CLI chooses a backend.
import type { BufferSink } from './buffer.js';
import type { Claimant, HelloInfo } from './claims.js';
import type { RelayCore } from './core.js';
import type { Incoming } from './ingest.js';
import type { ResolvedOptions } from './options.js';
import type { StoredToken, TokenSink } from './tokens.js';

/**
 * Storage, ordering and dedupe of accepted Events (AEP-0003 §5, §7; AEP-0001 §7.4). The relay
 * answers 202 only once `append` resolved.
 */
export interface EventLog {
  /** Make `events` durable in order; resolves when they may be acknowledged. Rejects with `BackendUnavailableError` (503). */
  append(events: readonly Incoming[], from: Claimant | null): Promise<void>;
  /**
   * Accept one Event that has no acknowledgement on the wire (a WebSocket Event, the history copy
   * of a routed command). `lost` is called when it could not be made durable.
   */
  offer(inc: Incoming, from: Claimant | null, lost: (err: Error) => void): void;
}

/** A command target that lives behind another relay of the cluster (AEP-0004 §4). */
export interface RemoteTarget {
  readonly hello: HelloInfo | null;
  /** Deliver the command's received bytes; resolves null once delivered, or with the refusal. */
  forwardCommand(text: string): Promise<null | { code: 'no-route'; detail: string }>;
}

/** A command target: a local WebSocket connection or a remote one. */
export type CommandTarget = Claimant | RemoteTarget;

/** True for a target behind another relay. */
export function isRemote(t: CommandTarget): t is RemoteTarget {
  return typeof (t as Partial<RemoteTarget>).forwardCommand === 'function';
}

/**
 * Session claims and hello claims (AEP-0003 §4.1; contracts C3, C4): which live connections claim
 * which sessions, for command routing and the roster. Local connections are registered here;
 * a scale-out backend adds the connections of the other relays.
 */
export interface ClaimRegistry {
  /** Called with (claim digest, null) when it gets its first live connection anywhere, (digest, ms) when it loses its last. */
  onClaimState: (claim: string, offlineSince: number | null) => void;
  present(conn: Claimant): void;
  claim(conn: Claimant, session: string): void;
  drop(conn: Claimant): void;
  /** True when a live connection (anywhere) presents this claim digest. */
  liveClaim(claim: string): boolean;
  /** The newest live connection presenting this claim digest. */
  newest(claim: string): CommandTarget | undefined;
  /** Live claimants of a session. */
  live(session: string): CommandTarget[];
  /** Roster entries (AEP-0003 §4.1): one per live (connection, session) pair. */
  roster(): Array<Record<string, unknown>>;
}

/** Why an Event cannot be acknowledged now (503 with this code; the client retries with the same ids). */
export class BackendUnavailableError extends Error {
  constructor(
    readonly code: 'store-unavailable' | 'nats-unavailable',
    message: string,
  ) {
    super(message);
    this.name = 'BackendUnavailableError';
  }
}

/** Backend health, reported in `/healthz` (without topology counts for anonymous callers). */
export interface BackendHealth {
  ok: boolean;
  detail?: Record<string, unknown>;
}

/** A scale-out backend (issue 16): every seam the relay runs on, opened before the relay listens. */
export interface RelayBackend {
  readonly name: string;
  /** Scoped tokens known at start, and where new ones and revocations go (contract C7). */
  readonly tokens: { stored: readonly StoredToken[]; sink: TokenSink };
  /** Where the replay buffer reports evictions (the tombstones, AEP-0003 §5). */
  readonly bufferSink: BufferSink | null;
  readonly claims: ClaimRegistry;
  readonly log: EventLog;
  /** Replay the shared history into the core and start following it; resolves when caught up. */
  attach(core: RelayCore): Promise<void>;
  /** Resolves once token changes queued so far are durable. */
  durable(): Promise<void>;
  health(): BackendHealth;
  /** Counters merged into /healthz. */
  stats(): Record<string, number>;
  close(): Promise<void>;
}

/** Opens a backend for resolved relay options (the CLI passes one; absent = SQLite / memory). */
export type RelayBackendFactory = (opts: ResolvedOptions) => Promise<RelayBackend>;

/** The in-process event log: the replay buffer mirrored to SQLite (group commit) or memory. */
export class LocalLog implements EventLog {
  constructor(private readonly core: RelayCore) {}
  /** Admits synchronously; the promise keeps no reference to `events` (they die young, issue 19). */
  append(events: readonly Incoming[], from: Claimant | null): Promise<void> {
    for (const inc of events) this.core.ingest(inc, from);
    const store = this.core.store;
    if (!store) return Promise.resolve();
    return store.durable().catch((err: unknown) => {
      throw new BackendUnavailableError('store-unavailable', `the durable store could not commit: ${err instanceof Error ? err.message : String(err)}`);
    });
  }
  offer(inc: Incoming, from: Claimant | null): void {
    this.core.ingest(inc, from);
  }
}
