// Consumer side: SSE `/stream` and WS `subscribe` (AEP-0003 §3.3, §6.5, §7).
import WebSocket from 'ws';
import { safeUrl } from './emitter.js';
import { ClientError } from './errors.js';
import type { ResumePosition, SubscribeOptions, Subscription, WireEvent } from './types.js';
import { BoundedMap, backoffDelay, httpUrl, isObject, socketUrl, tryParse } from './util.js';

/** Errors after which reconnecting cannot help (the request itself is refused). */
class FatalError extends Error {}

/**
 * Subscribe to a relay over SSE (default) or WebSocket. Deduplicates on `(source, id)`
 * (AEP-0001 §7.4) and resumes after a disconnect without a gap (AEP-0003 §7): it reconnects
 * with `from` = the last delivered position of every session seen (or `all` when the
 * subscription started with `all`). `onEvent` receives each event once, with its received bytes.
 */
export function subscribe(options: SubscribeOptions, onEvent: (event: WireEvent, raw: string) => void): Subscription {
  const seen = new BoundedMap<string, true>(options.dedupeLimit ?? 100_000);
  const positions = new Map<string, { epoch: number; seq: number }>();
  for (const p of Array.isArray(options.from) ? options.from : []) positions.set(p.session, { epoch: p.epoch, seq: p.seq });
  const live = options.live !== false;
  if (!live && options.transport === 'ws') {
    throw new ClientError('AEP_CLIENT_OPTION', 'live:false (replay only) needs the SSE transport: the WS binding has no live=0 (AEP-0003 §3.3)');
  }
  const abort = new AbortController();
  let closed = false;
  let readyResolve!: () => void;
  let readyReject!: (e: Error) => void;
  const ready = new Promise<void>((res, rej) => { readyResolve = res; readyReject = rej; });
  ready.catch(() => { /* observed through done/ready by callers that care */ });
  let isReady = false;
  const markReady = () => { if (!isReady) { isReady = true; readyResolve(); } };
  const state = (s: 'connecting' | 'open' | 'reconnecting' | 'closed') => options.onState?.(s);

  const deliver = (raw: string) => {
    const e = tryParse(raw);
    if (!isObject(e) || typeof e['id'] !== 'string' || typeof e['type'] !== 'string') {
      options.onError?.(new ClientError('AEP_CLIENT_HTTP', 'ignored a malformed event'));
      return;
    }
    const key = `${String(e['source'])}\n${e['id']}`;
    if (seen.has(key)) return;
    seen.set(key, true);
    const ev = e as unknown as WireEvent;
    if (typeof ev.session === 'string' && typeof ev.seq === 'number') {
      const epoch = typeof ev.epoch === 'number' ? ev.epoch : 0;
      const prev = positions.get(ev.session);
      if (!prev || epoch > prev.epoch || (epoch === prev.epoch && ev.seq > prev.seq)) positions.set(ev.session, { epoch, seq: ev.seq });
    }
    try {
      onEvent(ev, raw);
    } catch (err) {
      options.onError?.(err instanceof Error ? err : new Error(String(err)));
    }
  };

  const currentFrom = (): 'all' | ResumePosition[] | undefined => {
    if (options.from === 'all') return 'all';
    if (positions.size === 0) return options.from;
    return [...positions].map(([session, p]) => ({ session, epoch: p.epoch, seq: p.seq }));
  };

  const once = options.transport === 'ws' ? runWs : runSse;

  const done = (async () => {
    let failures = 0;
    const onAbort = () => { closed = true; abort.abort(); };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.signal?.aborted) onAbort();
    try {
      while (!closed) {
        state(failures === 0 && !isReady ? 'connecting' : 'reconnecting');
        try {
          await once(options, currentFrom(), live, abort.signal, deliver, () => { failures = 0; markReady(); state('open'); });
          if (!live) break; // replay-only finished
          failures++;
        } catch (err) {
          if (closed) break;
          if (err instanceof FatalError) { readyReject(new ClientError('AEP_CLIENT_HTTP', err.message)); throw new ClientError('AEP_CLIENT_HTTP', err.message); }
          options.onError?.(err instanceof Error ? err : new Error(String(err)));
          failures++;
        }
        if (closed) break;
        const max = options.reconnect?.maxAttempts ?? Infinity;
        if (failures > max) throw new ClientError('AEP_CLIENT_UNREACHABLE', `relay at ${safeUrl(options.url)} unreachable after ${failures} attempts`);
        await sleep(backoffDelay(failures - 1, options.reconnect), abort.signal);
      }
    } catch (err) {
      readyReject(err as Error);
      throw err;
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
      closed = true;
      if (!isReady) readyReject(new ClientError('AEP_CLIENT_CLOSED', 'subscription closed before it was established'));
      state('closed');
    }
  })();

  return {
    close: () => { closed = true; abort.abort(); },
    done,
    ready,
    positions: () => [...positions].map(([session, p]) => ({ session, epoch: p.epoch, seq: p.seq })),
  };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(() => { signal.removeEventListener('abort', onAbort); resolve(); }, ms);
    const onAbort = () => { clearTimeout(t); resolve(); };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** One SSE connection: GET /stream, parse `event:`/`data:`/`id:` and comments (AEP-0003 §3.3). */
async function runSse(
  o: SubscribeOptions, from: 'all' | ResumePosition[] | undefined, live: boolean, signal: AbortSignal,
  deliver: (raw: string) => void, opened: () => void,
): Promise<void> {
  const u = new URL(httpUrl(o.url, '/stream'));
  if (o.filter && Object.keys(o.filter).length > 0) u.searchParams.set('filter', JSON.stringify(o.filter));
  if (o.ceiling) u.searchParams.set('capture', o.ceiling);
  if (from !== undefined) u.searchParams.set('from', from === 'all' ? 'all' : JSON.stringify(from));
  if (!live) u.searchParams.set('live', '0');
  const headers: Record<string, string> = { Accept: 'text/event-stream' };
  if (o.token) headers['Authorization'] = `Bearer ${o.token}`;
  let res: Response;
  try {
    res = await fetch(u, { headers, signal });
  } catch (err) {
    if (signal.aborted) return;
    throw new ClientError('AEP_CLIENT_UNREACHABLE', `cannot reach relay at ${safeUrl(o.url)}: ${(err as Error).message}`);
  }
  if (res.status !== 200 || !res.body) {
    const body = await res.text().catch(() => '');
    const msg = `relay refused the stream: HTTP ${res.status} ${body.slice(0, 300)}`;
    if (res.status >= 400 && res.status < 500) throw new FatalError(msg);
    throw new ClientError('AEP_CLIENT_HTTP', msg);
  }
  opened();
  const decoder = new TextDecoder();
  let buf = '';
  const reader = res.body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += decoder.decode(value, { stream: true });
      let idx: number;
      while ((idx = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, idx);
        buf = buf.slice(idx + 2);
        let data: string | undefined;
        for (const line of block.split('\n')) {
          if (line.startsWith('data:')) data = (data === undefined ? '' : data + '\n') + line.slice(line[5] === ' ' ? 6 : 5);
          else if (line.startsWith(': replay-exhausted ')) {
            const m = /^: replay-exhausted (.+) (\d+):(\d+)$/.exec(line);
            if (m && m[1] && m[2] && m[3]) o.onReplayExhausted?.(m[1], { epoch: Number(m[2]), seq: Number(m[3]) });
          }
        }
        if (data !== undefined) deliver(data);
      }
    }
  } catch (err) {
    if (signal.aborted) return;
    throw err;
  } finally {
    reader.releaseLock?.();
  }
}

/** One WS connection: hello as consumer, one `subscribe`, Event frames (AEP-0003 §3.5, §6.5). */
function runWs(
  o: SubscribeOptions, from: 'all' | ResumePosition[] | undefined, _live: boolean, signal: AbortSignal,
  deliver: (raw: string) => void, opened: () => void,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal.aborted) return resolve();
    const headers: Record<string, string> = {};
    if (o.token) headers['Authorization'] = `Bearer ${o.token}`;
    const ws = new WebSocket(socketUrl(o.url), { headers, perMessageDeflate: false, handshakeTimeout: 10_000 });
    const onAbort = () => { try { ws.close(1000); } catch { ws.terminate(); } };
    signal.addEventListener('abort', onAbort, { once: true });
    let fatal: Error | undefined;
    let lastHeard = Date.now();
    const live = setInterval(() => {
      if (Date.now() - lastHeard > 90_000) { ws.terminate(); return; }
      if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: 'ping', t: Date.now() }));
    }, 30_000);
    live.unref?.();
    ws.on('open', () => {
      ws.send(JSON.stringify({ type: 'hello', versions: ['0.1'], role: 'consumer' }));
      const sub: Record<string, unknown> = { type: 'subscribe', id: 'sub-1' };
      if (o.filter) sub['filter'] = o.filter;
      if (from !== undefined) sub['from'] = from;
      if (o.ceiling) sub['capture'] = o.ceiling;
      ws.send(JSON.stringify(sub)); // pipelined after hello (AEP-0003 §3.5)
    });
    ws.on('unexpected-response', (_req, res) => {
      const code = res.statusCode ?? 0;
      fatal = code >= 400 && code < 500 ? new FatalError(`relay refused the socket: HTTP ${code}`) : new ClientError('AEP_CLIENT_HTTP', `HTTP ${code}`);
      ws.terminate();
    });
    ws.on('error', (err) => { if (!fatal) fatal = new ClientError('AEP_CLIENT_UNREACHABLE', `cannot reach relay at ${safeUrl(o.url)}: ${err.message}`); });
    ws.on('message', (buf: Buffer, isBinary: boolean) => {
      lastHeard = Date.now();
      if (isBinary) return;
      const text = buf.toString('utf8');
      const msg = tryParse(text);
      if (!isObject(msg) || typeof msg['type'] !== 'string') return;
      const type = msg['type'];
      if (type.includes('.')) { deliver(text); return; }
      if (type === 'subscribed') { opened(); return; }
      if (type === 'ping') { ws.send(JSON.stringify({ type: 'pong', t: msg['t'] })); return; }
      if (type === 'replay-exhausted') {
        const e = msg['earliest'];
        if (typeof msg['session'] === 'string' && isObject(e)) o.onReplayExhausted?.(msg['session'], { epoch: Number(e['epoch'] ?? 0), seq: Number(e['seq'] ?? 0) });
        return;
      }
      if (type === 'error' && msg['id'] === 'sub-1') {
        fatal = new FatalError(`subscribe refused: ${String(msg['code'])}${msg['detail'] ? `: ${String(msg['detail'])}` : ''}`);
        ws.close(1000);
      }
    });
    ws.on('close', () => {
      clearInterval(live);
      signal.removeEventListener('abort', onAbort);
      if (signal.aborted) return resolve();
      if (fatal) return reject(fatal);
      resolve(); // dropped: the caller reconnects from the last positions
    });
  });
}
