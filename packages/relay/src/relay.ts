// The relay: one node:http server carrying HTTP ingest + discovery (http.ts), SSE (sse.ts),
// WebSocket (ws.ts) and control routing (control.ts) over shared state (core.ts) (AEP-0003 §3-§8;
// AEP-0004 §4). Protocol logic (validation, filters, down-levelling) comes from @aep/protocol.
// This module wires the parts and owns the lifecycle.
import { createServer } from 'node:http';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { RelayBackend } from './backend.js';
import { ControlRouter } from './control.js';
import { RelayCore } from './core.js';
import { HttpRoutes } from './http.js';
import type { ResolvedOptions } from './options.js';
import { SseBinding } from './sse.js';
import type { SqliteStore } from './store.js';
import { errText } from './util.js';
import { WsBinding } from './ws.js';

export { SUPPORTED_VERSIONS } from './core.js';

/** Health counters (GET /healthz). */
export interface RelayStats {
  ingested: number;
  regated: number;
  duplicates: number;
  held: number;
  heldBytes: number;
  sessions: number;
  evicted: number;
  sessionsEvicted: number;
  consumers: number;
  subscriptions: number;
  delivered: number;
  dropped: number;
  slowDisconnects: number;
  maxQueuedBytes: number;
  sockets: number;
  commandsForwarded: number;
  commandsRefused: number;
  storeCommits: number;
  storeFailures: number;
  /** Raw bytes of held Events kept in memory; with a store, committed ones are read back from it (issue 19). */
  heldInMemoryBytes: number;
}

const LOOPBACK = ['127.0.0.1', 'localhost', '::1', '[::1]'];

/** One running relay. Create through `startRelay`. */
export class Relay {
  readonly server: Server;
  readonly core: RelayCore;
  private readonly sse: SseBinding;
  private readonly ws: WsBinding;
  private readonly http: HttpRoutes;
  private ticker: NodeJS.Timeout | undefined;
  private drainDeadline = 0;
  private drainSet = false;

  constructor(
    readonly opts: ResolvedOptions,
    private readonly store: SqliteStore | null,
    private readonly backend: RelayBackend | null = null,
  ) {
    this.core = new RelayCore(opts, store, backend);
    // DNS-rebinding guard: a loopback relay only answers Host names that are loopback.
    const loopbackHosts = LOOPBACK.includes(opts.host) ? new Set([...LOOPBACK, opts.host]) : null;
    this.sse = new SseBinding(this.core);
    this.ws = new WsBinding(this.core, new ControlRouter(this.core), loopbackHosts);
    this.http = new HttpRoutes(this.core, this.sse, () => ({ ...this.stats() }), loopbackHosts);
    this.http.onRevoke = (id) => {
      this.sse.revoke(id);
      this.ws.revoke(id);
    };
    this.server = createServer(
      { headersTimeout: opts.headersTimeoutMs, requestTimeout: opts.requestTimeoutMs, connectionsCheckingInterval: Math.min(1000, opts.headersTimeoutMs) },
      (req, res) => this.http.request(req, res),
    );
    this.server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => HttpRoutes.clientError(err, socket));
    this.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      try {
        this.ws.upgrade(req, socket, head);
      } catch (err) {
        opts.log(`upgrade failed: ${errText(err)}`);
        socket.destroy();
      }
    });
  }

  /** Rebuild the buffer from the durable store. */
  load(): Promise<void> {
    return this.core.load();
  }

  /** Counters for /healthz and tests. */
  stats(): RelayStats {
    const { buffer, hub, counters } = this.core;
    return {
      ingested: counters.ingested,
      regated: counters.regated,
      duplicates: buffer.stats.duplicates,
      held: buffer.heldEvents,
      heldBytes: buffer.heldBytes,
      sessions: buffer.sessionCount,
      evicted: buffer.stats.evicted,
      sessionsEvicted: buffer.stats.sessionsEvicted,
      consumers: hub.consumerCount,
      subscriptions: hub.stats.subscriptions,
      delivered: hub.stats.delivered,
      dropped: hub.stats.dropped,
      slowDisconnects: hub.stats.slowDisconnects,
      maxQueuedBytes: hub.stats.maxQueuedBytes,
      sockets: this.ws.sockets.size,
      commandsForwarded: counters.commandsForwarded,
      commandsRefused: counters.commandsRefused,
      storeCommits: this.store?.stats.commits ?? 0,
      storeFailures: this.store?.stats.failures ?? 0,
      heldInMemoryBytes: buffer.arenaStats.live,
      ...this.backend?.stats(),
    };
  }

  /** Listen; resolves with the bound port. */
  async listen(): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.opts.port, this.opts.host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.ticker = setInterval(() => {
      this.sse.tick();
      this.ws.tick();
    }, this.opts.heartbeatMs);
    this.ticker.unref();
    const addr = this.server.address();
    return typeof addr === 'object' && addr ? addr.port : this.opts.port;
  }

  /** Set (or shorten) the end of the drain period of a coming or running `close()` (contract C5). */
  drainUntil(deadline: number): void {
    if (!this.drainSet || deadline < this.drainDeadline) this.drainDeadline = deadline;
    this.drainSet = true;
  }

  /**
   * Graceful shutdown (AEP-0003 §3.5.4; contract C5): stop accepting connections (and, on the
   * ones kept, every request but `POST /events`, answered 503 `shutting-down`); until the drain
   * deadline, or as soon as no emitter is connected, keep ingesting what connected emitters send;
   * commit it; then `closing` + 1001 on sockets, end SSE, flush and close the store.
   */
  async close(): Promise<void> {
    this.core.closing = true;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    while (Date.now() < this.drainDeadline && this.ws.emitters() > 0) await new Promise((r) => setTimeout(r, 20));
    try {
      await this.store?.durable();
    } catch (err) {
      this.opts.log(`store write failed while closing: ${errText(err)}`);
    }
    if (this.ticker) clearInterval(this.ticker);
    this.sse.closeAll();
    await this.ws.closeAll();
    this.server.closeIdleConnections();
    setTimeout(() => this.server.closeAllConnections(), 1000).unref();
    await closed;
    this.core.push?.close();
    await this.store?.close();
    await this.backend?.close();
  }

  /** Undo a start that failed after the store was opened. */
  async abort(): Promise<void> {
    this.core.closing = true;
    if (this.ticker) clearInterval(this.ticker);
    if (this.server.listening) await new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.core.push?.close();
    await this.store?.close();
    await this.backend?.close();
  }
}
