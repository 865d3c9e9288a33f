// Reading the relay's SSE binding (AEP-0003 §3.3) through `@aep/client`'s
// `subscribe` (issue 13 item 3: one wire layer): SSE over `fetch`, so the token travels as
// `Authorization: Bearer` and never appears in a URL; the protocol's SSE codec parses frames;
// reconnects with backoff, replaying `from=all` again (new sessions may have started meanwhile;
// the `(source, id)` dedupe in the client and in the store makes the overlap harmless, AEP-0003
// §7). This module only maps the client's states onto what the inbox shows.
import { ClientError, subscribe } from '@aep/client';
import type { WireEvent } from '@aep/client';

/** A User Timing mark (read by bench/inbox.bench.ts); the first of each name only. */
function mark(name: string): void {
  try {
    if (performance.getEntriesByName(name).length === 0) performance.mark(name);
  } catch {
    /* no User Timing */
  }
}

/** Connection state reported to the UI. */
export type StreamState = 'connecting' | 'live' | 'reconnecting' | 'unauthorized' | 'error';

/** Options for {@link openStream}. */
export interface StreamOptions {
  /** Base URL of the relay (the page's origin in production). */
  base: string;
  token: string;
  /** Called with each event (deduplicated on `(source, id)` by the client; the store dedupes too). */
  onEvent: (e: WireEvent) => void;
  /** Called once after each burst of events (one network chunk): the batching point for re-renders. */
  onBatch: () => void;
  onState: (s: StreamState, detail?: string) => void;
}

/**
 * Open `/stream?from=all` (replay everything held, then live) and keep it open. A relay that
 * refuses the token (HTTP 401/403) ends it with `unauthorized` (never retried with a token the
 * relay refuses). Returns a function that stops the stream.
 */
export function openStream(opts: StreamOptions): () => void {
  let batchQueued = false;
  let lastError: string | undefined;
  // The client delivers a chunk's events synchronously, one after the other: a microtask queued
  // by the first runs after the last, so one batch = one chunk.
  const flush = () => {
    batchQueued = false;
    opts.onBatch();
  };
  const sub = subscribe(
    {
      url: opts.base,
      ...(opts.token ? { token: opts.token } : {}),
      from: 'all',
      transport: 'sse',
      reconnect: { initialMs: 250, maxMs: 10_000 },
      onState: (s) => {
        if (s === 'open') {
          lastError = undefined;
          mark('aep:stream-open');
          opts.onState('live');
        } else if (s === 'connecting') opts.onState('connecting');
        else if (s === 'reconnecting') opts.onState('reconnecting', lastError);
      },
      onError: (err) => {
        lastError = err.message;
      },
    },
    (e) => {
      mark('aep:stream-chunk');
      opts.onEvent(e);
      if (!batchQueued) {
        batchQueued = true;
        queueMicrotask(flush);
      }
    },
  );
  sub.done.then(
    () => undefined,
    (err: unknown) => {
      if (err instanceof ClientError && err.code === 'AEP_CLIENT_REFUSED') opts.onState('unauthorized', err.message);
      else if (!(err instanceof ClientError && err.code === 'AEP_CLIENT_CLOSED')) opts.onState('error', err instanceof Error ? err.message : String(err));
    },
  );
  return () => sub.close();
}
