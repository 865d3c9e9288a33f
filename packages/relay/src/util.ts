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
 * Cork a socket for the rest of this tick: every Event of one ingest batch goes out in one
 * syscall instead of one per Event (fan-out cost, not semantics).
 */
export function corkForTick(owner: { corked: boolean }, s: { cork(): void; uncork(): void }): void {
  if (owner.corked) return;
  owner.corked = true;
  s.cork();
  process.nextTick(() => {
    owner.corked = false;
    s.uncork();
  });
}

/** The Host header without its port, lowercased. */
export function hostName(host: string | undefined): string {
  return (host ?? '').replace(/:\d+$/, '').toLowerCase();
}

/** An error's message, for log lines. */
export function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
