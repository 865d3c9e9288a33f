// Internal helpers (not exported from the package root). Browser-safe: no `node:` import here
// (the host name of default `source` URIs comes from `host.ts`, in the Node entry only).
import type { ReconnectOptions } from './types.js';

/** `aep://{host}/agent/{agent}` (AEP-0001 §5 recommended shape). */
export function defaultSource(agent: string, host = 'localhost'): string {
  return `aep://${host}/agent/${encodeURIComponent(agent)}`;
}

/** Backoff delay for attempt `n` (0-based): exponential with full jitter, bounded. */
export function backoffDelay(n: number, opts: ReconnectOptions = {}): number {
  const initial = opts.initialMs ?? 100;
  const max = opts.maxMs ?? 5_000;
  const cap = Math.min(max, initial * 2 ** Math.min(n, 20));
  return Math.round(cap / 2 + Math.random() * (cap / 2));
}

/** A bounded insertion-ordered map: the oldest entries are evicted past `limit`. */
export class BoundedMap<K, V> {
  private readonly map = new Map<K, V>();
  constructor(private readonly limit: number) {}
  get(k: K): V | undefined {
    return this.map.get(k);
  }
  has(k: K): boolean {
    return this.map.has(k);
  }
  set(k: K, v: V): void {
    if (this.map.has(k)) this.map.delete(k);
    this.map.set(k, v);
    while (this.map.size > this.limit) {
      const first = this.map.keys().next();
      if (first.done) break;
      this.map.delete(first.value);
    }
  }
  delete(k: K): boolean {
    return this.map.delete(k);
  }
  get size(): number {
    return this.map.size;
  }
}

/** Parse JSON without throwing. */
export function tryParse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** True for a plain JSON object. */
export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
