// Cluster-wide claims, roster and command routing (AEP-0003 §4.1, AEP-0004 §4; contracts C3,
// C4; docs/scale-out.md "Claims and roster"). Every relay keeps its own connections in the
// in-process `Claims` and mirrors them into the KV bucket `<stream>_claims`, one key per
// connection (`<relay>.<serial>`), holding the hello identity and control declaration copied
// verbatim, the sessions it claims, and the sha256 digest of its hello claim (never the claim).
// Every relay watches the bucket, so the roster and the claimant count of a session are
// cluster-wide. Relays beat in `<stream>_relays`; the connections of a relay whose beat stopped
// (it died: kill -9, network) are ignored after 3 of its beat intervals and purged after 15. A command for a
// remote connection goes to that relay by request/reply; "no responders" = `no-route`.
import { Claims, type Claimant, type ClaimRegistry, type CommandTarget, type HelloInfo, type RemoteTarget } from '@aep/relay';
import type { KV } from '@nats-io/kv';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';

/** What one connection looks like in the claims bucket. */
export interface ConnEntry {
  relay: string;
  serial: number;
  since: number;
  claim: string;
  agent?: string;
  instance?: string;
  control?: unknown;
  emits?: unknown;
  sessions: string[];
}

/** A connection of another relay, as a command target. */
class Remote implements RemoteTarget {
  readonly hello: HelloInfo;
  constructor(
    readonly entry: ConnEntry,
    private readonly send: (e: ConnEntry, text: string) => Promise<null | { code: 'no-route'; detail: string }>,
  ) {
    const capabilities: Record<string, unknown> = {};
    if (entry.control !== undefined) capabilities['control'] = entry.control;
    if (entry.emits !== undefined) capabilities['emits'] = entry.emits;
    const identity: Record<string, unknown> = {};
    if (entry.agent !== undefined) identity['agent'] = entry.agent;
    if (entry.instance !== undefined) identity['instance'] = entry.instance;
    this.hello = { role: 'emitter', identity, capabilities };
  }
  forwardCommand(text: string): Promise<null | { code: 'no-route'; detail: string }> {
    return this.send(this.entry, text);
  }
}

/** Where the registry learns what it needs from the backend. */
export interface ClusterDeps {
  relayId: string;
  nc: NatsConnection;
  claimsKv: KV;
  relaysKv: KV;
  commandSubject: (relay: string) => string;
  heartbeatMs: number;
  requestTimeoutMs: number;
  log: (line: string) => void;
}

/** The ClaimRegistry seam on JetStream KV. */
export class ClusterClaims implements ClaimRegistry {
  onClaimState: (claim: string, offlineSince: number | null) => void = () => {};
  private readonly local = new Claims();
  private readonly since = new Map<Claimant, number>();
  private readonly bySerial = new Map<number, Claimant>();
  private readonly remote = new Map<string, Remote>();
  private readonly beats = new Map<string, { at: number; deadAfter: number }>();
  private readonly liveDigests = new Set<string>();
  private readonly dirty = new Set<Claimant>();
  private flushScheduled = false;
  private timer: NodeJS.Timeout | undefined;
  private cmdSub: Subscription | undefined;
  private stopped = false;
  /** Counters for /healthz. */
  readonly stats = { commandsRemote: 0, claimWrites: 0, claimWriteFailures: 0 };

  constructor(private readonly d: ClusterDeps) {
    this.local.onClaimState = (claim) => this.recheck(claim);
  }

  /** Start: beat, watch the relays and claims, serve commands for local connections. */
  async start(): Promise<void> {
    await this.beat();
    await this.watch(
      this.d.relaysKv,
      (key, value) => {
        if (value === null) {
          this.beats.delete(key);
          this.recheckAll();
          return;
        }
        // The beat's own time, never later than now: a stale beat read at start (a relay that died
        // before this one started) is not mistaken for a live one. Assumes clocks within a second (NTP).
        let at = Date.now();
        let every = this.d.heartbeatMs;
        try {
          const v = JSON.parse(value) as { beat?: unknown; every?: unknown };
          if (typeof v.beat === 'number') at = Math.min(at, v.beat);
          if (typeof v.every === 'number' && v.every > 0) every = v.every;
        } catch {
          /* keep now */
        }
        // Dead after 3 missed beats of *that* relay's interval (relays may beat at different rates).
        this.beats.set(key, { at, deadAfter: every * 3 });
        this.recheckAll();
      },
      () => {},
    );
    await this.watch(
      this.d.claimsKv,
      (key, value) => {
        if (key.startsWith(`${this.d.relayId}.`)) return; // our own connections live in `local`
        const before = this.remote.get(key);
        if (value === null) this.remote.delete(key);
        else {
          let e: ConnEntry;
          try {
            e = JSON.parse(value) as ConnEntry;
          } catch {
            return;
          }
          if (typeof e.claim !== 'string' || !Array.isArray(e.sessions) || typeof e.relay !== 'string') return;
          this.remote.set(key, new Remote(e, (entry, text) => this.sendRemote(entry, text)));
        }
        if (before) this.recheck(before.entry.claim);
        const now = this.remote.get(key);
        if (now) this.recheck(now.entry.claim);
      },
      () => {
        this.remote.clear();
      },
    );
    this.cmdSub = this.d.nc.subscribe(this.d.commandSubject(this.d.relayId), {
      callback: (err, msg) => {
        if (err) return;
        let req: { serial?: unknown; text?: unknown };
        try {
          req = JSON.parse(msg.string()) as { serial?: unknown; text?: unknown };
        } catch {
          msg.respond(JSON.stringify({ code: 'no-route', detail: 'malformed routed command' }));
          return;
        }
        const conn = typeof req.serial === 'number' ? this.bySerial.get(req.serial) : undefined;
        if (!conn || !conn.live() || typeof req.text !== 'string') {
          msg.respond(JSON.stringify({ code: 'no-route', detail: 'the target connection closed meanwhile' }));
          return;
        }
        conn.sendText(req.text);
        msg.respond(JSON.stringify({ ok: true }));
      },
    });
    this.timer = setInterval(() => {
      void this.tick();
    }, this.d.heartbeatMs);
    this.timer.unref();
  }

  /**
   * Follow a bucket (initial values, then changes). If the watch ends while the relay runs
   * (JetStream away for long), it starts again from scratch after `reset()`, by itself.
   */
  private async watch(kv: KV, on: (key: string, value: string | null) => void, reset: () => void): Promise<void> {
    const it = await kv.watch({ key: '>' });
    void (async () => {
      for await (const e of it) {
        if (this.stopped) break;
        on(e.key, e.operation === 'PUT' ? e.string() : null);
      }
    })()
      .catch((err: unknown) => this.d.log(`nats: KV watch ended: ${err instanceof Error ? err.message : String(err)}`))
      .then(() => {
        if (this.stopped) return;
        const again = (): void => {
          if (this.stopped) return;
          reset();
          this.watch(kv, on, reset).catch(() => setTimeout(again, 1000).unref());
        };
        setTimeout(again, 1000).unref();
      });
  }

  private async beat(): Promise<void> {
    try {
      await this.d.relaysKv.put(this.d.relayId, JSON.stringify({ beat: Date.now(), every: this.d.heartbeatMs }));
    } catch {
      /* NATS away: the next beat retries */
    }
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    await this.beat();
    this.recheckAll();
    // Purge the connections of relays dead for long (several relays may do it: idempotent).
    for (const [key, r] of this.remote) {
      if (this.isDead(r.entry.relay, 5)) void this.d.claimsKv.delete(key).catch(() => {});
    }
  }

  /** No beat of `relay` for `factor` times its dead-after time (3 of its beats). */
  private isDead(relay: string, factor = 1): boolean {
    const seen = this.beats.get(relay);
    return seen === undefined || Date.now() - seen.at > seen.deadAfter * factor;
  }

  /** Connections of other relays that are alive. */
  private liveRemotes(): Remote[] {
    const out: Remote[] = [];
    for (const r of this.remote.values()) if (!this.isDead(r.entry.relay)) out.push(r);
    return out;
  }

  private recheck(claim: string): void {
    const live = this.liveClaim(claim);
    if (live === this.liveDigests.has(claim)) return;
    if (live) this.liveDigests.add(claim);
    else this.liveDigests.delete(claim);
    this.onClaimState(claim, live ? null : Date.now());
  }

  private recheckAll(): void {
    const digests = new Set(this.liveDigests);
    for (const r of this.remote.values()) digests.add(r.entry.claim);
    for (const c of digests) this.recheck(c);
  }

  /** Put the entry of one local connection (coalesced per tick). */
  private mark(conn: Claimant): void {
    this.dirty.add(conn);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      this.flush();
    });
  }

  private key(conn: Claimant): string {
    return `${this.d.relayId}.${conn.serial}`;
  }

  private flush(): void {
    for (const conn of this.dirty) {
      if (!this.since.has(conn)) continue;
      // A consumer that claims nothing (an inbox, a watcher) can neither be commanded nor ask: no key.
      if (conn.hello?.role === 'consumer' && conn.sessions.size === 0) continue;
      const ident = conn.hello?.identity ?? {};
      const caps = conn.hello?.capabilities ?? {};
      const e: ConnEntry = {
        relay: this.d.relayId,
        serial: conn.serial,
        since: this.since.get(conn)!,
        claim: conn.claim,
        ...(typeof ident['agent'] === 'string' ? { agent: ident['agent'] } : {}),
        ...(typeof ident['instance'] === 'string' ? { instance: ident['instance'] } : {}),
        ...(caps['control'] !== undefined ? { control: caps['control'] } : {}),
        ...(caps['emits'] !== undefined ? { emits: caps['emits'] } : {}),
        sessions: [...conn.sessions],
      };
      this.stats.claimWrites++;
      this.d.claimsKv.put(this.key(conn), JSON.stringify(e)).catch(() => {
        this.stats.claimWriteFailures++;
        this.dirty.add(conn);
      });
    }
    this.dirty.clear();
  }

  /** After a reconnect: write every local connection again (a restarted NATS may have lost nothing, or everything). */
  resync(): void {
    for (const conn of this.since.keys()) this.mark(conn);
    void this.beat();
  }

  present(conn: Claimant): void {
    this.since.set(conn, Date.now());
    this.bySerial.set(conn.serial, conn);
    this.local.present(conn);
    this.mark(conn);
  }

  claim(conn: Claimant, session: string): void {
    if (conn.sessions.has(session)) return;
    this.local.claim(conn, session);
    if (this.since.has(conn)) this.mark(conn);
  }

  drop(conn: Claimant): void {
    this.local.drop(conn);
    this.bySerial.delete(conn.serial);
    this.dirty.delete(conn);
    if (this.since.delete(conn)) void this.d.claimsKv.delete(this.key(conn)).catch(() => {});
  }

  liveClaim(claim: string): boolean {
    if (this.local.liveClaim(claim)) return true;
    return this.liveRemotes().some((r) => r.entry.claim === claim);
  }

  newest(claim: string): CommandTarget | undefined {
    let best: CommandTarget | undefined;
    let bestAt = -1;
    const l = this.local.newest(claim);
    if (l) {
      best = l;
      bestAt = this.since.get(l) ?? 0;
    }
    for (const r of this.liveRemotes())
      if (r.entry.claim === claim && r.entry.since > bestAt) {
        best = r;
        bestAt = r.entry.since;
      }
    return best;
  }

  live(session: string): CommandTarget[] {
    const out: CommandTarget[] = this.local.live(session);
    for (const r of this.liveRemotes()) if (r.entry.sessions.includes(session)) out.push(r);
    return out;
  }

  roster(): Array<Record<string, unknown>> {
    const entries = this.local.roster();
    for (const r of this.liveRemotes()) {
      for (const session of r.entry.sessions) {
        const e: Record<string, unknown> = { session };
        if (r.entry.agent !== undefined) e['agent'] = r.entry.agent;
        if (r.entry.instance !== undefined) e['instance'] = r.entry.instance;
        if (r.entry.control !== undefined) e['control'] = r.entry.control;
        if (r.entry.emits !== undefined) e['emits'] = r.entry.emits;
        entries.push(e);
      }
    }
    return entries;
  }

  /** Routed command to a connection of another relay (request/reply). */
  private async sendRemote(e: ConnEntry, text: string): Promise<null | { code: 'no-route'; detail: string }> {
    this.stats.commandsRemote++;
    try {
      const m = await this.d.nc.request(this.d.commandSubject(e.relay), JSON.stringify({ serial: e.serial, text }), { timeout: this.d.requestTimeoutMs });
      const r = JSON.parse(m.string()) as { ok?: boolean; code?: string; detail?: string };
      if (r.ok === true) return null;
      return { code: 'no-route', detail: typeof r.detail === 'string' ? r.detail.slice(0, 200) : 'the target connection is gone' };
    } catch (err) {
      // "No responders": the relay holding that connection is gone (no-route, AEP-0004 §4.2).
      const noResponders =
        typeof (err as { isNoResponders?: () => boolean }).isNoResponders === 'function' && (err as { isNoResponders: () => boolean }).isNoResponders();
      if (noResponders) this.beats.delete(e.relay);
      return {
        code: 'no-route',
        detail: noResponders
          ? 'the relay the emitter was connected to is gone (no responders)'
          : `the relay the emitter is connected to did not answer in ${this.d.requestTimeoutMs} ms`,
      };
    }
  }

  /** Stop: remove our relay and our connections from the buckets (best effort; a crash leaves them to expire by beat). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    try {
      this.cmdSub?.unsubscribe();
    } catch {
      /* closed */
    }
    const deletes = [...this.since.keys()].map((c) => this.d.claimsKv.delete(this.key(c)).catch(() => {}));
    deletes.push(this.d.relaysKv.delete(this.d.relayId).catch(() => {}));
    await Promise.race([Promise.all(deletes), new Promise((r) => setTimeout(r, 1000).unref())]);
  }
}
