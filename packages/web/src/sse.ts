// Reading the relay's SSE binding (AEP-0003 §3.3, brief 05 §6) with `fetch` and a streaming body
// rather than `EventSource`: fetch can send `Authorization: Bearer`, so the token never appears in
// a URL at all, and it sees every `event:` name (EventSource only routes names it was told about,
// and AEP types are open-ended).

/** One parsed SSE message. */
export interface SseMessage {
  event: string;
  data: string;
  id?: string;
}

/**
 * Incremental SSE parser: feed text chunks, get complete messages. Comments (`: ping`,
 * `: replay-exhausted …`) are reported through `onComment`. LF line endings, blank-line separated
 * (the relay never sends CR, but a CR before LF is tolerated).
 */
export class SseParser {
  private buf = '';
  constructor(
    private readonly onMessage: (m: SseMessage) => void,
    private readonly onComment: (text: string) => void = () => {},
  ) {}

  /** Feed a decoded chunk. */
  push(chunk: string): void {
    this.buf += chunk;
    let idx: number;
    while ((idx = this.buf.indexOf('\n\n')) >= 0) {
      const block = this.buf.slice(0, idx);
      this.buf = this.buf.slice(idx + 2);
      this.block(block);
    }
  }

  private block(block: string): void {
    let event = 'message';
    const data: string[] = [];
    let id: string | undefined;
    for (let line of block.split('\n')) {
      if (line.endsWith('\r')) line = line.slice(0, -1);
      if (line === '') continue;
      if (line.startsWith(':')) { this.onComment(line.slice(1).trim()); continue; }
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
      else if (field === 'id') id = value;
    }
    if (data.length === 0) return;
    const m: SseMessage = { event, data: data.join('\n') };
    if (id !== undefined) m.id = id;
    this.onMessage(m);
  }
}

/** A User Timing mark (read by bench/inbox.bench.ts); the first of each name only. */
function mark(name: string): void {
  try { if (performance.getEntriesByName(name).length === 0) performance.mark(name); } catch { /* no User Timing */ }
}

/** Connection state reported to the UI. */
export type StreamState = 'connecting' | 'live' | 'reconnecting' | 'unauthorized' | 'error';

/** Options for {@link openStream}. */
export interface StreamOptions {
  /** Base URL of the relay (the page's origin in production). */
  base: string;
  token: string;
  /** Called with each parsed JSON event; the caller dedupes (the store does). */
  onEvent: (e: unknown) => void;
  /** Called after each network chunk has been folded (batching point for re-renders). */
  onBatch: () => void;
  onState: (s: StreamState, detail?: string) => void;
}

/**
 * Open `/stream?from=all` (replay everything held, then live) and keep it open, reconnecting
 * with backoff. A reconnect replays again from `all`: new sessions may have started meanwhile,
 * and `(source, id)` dedupe in the store makes the overlap harmless (brief 05 §9.2). Returns a
 * function that stops the stream.
 */
export function openStream(opts: StreamOptions): () => void {
  let stopped = false;
  let ctrl: AbortController | null = null;
  let attempt = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const run = async (): Promise<void> => {
    if (stopped) return;
    ctrl = new AbortController();
    opts.onState(attempt === 0 ? 'connecting' : 'reconnecting');
    try {
      const headers: Record<string, string> = { Accept: 'text/event-stream' };
      if (opts.token) headers['Authorization'] = `Bearer ${opts.token}`;
      const res = await fetch(new URL('stream?from=all', opts.base), { headers, signal: ctrl.signal, cache: 'no-store' });
      if (res.status === 401 || res.status === 403) {
        opts.onState('unauthorized', `the relay answered ${res.status}`);
        return; // do not retry with a token the relay refuses
      }
      if (!res.ok || !res.body) throw new Error(`the relay answered ${res.status}`);
      attempt = 0;
      mark('aep:stream-open');
      opts.onState('live');
      const parser = new SseParser((m) => {
        let v: unknown;
        try { v = JSON.parse(m.data); } catch { return; } // a malformed line never breaks the inbox
        opts.onEvent(v);
      });
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        mark('aep:stream-chunk');
        parser.push(value);
        opts.onBatch();
      }
    } catch (err) {
      if (stopped) return;
      opts.onState('reconnecting', err instanceof Error ? err.message : String(err));
    }
    if (stopped) return;
    attempt++;
    const delay = Math.min(10_000, 250 * 2 ** Math.min(attempt, 6));
    opts.onState('reconnecting');
    timer = setTimeout(() => { void run(); }, delay);
  };
  void run();
  return () => {
    stopped = true;
    if (timer !== undefined) clearTimeout(timer);
    ctrl?.abort();
  };
}
