// SSE binding: `GET /stream` (AEP-0003 §3.3): query → subscription, replay, live.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CaptureLevel } from '@aep/protocol';
import { parseResumeToken } from '@aep/protocol';
import type { Principal } from './auth.js';
import type { RelayCore } from './core.js';
import { sendError } from './errors.js';
import { securityHeaders } from './headers.js';
import { Subscription, compileSpec, type ConsumerSink, type Outgoing } from './hub.js';
import { corkForTick, sseSafe } from './util.js';

/** One SSE response as a consumer. */
export class SseSink implements ConsumerSink {
  readonly kind = 'sse' as const;
  closed = false;
  corked = false;
  constructor(
    readonly res: ServerResponse,
    readonly principal: Principal,
  ) {}
  buffered(): number {
    return this.res.writableLength;
  }
  deliver(_sub: Subscription, o: Outgoing, ceiling: CaptureLevel | undefined): void {
    if (this.closed) return;
    if (this.res.socket) corkForTick(this, this.res.socket);
    this.res.write(
      o.frame('sse', ceiling, (text) => {
        const id = o.positioned && o.session !== null && !/[\r\n]/.test(o.session) ? `id: ${o.session}:${o.pos[0]}:${o.pos[1]}\n` : '';
        // One UTF-8 encoding per (Event, ceiling), shared by every SSE subscriber (issue 19).
        return Buffer.from(`event: ${o.type}\ndata: ${text}\n${id}\n`, 'utf8');
      }),
    );
  }
  marker(_sub: Subscription, session: string, earliest: { epoch: number; seq: number }): void {
    if (!this.closed) this.res.write(`: replay-exhausted ${sseSafe(session)} ${earliest.epoch}:${earliest.seq}\n\n`);
  }
  replayDone(sub: Subscription): void {
    if (!sub.liveAfterReplay && !this.closed) {
      this.closed = true;
      this.res.end();
    }
  }
  disconnectSlow(): void {
    // End the stream: the consumer resumes exactly from its Last-Event-ID (AEP-0003 §8.4).
    this.closed = true;
    this.res.destroy();
  }
  drained(): Promise<void> {
    return new Promise((resolve) => {
      if (this.closed || this.res.writableLength === 0) return resolve();
      const done = () => {
        this.res.off('drain', done);
        this.res.off('close', done);
        resolve();
      };
      this.res.on('drain', done);
      this.res.on('close', done);
    });
  }
  /** Heartbeat comment (AEP-0003 §3.3), skipped while the consumer is behind. */
  ping(slowBytes: number): void {
    if (!this.closed && this.buffered() < slowBytes) this.res.write(': ping\n\n');
  }
  /** End the stream at shutdown. */
  end(): void {
    if (!this.closed) {
      this.closed = true;
      this.res.end(': closing\n\n');
    }
  }
}

/** The SSE binding: open streams, for heartbeats and shutdown. */
export class SseBinding {
  readonly sinks = new Set<SseSink>();
  constructor(private readonly core: RelayCore) {}

  /** `GET /stream`: refusals before the 200 (AEP-0003 §3.3), then replay and live. */
  open(req: IncomingMessage, res: ServerResponse, url: URL, principal: Principal): void {
    const q = url.searchParams;
    const fail = (code: 'invalid-filter' | 'limit-exceeded', detail: string) => sendError(res, code, detail);
    let filter: unknown;
    let from: unknown;
    const fq = q.get('filter');
    if (fq !== null) {
      try {
        filter = JSON.parse(fq);
      } catch {
        return fail('invalid-filter', 'filter is not valid JSON (AEP-0003 §6.1)');
      }
    }
    const fromQ = q.get('from');
    if (fromQ !== null) {
      if (fromQ === 'all') from = 'all';
      else {
        try {
          from = JSON.parse(fromQ);
        } catch {
          return fail('invalid-filter', 'from is not valid JSON nor "all" (AEP-0003 §7)');
        }
      }
    } else {
      const lei = req.headers['last-event-id'];
      if (typeof lei === 'string' && lei !== '') {
        const t = parseResumeToken(lei);
        if (!t) return fail('invalid-filter', 'Last-Event-ID must be {session}:{epoch}:{seq} (AEP-0003 §7)');
        from = [t];
      }
    }
    const capture = q.get('capture') ?? undefined;
    const c = compileSpec(filter, from, capture, this.core.opts.maxFromPositions);
    if (!c.ok) return fail(c.code, c.detail);
    c.spec.ceiling = principal.cap(c.spec.ceiling); // never above the token's read level (C7)
    const live = q.get('live') !== '0';
    res.writeHead(200, { ...securityHeaders(), 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no' });
    res.flushHeaders();
    const sink = new SseSink(res, principal);
    const sub = new Subscription('sse', c.spec, sink, live);
    const hub = this.core.hub;
    this.sinks.add(sink);
    res.on('close', () => {
      sink.closed = true;
      this.sinks.delete(sink);
      hub.remove(sub);
    });
    // Register before the snapshot (same synchronous block): nothing lost, nothing doubled.
    if (live) hub.add(sub);
    const parts = this.core.snapshot(c.spec, live);
    if (parts.length === 0 && live) return;
    hub.replay(sub, parts, () => sink.drained(), this.core.read, this.core.fetch).catch(() => res.destroy());
  }

  /** Heartbeats for every open stream; streams whose token expired end. */
  tick(): void {
    const now = Date.now();
    for (const s of this.sinks) {
      if (!s.principal.valid(now)) {
        s.end();
        continue;
      }
      s.ping(this.core.opts.slowConsumerBytes);
    }
  }

  /** End every stream authenticated with token `id`. */
  revoke(id: string): void {
    for (const s of this.sinks) if (s.principal.tokenId === id) s.end();
  }

  /** End every stream (shutdown). */
  closeAll(): void {
    for (const s of this.sinks) s.end();
  }
}
