// Small helpers shared by the relay's bindings.

/** A plain JSON object (not null, not an array). */
export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The request target as a URL, or null when it cannot be parsed (answered 400, never 500). */
export function parseUrl(target: string | undefined): URL | null {
  try {
    return new URL(target ?? '/', 'http://relay.invalid');
  } catch {
    return null;
  }
}

/** Session text safe inside one SSE line (session ids are untrusted, AEP-0001 §12). */
export function sseSafe(s: string): string {
  return s.replace(/[\r\n]/g, '?');
}

/**
 * The frames bound for one consumer within a tick, written as one buffer when the tick ends:
 * an ingest batch of n Events fans out as one write per consumer, not n (issue 19: the
 * per-write bookkeeping of a corked socket, three writes per Event for a chunked SSE response,
 * was a large share of the fan-out's garbage and so of its GC pauses). Latency is unchanged: a
 * corked socket also waited for the end of the tick. Every other write to the same connection
 * calls flush() first, so frames keep their order.
 */
export class TickBatch {
  private readonly parts: Buffer[] = [];
  /** Bytes waiting; a consumer counts them in what it has buffered (backpressure). */
  bytes = 0;
  constructor(private readonly out: (b: Buffer) => void) {}

  add(b: Buffer): void {
    if (this.parts.length === 0) process.nextTick(flushBatch, this);
    this.parts.push(b);
    this.bytes += b.length;
  }

  /** Writes what waits, now (one buffer). */
  flush(): void {
    const n = this.parts.length;
    if (n === 0) return;
    const b = n === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.bytes);
    this.parts.length = 0;
    this.bytes = 0;
    this.out(b);
  }
}

function flushBatch(b: TickBatch): void {
  b.flush();
}

/** The Host header without its port, lowercased. */
export function hostName(host: string | undefined): string {
  return (host ?? '').replace(/:\d+$/, '').toLowerCase();
}

/** An error's message, for log lines. */
export function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
