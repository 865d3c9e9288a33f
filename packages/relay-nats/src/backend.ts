// The JetStream backend (issue 16; docs/scale-out.md): the relay's storage, ordering, dedupe,
// tombstones, tokens, claims, roster and command routing on one NATS JetStream, shared by any
// number of relays. Every relay answers HTTP/SSE/WebSocket exactly as a single relay does.
//
// Events: one stream, one subject per session (`aep.<S>.ev.s.<token>`), per-subject limit = the
// replay depth. Ingest publishes with `Nats-Msg-Id` = hash(source, id) and answers 202 only after
// the publish ack. Every relay follows the whole stream with an ordered consumer and admits each
// message into its in-memory replay buffer, then fans it out: so every relay holds the same
// Events in the same order, and a resume token (session, epoch, seq) means the same at each.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import {
  BackendUnavailableError,
  type BackendHealth,
  type BufferSink,
  type Claimant,
  type EventLog,
  type Incoming,
  type Pos,
  type RelayBackend,
  type RelayBackendFactory,
  type RelayCore,
  type ResolvedOptions,
  type StoredToken,
  type TokenSink,
} from '@aep/relay';
import { connect, credsAuthenticator, headers, type NatsConnection } from '@nats-io/transport-node';
import {
  DeliverPolicy,
  DiscardPolicy,
  RetentionPolicy,
  StorageType,
  jetstream,
  jetstreamManager,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type PubAck,
} from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { ClusterClaims } from './claims.js';
import { Names, STREAM_NAME, kvKey, msgId } from './names.js';

/** Options of `natsBackend` (the CLI's `--nats`, `--nats-stream`, `--nats-creds`). */
export interface NatsBackendOptions {
  /** Server URL(s), e.g. `nats://127.0.0.1:4222`. */
  servers: string | string[];
  /** Stream name, also the prefix of subjects and KV buckets (default `AEP`). */
  stream?: string;
  /** NATS credentials file (JWT + nkey seed). Its content is never logged. */
  credsFile?: string;
  /** Replicas of the stream and buckets (default 1; 3 on a clustered NATS in production). */
  replicas?: number;
  /** How long a publish waits for its JetStream ack before the Event is refused 503 (default 5000 ms). */
  ackTimeoutMs?: number;
  /** Relay heartbeat interval in the relays bucket (default 2000 ms); a relay is dead after 3 missed beats. */
  heartbeatMs?: number;
  /** Wait for a routed command's delivery answer (default 3000 ms). */
  commandTimeoutMs?: number;
}

/** Why the JetStream backend could not start. */
export class NatsStartError extends Error {
  constructor(
    readonly code: 'AEP_RELAY_NATS_UNAVAILABLE' | 'AEP_RELAY_NATS_CONFIG',
    message: string,
  ) {
    super(message);
    this.name = 'NatsStartError';
  }
}

/** JetStream's duplicate window we ask for (its default too): `Nats-Msg-Id` dedupe holds this long. */
export const DUPLICATE_WINDOW_MS = 120_000;
const NS = 1_000_000;

/** Tombstones (AEP-0003 §5): evictions the buffer reports, written to `<stream>_evicted` by the relay whose message caused them. */
class Tombstones implements BufferSink {
  own = false;
  private readonly pending = new Map<string, Pos | null>();
  private scheduled = false;
  constructor(private readonly kv: KV) {}
  insert(): void {}
  remove(): void {}
  evicted(session: string, pos: Pos | null): void {
    if (!this.own) return; // every relay evicts the same way; one writer is enough
    this.pending.set(session, pos);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      for (const [s, p] of this.pending) {
        const k = kvKey(s);
        (p ? this.kv.put(k, JSON.stringify({ session: s, pos: p })) : this.kv.delete(k)).catch(() => {
          /* best effort: a later eviction writes it again */
        });
      }
      this.pending.clear();
    });
  }
}

/** Scoped tokens (contract C7) in `<stream>_tokens`: the secret's sha256 only, as in SQLite. */
class TokenBucket implements TokenSink {
  private inflight = new Set<Promise<unknown>>();
  private failed: Error | null = null;
  constructor(private readonly kv: KV) {}
  token(t: StoredToken): void {
    const p = this.kv.put(t.id, JSON.stringify(t)).then(
      () => undefined,
      (err: unknown) => {
        this.failed = err instanceof Error ? err : new Error(String(err));
      },
    );
    this.inflight.add(p);
    void p.finally(() => this.inflight.delete(p));
  }
  async durable(): Promise<void> {
    await Promise.all([...this.inflight]);
    const f = this.failed;
    this.failed = null;
    if (f) throw f;
  }
}

async function bucket(kvm: Kvm, name: string, replicas: number, extra: Record<string, unknown> = {}): Promise<KV> {
  return kvm.create(name, { history: 1, replicas, ...extra });
}

/** A factory for `startRelay({ backend })`: connects, creates the stream and buckets, loads tokens. */
export function natsBackend(o: NatsBackendOptions): RelayBackendFactory {
  return async (opts: ResolvedOptions) => NatsBackend.open(o, opts);
}

/** The RelayBackend on NATS JetStream. */
export class NatsBackend implements RelayBackend, EventLog {
  readonly name = 'nats-jetstream';
  readonly relayId = randomBytes(8).toString('hex');
  readonly claims: ClusterClaims;
  readonly log: EventLog = this;
  readonly bufferSink: Tombstones;
  readonly tokens: { stored: readonly StoredToken[]; sink: TokenBucket };
  private core: RelayCore | null = null;
  private connected = true;
  private jsOk = true;
  /** False while no consumer follows the stream (ingest would be durable but not applied here). */
  private following = true;
  private lastError = '';
  private applied = 0;
  private waiters: Array<{ seq: number; resolve: () => void }> = [];
  private messages: ConsumerMessages | null = null;
  private probe: NodeJS.Timeout | undefined;
  private closed = false;
  /** Appends not yet answered: close() waits for them (contract C5: what is sent while draining is committed). */
  private readonly pending = new Set<Promise<unknown>>();
  private readonly counters = { natsPublished: 0, natsDuplicates: 0, natsPublishFailures: 0, natsApplied: 0 };

  private constructor(
    private readonly o: Required<Omit<NatsBackendOptions, 'credsFile' | 'servers'>>,
    private readonly opts: ResolvedOptions,
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly names: Names,
    kvs: { claims: KV; relays: KV; tokens: KV; evicted: KV },
    stored: StoredToken[],
    private readonly evictedKv: KV,
    private readonly tokensKv: KV,
  ) {
    this.bufferSink = new Tombstones(kvs.evicted);
    this.tokens = { stored, sink: new TokenBucket(kvs.tokens) };
    this.claims = new ClusterClaims({
      relayId: this.relayId,
      nc,
      claimsKv: kvs.claims,
      relaysKv: kvs.relays,
      commandSubject: (r) => names.commandSubject(r),
      heartbeatMs: o.heartbeatMs,
      requestTimeoutMs: o.commandTimeoutMs,
      log: opts.log,
    });
  }

  static async open(o: NatsBackendOptions, opts: ResolvedOptions): Promise<NatsBackend> {
    const stream = o.stream ?? 'AEP';
    if (!STREAM_NAME.test(stream))
      throw new NatsStartError('AEP_RELAY_NATS_CONFIG', `stream name ${JSON.stringify(stream.slice(0, 40))} must be 1-32 letters, digits, _ or -`);
    const replicas = o.replicas ?? 1;
    const full = { stream, replicas, ackTimeoutMs: o.ackTimeoutMs ?? 5000, heartbeatMs: o.heartbeatMs ?? 2000, commandTimeoutMs: o.commandTimeoutMs ?? 3000 };
    let authenticator;
    if (o.credsFile !== undefined) {
      let creds: Buffer;
      // The path may be named; the content (a JWT and an nkey seed) never is.
      try {
        creds = readFileSync(o.credsFile);
      } catch (err) {
        throw new NatsStartError(
          'AEP_RELAY_NATS_CONFIG',
          `cannot read the NATS credentials file ${o.credsFile}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
        );
      }
      authenticator = credsAuthenticator(new Uint8Array(creds));
    }
    const servers = Array.isArray(o.servers) ? o.servers : [o.servers];
    let nc: NatsConnection;
    try {
      // noAsyncTraces: the client otherwise builds two Error objects (stack traces) per publish,
      // a quarter of the relay's CPU in the bench (docs/benchmarks.md "Scale-out (16)").
      nc = await connect({
        servers,
        name: 'aep-relay',
        maxReconnectAttempts: -1,
        reconnectTimeWait: 250,
        noAsyncTraces: true,
        ...(authenticator ? { authenticator } : {}),
      });
    } catch (err) {
      throw new NatsStartError(
        'AEP_RELAY_NATS_UNAVAILABLE',
        `cannot connect to NATS at ${servers.map(scrub).join(', ')}: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    try {
      const names = new Names(stream);
      const jsm = await jetstreamManager(nc);
      await ensureStream(jsm, names, opts, replicas);
      const kvm = new Kvm(nc);
      const claims = await bucket(kvm, names.claimsBucket, replicas);
      // Beats older than 10 minutes are gone by themselves (2.9 has no per-key TTL; max_age it has).
      const relays = await bucket(kvm, names.relaysBucket, replicas, { ttl: 600_000 });
      const tokens = await bucket(kvm, names.tokensBucket, replicas);
      const evicted = await bucket(kvm, names.evictedBucket, replicas);
      const stored = await readTokens(tokens);
      const b = new NatsBackend(full, opts, nc, jetstream(nc), jsm, names, { claims, relays, tokens, evicted }, stored, evicted, tokens);
      return b;
    } catch (err) {
      await nc.close().catch(() => {});
      if (err instanceof NatsStartError) throw err;
      throw new NatsStartError(
        'AEP_RELAY_NATS_UNAVAILABLE',
        `JetStream at ${servers.map(scrub).join(', ')} is not usable: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }

  /** Replay the stream into the core's buffer (tombstones first), then follow it live. */
  async attach(core: RelayCore): Promise<void> {
    this.core = core;
    for await (const k of await this.evictedKv.keys()) {
      const e = await this.evictedKv.get(k);
      if (!e || e.operation !== 'PUT') continue;
      try {
        const v = JSON.parse(e.string()) as { session: string; pos: [number, number, number] };
        core.buffer.restoreEvicted(v.session, v.pos);
      } catch {
        /* unreadable mark: ignored */
      }
    }
    await this.claims.start();
    void this.watchTokens(core);
    const last = (await this.jsm.streams.info(this.names.stream)).state.last_seq;
    const consumer = await this.js.consumers.get(this.names.stream, { filter_subjects: this.names.events, deliver_policy: DeliverPolicy.All });
    this.messages = await consumer.consume({ max_messages: 1024 });
    const caughtUp = last === 0 ? Promise.resolve() : this.reached(last, Infinity);
    void this.follow();
    void this.watchStatus();
    await caughtUp;
  }

  private async follow(): Promise<void> {
    const core = this.core!;
    try {
      for await (const m of this.messages!) {
        if (m.seq <= this.applied) continue; // a restarted consumer never applies twice
        const h = m.headers;
        const claim = h?.get('Aep-Claim') || null;
        this.bufferSink.own = h?.get('Aep-Relay') === this.relayId;
        try {
          core.applyShared(m.string(), m.seq, claim);
        } catch (err) {
          this.opts.log(`nats: cannot apply stream message ${m.seq}: ${err instanceof Error ? err.message : String(err)}`);
        }
        this.bufferSink.own = false;
        this.applied = m.seq;
        this.counters.natsApplied++;
        if (this.waiters.length) this.release();
      }
    } catch (err) {
      if (!this.closed) this.opts.log(`nats: the stream consumer stopped: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (this.closed) return;
    // The consumer ended (JetStream gone for long, stream recreated…): unhealthy, and a new
    // ordered consumer resumes right after the last applied message, by itself.
    this.following = false;
    this.fail('the stream consumer stopped');
    setTimeout(() => {
      void this.refollow();
    }, 1000).unref();
  }

  private async refollow(): Promise<void> {
    if (this.closed) return;
    try {
      const consumer = await this.js.consumers.get(
        this.names.stream,
        this.applied > 0
          ? { filter_subjects: this.names.events, deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: this.applied + 1 }
          : { filter_subjects: this.names.events, deliver_policy: DeliverPolicy.All },
      );
      this.messages = await consumer.consume({ max_messages: 1024 });
      this.following = true;
      this.opts.log(`nats: following the stream again after message ${this.applied}`);
      void this.follow();
    } catch {
      setTimeout(() => {
        void this.refollow();
      }, 1000).unref();
    }
  }

  private release(): void {
    const keep: typeof this.waiters = [];
    for (const w of this.waiters) {
      if (this.applied >= w.seq) w.resolve();
      else keep.push(w);
    }
    this.waiters = keep;
  }

  /** Resolves once the local buffer applied stream sequence `seq` (or after `maxMs`). */
  private reached(seq: number, maxMs: number): Promise<void> {
    if (this.applied >= seq) return Promise.resolve();
    return new Promise((resolve) => {
      this.waiters.push({ seq, resolve });
      if (Number.isFinite(maxMs)) setTimeout(resolve, maxMs).unref();
    });
  }

  private async watchTokens(core: RelayCore): Promise<void> {
    try {
      const it = await this.tokensKv.watch({ key: '>' });
      for await (const e of it) {
        if (this.closed) break;
        if (e.operation !== 'PUT') continue;
        try {
          core.auth.tokens.apply(JSON.parse(e.string()) as StoredToken);
        } catch {
          /* unreadable: grants nothing */
        }
      }
    } catch (err) {
      if (!this.closed) this.opts.log(`nats: token watch ended: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  private async watchStatus(): Promise<void> {
    for await (const s of this.nc.status()) {
      if (this.closed) return;
      if (s.type === 'disconnect') {
        this.connected = false;
        this.fail('NATS connection lost');
        this.opts.log('nats: disconnected; ingest answers 503 nats-unavailable until it is back');
      }
      if (s.type === 'reconnect') {
        this.connected = true;
        this.opts.log('nats: reconnected');
        this.claims.resync();
        this.checkSoon();
      }
    }
  }

  private fail(why: string): void {
    this.jsOk = false;
    this.lastError = why;
    this.checkSoon();
  }

  /** While unhealthy: probe JetStream every 500 ms, so health recovers without traffic. */
  private checkSoon(): void {
    if (this.probe || this.closed) return;
    this.probe = setInterval(() => {
      if (!this.connected) return;
      this.jsm.streams.info(this.names.stream).then(
        () => {
          if (!this.following) return; // refollow() is at it
          this.jsOk = true;
          this.lastError = '';
          if (this.probe) {
            clearInterval(this.probe);
            this.probe = undefined;
          }
        },
        (err: unknown) => {
          this.lastError = err instanceof Error ? err.message : String(err);
        },
      );
    }, 500);
    this.probe.unref();
  }

  /**
   * Publish in order; resolve once JetStream acknowledged every one (then the 202) and the local
   * buffer applied them (read-your-writes at this relay, bounded wait). Dedupe: `Nats-Msg-Id`
   * inside JetStream's duplicate window, the buffer's `(source, id)` index beyond it.
   */
  append(events: readonly Incoming[], from: Claimant | null, wait = true): Promise<void> {
    const p = this.publish(events, from, wait);
    this.pending.add(p);
    const done = (): void => {
      this.pending.delete(p);
    };
    p.then(done, done);
    return p;
  }

  private async publish(events: readonly Incoming[], from: Claimant | null, wait: boolean): Promise<void> {
    const core = this.core;
    if (!core) throw new BackendUnavailableError('nats-unavailable', 'the relay is not attached to JetStream yet');
    if (!this.connected) throw new BackendUnavailableError('nats-unavailable', `NATS is unreachable (${this.lastError || 'disconnected'})`);
    const pubs: Array<Promise<PubAck>> = [];
    const prepared: Incoming[] = [];
    const redeliver: Incoming[] = [];
    for (const received of events) {
      const inc = core.prepare(received);
      const ev = inc.event;
      const source = String(ev['source']);
      const id = String(ev['id']);
      const session = typeof ev['session'] === 'string' ? ev['session'] : null;
      if (core.buffer.has(source, id)) {
        redeliver.push(inc);
        continue;
      }
      const h = headers();
      h.set('Aep-Relay', this.relayId);
      // Contract C3: the request is bound to the claim digest of the connection that raised it.
      if (from && ev['type'] === 'attention.requested') h.set('Aep-Claim', from.claim);
      pubs.push(this.js.publish(this.names.sessionSubject(session), inc.raw, { msgID: msgId(source, id), headers: h, timeout: this.o.ackTimeoutMs }));
      prepared.push(inc);
      if (from && session !== null && Number.isInteger(ev['seq'])) core.claims.claim(from, session);
    }
    let acks: PubAck[];
    try {
      acks = await Promise.all(pubs);
    } catch (err) {
      this.counters.natsPublishFailures++;
      const why = err instanceof Error ? err.message : String(err);
      this.fail(why);
      throw new BackendUnavailableError('nats-unavailable', `JetStream did not acknowledge: ${why}`);
    }
    this.jsOk = true;
    let max = 0;
    for (let i = 0; i < acks.length; i++) {
      const a = acks[i]!;
      this.counters.natsPublished++;
      // A duplicate's ack carries the sequence of the copy already in the stream.
      max = Math.max(max, a.seq);
      if (a.duplicate) {
        this.counters.natsDuplicates++;
        redeliver.push(prepared[i]!);
      } else core.counters.ingested++;
    }
    // Redeliveries fan out live at this relay, as a single relay does (AEP-0003 §5), after the
    // copy in the stream was applied here: a consumer sees the cluster's order first.
    const applied = max > 0 ? this.reached(max, 2000) : Promise.resolve();
    if (wait) {
      await applied;
      for (const inc of redeliver) core.redeliver(inc);
    } else if (redeliver.length)
      void applied.then(() => {
        for (const inc of redeliver) core.redeliver(inc);
      });
  }

  offer(inc: Incoming, from: Claimant | null, lost: (err: Error) => void): void {
    this.append([inc], from, false).catch((err: unknown) => lost(err instanceof Error ? err : new Error(String(err))));
  }

  durable(): Promise<void> {
    return this.tokens.sink.durable();
  }

  health(): BackendHealth {
    return {
      ok: this.connected && this.jsOk && this.following,
      detail: {
        connected: this.connected,
        jetstream: this.jsOk,
        following: this.following,
        stream: this.names.stream,
        relay: this.relayId,
        applied: this.applied,
        ...(this.lastError ? { lastError: this.lastError.slice(0, 200) } : {}),
      },
    };
  }

  stats(): Record<string, number> {
    return { ...this.counters, natsConnected: this.connected ? 1 : 0, natsCommandsRemote: this.claims.stats.commandsRemote };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await Promise.race([Promise.allSettled([...this.pending]), new Promise((r) => setTimeout(r, this.o.ackTimeoutMs).unref())]);
    await this.claims.stop();
    this.closed = true;
    if (this.probe) clearInterval(this.probe);
    for (const w of this.waiters.splice(0)) w.resolve();
    try {
      await this.tokens.sink.durable();
    } catch {
      /* reported at the time */
    }
    try {
      await this.messages?.close();
    } catch {
      /* closing anyway */
    }
    await this.nc.close().catch(() => {});
  }
}

/** A server URL for a log line: no user:password. */
function scrub(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}

/**
 * Events JetStream keeps per session: twice the replay depth. The relays' buffers evict at the
 * depth (deterministically, the same at every relay, with tombstones); the stream's own limit is
 * only the backstop. Were it the depth itself, a burst longer than the depth would be evicted
 * from the stream before a relay's consumer read it, and that relay would never see the
 * eviction (no `replay-exhausted` marker: a silent gap). Pinned by test/rebuild.test.ts.
 */
export function streamDepth(bufferDepth: number): number {
  return bufferDepth * 2;
}

/**
 * The event stream (docs/scale-out.md "Mapping"): one subject per session, per-subject limit =
 * twice the replay depth, discard old, file storage, 2 min duplicate window. An existing stream
 * made for another depth is refused: the advertised `replay.buffer` must be the same everywhere.
 */
async function ensureStream(jsm: JetStreamManager, names: Names, opts: ResolvedOptions, replicas: number): Promise<void> {
  const cfg = {
    name: names.stream,
    subjects: [names.events],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    discard: DiscardPolicy.Old,
    max_msgs_per_subject: streamDepth(opts.bufferDepth),
    max_bytes: opts.totalBytes * 2,
    duplicate_window: DUPLICATE_WINDOW_MS * NS,
    num_replicas: replicas,
    max_msg_size: opts.maxBodyBytes + 4096,
  };
  let info;
  try {
    info = await jsm.streams.info(names.stream);
  } catch {
    info = null;
  }
  if (!info) {
    try {
      await jsm.streams.add(cfg);
      return;
    } catch (err) {
      try {
        info = await jsm.streams.info(names.stream);
      } catch {
        throw err;
      } // another relay created it meanwhile
    }
  }
  const c = info.config;
  if (c.max_msgs_per_subject !== streamDepth(opts.bufferDepth)) {
    throw new NatsStartError(
      'AEP_RELAY_NATS_CONFIG',
      `stream ${names.stream} was made for --buffer ${c.max_msgs_per_subject / 2} (it holds ${c.max_msgs_per_subject} Events per session) but this relay was started with --buffer ${opts.bufferDepth}: every relay of a cluster needs the same --buffer (use another --nats-stream, or the same value)`,
    );
  }
  if (!c.subjects.includes(names.events))
    throw new NatsStartError(
      'AEP_RELAY_NATS_CONFIG',
      `stream ${names.stream} exists with other subjects (${c.subjects.join(', ').slice(0, 200)}): use another --nats-stream`,
    );
}

async function readTokens(kv: KV): Promise<StoredToken[]> {
  const out: StoredToken[] = [];
  for await (const k of await kv.keys()) {
    const e = await kv.get(k);
    if (!e || e.operation !== 'PUT') continue;
    try {
      out.push(JSON.parse(e.string()) as StoredToken);
    } catch {
      /* unreadable: grants nothing */
    }
  }
  return out;
}
