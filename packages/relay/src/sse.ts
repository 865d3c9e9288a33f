// SSE binding: `GET /stream` (AEP-0003 §3.3): query → subscription, replay, live.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CaptureLevel } from '@aep/protocol';
import { parseResumeToken } from '@aep/protocol';
import type { Principal } from './auth.js';
import type { RelayCore } from './core.js';
import { sendError } from './errors.js';
import { securityHeaders } from './headers.js';
import { Subscription, compileSpec, type ConsumerSink, type Outgoing } from './hub.js';
import { TickBatch, sseSafe } from './util.js';

/**
 * The SSE frame of an Event rendered as `text` (AEP-0003 §3.3): `event:`, `data:`, and an `id:`
 * resume token for a positioned Event whose session fits on one line. Encoded straight into one
 * buffer, piece by piece (no string of the whole frame, nor of its head or tail: issue 19).
 */
export function sseEventFrame(o: Outgoing, text: string): Buffer {
  const session = o.positioned && o.session !== null && !/[\r\n]/.test(o.session) ? o.session : null;
  const t = Buffer.byteLength(o.type, 'utf8');
  const b = Buffer.byteLength(text, 'utf8');
  // The resume token `session:epoch:seq`, its numbers written as digits (no string per Event).
  const id = session === null ? 0 : 4 + Buffer.byteLength(session, 'utf8') + 1 + digits(o.pos[0]) + 1 + digits(o.pos[1]) + 1;
  // "event: " type "\ndata: " text "\n" ["id: " session ":" epoch ":" seq "\n"] "\n"
  const f = Buffer.allocUnsafe(7 + t + 7 + b + 1 + id + 1);
  let at = f.write('event: ', 0, 'latin1');
  at += f.write(o.type, at, 'utf8');
  at += f.write('\ndata: ', at, 'latin1');
  at += f.write(text, at, 'utf8');
  f[at++] = 0x0a;
  if (session !== null) {
    at += f.write('id: ', at, 'latin1');
    at += f.write(session, at, 'utf8');
    f[at++] = 0x3a;
    at = putNumber(f, at, o.pos[0]);
    f[at++] = 0x3a;
    at = putNumber(f, at, o.pos[1]);
    f[at++] = 0x0a;
  }
  f[at] = 0x0a;
  return f;
}

/** Length of `String(n)` for a position number (a safe integer; anything else as its string). */
function digits(n: number): number {
  if (!(n >= 0 && n <= Number.MAX_SAFE_INTEGER && Number.isInteger(n))) return String(n).length;
  let d = 1;
  for (let x = n; x >= 10; x = Math.floor(x / 10)) d++;
  return d;
}

/** Write `String(n)` at `at` (ASCII); returns the end. */
function putNumber(f: Buffer, at: number, n: number): number {
  if (!(n >= 0 && n <= Number.MAX_SAFE_INTEGER && Number.isInteger(n))) return at + f.write(String(n), at, 'latin1');
  const end = at + digits(n);
  let x = n;
  for (let i = end - 1; i >= at; i--) {
    f[i] = 0x30 + (x % 10);
    x = Math.floor(x / 10);
  }
  return end;
}

/** One SSE response as a consumer. */
export class SseSink implements ConsumerSink {
  readonly kind = 'sse' as const;
  closed = false;
  /** Event frames of this tick, written as one chunk (every other write flushes them first). */
  private readonly batch = new TickBatch((b, done) => this.writeNow(b, done));
  constructor(
    readonly res: ServerResponse,
    readonly principal: Principal,
  ) {}
  buffered(): number {
    return this.res.writableLength + this.batch.bytes;
  }
  deliver(_sub: Subscription, o: Outgoing, ceiling: CaptureLevel | undefined): void {
    if (this.closed) return;
    // One UTF-8 encoding per (Event, ceiling), shared by every SSE subscriber (issue 19).
    this.batch.add(o.frame('sse', ceiling, sseEventFrame));
  }
  /** A write in order: the Event frames waiting go first. */
  private write(chunk: string): void {
    this.batch.flush();
    this.res.write(chunk);
  }
  private writeNow(b: Buffer, done: () => void): void {
    if (this.closed || this.res.destroyed) return done();
    // One chunk, its length line and CRLF in one syscall.
    const socket = this.res.socket;
    socket?.cork();
    this.res.write(b, done);
    socket?.uncork();
  }
  marker(_sub: Subscription, session: string, earliest: { epoch: number; seq: number }): void {
    if (!this.closed) this.write(`: replay-exhausted ${sseSafe(session)} ${earliest.epoch}:${earliest.seq}\n\n`);
  }
  replayDone(sub: Subscription): void {
    if (!sub.liveAfterReplay && !this.closed) {
      this.batch.flush();
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
    this.batch.flush(); // what waits for the end of the tick is part of what must drain
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
    if (!this.closed && this.buffered() < slowBytes) this.write(': ping\n\n');
  }
  /** End the stream at shutdown. */
  end(): void {
    if (!this.closed) {
      this.batch.flush();
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
