// Consumer side: SSE `/stream` and WS `subscribe` (AEP-0003 §3.3, §6.5, §7). Browser-safe: SSE
// over `fetch` (which can send `Authorization`, so the token never sits in a URL), WS over the
// socket seam (`socket.ts`); frames, SSE messages and URLs come from the protocol wire layer.
import { SseParser, helloFrame, parseSocketMessage, pingFrame, pongFrame, redactUrl, streamUrl, subscribeFrame, encodeFrame } from '@aep/protocol';
import { ClientError, isRefusalStatus, refusedError } from './errors.js';
import { resolveSocketFactory } from './socket.js';
import type { SocketFactory } from './socket.js';
import type { ResumePosition, SubscribeOptions, Subscription, WireEvent } from './types.js';
import { BoundedMap, backoffDelay, isObject, tryParse } from './util.js';

/** A failure after which reconnecting cannot help (the request itself is refused). */
class Fatal {
  constructor(readonly error: ClientError) {}
}

const SUB_ID = 'sub-1';
const PING_INTERVAL_MS = 30_000;
const LIVENESS_TIMEOUT_MS = 90_000;

/**
 * Subscribe to a relay over SSE (default) or WebSocket. Deduplicates on `(source, id)`
 * (AEP-0001 §7.4) and resumes after a disconnect without a gap (AEP-0003 §7): it reconnects
 * with `from` = the last delivered position of every session seen (or `all` when the
 * subscription started with `all`). `onEvent` receives each event once, with its received bytes.
 * A relay that refuses the token (HTTP 401/403) ends the subscription at once with
 * `AEP_CLIENT_REFUSED` (never retried).
 */
export function subscribe(options: SubscribeOptions, onEvent: (event: WireEvent, raw: string) => void): Subscription {
  const seen = new BoundedMap<string, true>(options.dedupeLimit ?? 100_000);
  const positions = new Map<string, { epoch: number; seq: number }>();
  for (const p of Array.isArray(options.from) ? options.from : []) positions.set(p.session, { epoch: p.epoch, seq: p.seq });
  const live = options.live !== false;
  if (!live && options.transport === 'ws') {
    throw new ClientError('AEP_CLIENT_OPTION', 'live:false (replay only) needs the SSE transport: the WS binding has no live=0 (AEP-0003 §3.3)');
  }
  // Resolved up front so a missing WebSocket implementation is an immediate option error.
  const factory = options.transport === 'ws' ? resolveSocketFactory(options) : undefined;
  const abort = new AbortController();
  let closed = false;
  let readyResolve!: () => void;
  let readyReject!: (e: Error) => void;
  const ready = new Promise<void>((res, rej) => {
    readyResolve = res;
    readyReject = rej;
  });
  ready.catch(() => {
    /* observed through done/ready by callers that care */
  });
  let isReady = false;
  const markReady = () => {
    if (!isReady) {
      isReady = true;
      readyResolve();
    }
  };
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

  const ctx: RunContext = {
    o: options,
    live,
    signal: abort.signal,
    deliver,
    opened: () => {
      markReady();
      state('open');
    },
  };

  const done = (async () => {
    let failures = 0;
    const onAbort = () => {
      closed = true;
      abort.abort();
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.signal?.aborted) onAbort();
    try {
      while (!closed) {
        state(failures === 0 && !isReady ? 'connecting' : 'reconnecting');
        let connected = false;
        try {
          const from = currentFrom();
          await (factory
            ? runWs(ctx, factory, from, () => {
                connected = true;
              })
            : runSse(ctx, from, () => {
                connected = true;
              }));
          if (!live) break; // replay-only finished
        } catch (err) {
          if (closed) break;
          if (err instanceof Fatal) throw err.error;
          options.onError?.(err instanceof Error ? err : new Error(String(err)));
        }
        if (closed) break;
        failures = connected ? 1 : failures + 1;
        const max = options.reconnect?.maxAttempts ?? Infinity;
        if (failures > max) throw new ClientError('AEP_CLIENT_UNREACHABLE', `relay at ${redactUrl(options.url)} unreachable after ${failures} attempts`);
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
    close: () => {
      closed = true;
      abort.abort();
    },
    done,
    ready,
    positions: () => [...positions].map(([session, p]) => ({ session, epoch: p.epoch, seq: p.seq })),
  };
}

interface RunContext {
  o: SubscribeOptions;
  live: boolean;
  signal: AbortSignal;
  deliver: (raw: string) => void;
  opened: () => void;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      resolve();
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** The `error` member of a relay's JSON error body, when it has one. */
function wireCodeOf(body: string): string | undefined {
  const v = tryParse(body);
  return isObject(v) && typeof v['error'] === 'string' ? v['error'] : undefined;
}

/** One SSE connection: GET /stream, parsed by the protocol's SSE codec (AEP-0003 §3.3). */
async function runSse(ctx: RunContext, from: 'all' | ResumePosition[] | undefined, connected: () => void): Promise<void> {
  const { o, signal } = ctx;
  const url = streamUrl(o.url, {
    ...(o.filter ? { filter: o.filter } : {}),
    ...(o.ceiling ? { capture: o.ceiling } : {}),
    ...(from !== undefined ? { from } : {}),
    live: ctx.live,
  });
  const headers: Record<string, string> = { Accept: 'text/event-stream' };
  if (o.token) headers['Authorization'] = `Bearer ${o.token}`;
  let res: Response;
  try {
    res = await fetch(url, { headers, signal });
  } catch (err) {
    if (signal.aborted) return;
    throw new ClientError('AEP_CLIENT_UNREACHABLE', `cannot reach relay at ${redactUrl(o.url)}: ${(err as Error).message}`);
  }
  if (res.status !== 200 || !res.body) {
    const body = await res.text().catch(() => '');
    if (isRefusalStatus(res.status)) throw new Fatal(refusedError(`relay at ${redactUrl(o.url)} refused the stream`, res.status));
    const wireCode = wireCodeOf(body);
    const err = new ClientError('AEP_CLIENT_HTTP', `relay refused the stream: HTTP ${res.status} ${body.slice(0, 300)}`, {
      status: res.status,
      ...(wireCode ? { wireCode } : {}),
    });
    if (res.status >= 400 && res.status < 500) throw new Fatal(err);
    throw err;
  }
  connected();
  ctx.opened();
  const decoder = new TextDecoder();
  const parser = new SseParser();
  const reader = res.body.getReader();
  const handle = (items: ReturnType<SseParser['push']>) => {
    for (const it of items) {
      if (it.kind === 'message') ctx.deliver(it.data);
      else if (it.kind === 'replay-exhausted') o.onReplayExhausted?.(it.session, it.earliest);
      // `: ping` and unknown comments are ignored (AEP-0003 §1).
    }
  };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      handle(parser.push(decoder.decode(value, { stream: true })));
    }
    handle(parser.push(decoder.decode()));
    handle(parser.end());
  } catch (err) {
    if (signal.aborted) return;
    throw err;
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/** One WS connection: hello as consumer, one `subscribe`, Event frames (AEP-0003 §3.5, §6.5). */
function runWs(ctx: RunContext, factory: SocketFactory, from: 'all' | ResumePosition[] | undefined, connected: () => void): Promise<void> {
  const { o, signal } = ctx;
  return new Promise<void>((resolve, reject) => {
    if (signal.aborted) return resolve();
    let fatal: Fatal | undefined;
    let failure: ClientError | undefined;
    let lastHeard = Date.now();
    let subscribed = false;
    const sock = factory(
      { url: o.url, ...(o.token ? { token: o.token } : {}), handshakeTimeoutMs: 10_000 },
      {
        open: () => {
          connected();
          sock.send(encodeFrame(helloFrame({ role: 'consumer' })));
          // Pipelined after hello (AEP-0003 §3.5: frames are processed in arrival order).
          sock.send(
            encodeFrame(
              subscribeFrame({
                id: SUB_ID,
                ...(o.filter ? { filter: o.filter } : {}),
                ...(from !== undefined ? { from } : {}),
                ...(o.ceiling ? { capture: o.ceiling } : {}),
              }),
            ),
          );
        },
        message: (text) => {
          lastHeard = Date.now();
          const m = parseSocketMessage(text);
          if (m.kind === 'event') {
            ctx.deliver(text);
            return;
          }
          if (m.kind !== 'frame') return; // unknown frames are ignored (AEP-0003 §2)
          const f = m.frame;
          switch (f.type) {
            case 'subscribed':
              if (f.id === SUB_ID && !subscribed) {
                subscribed = true;
                ctx.opened();
              }
              return;
            case 'ping':
              sock.send(encodeFrame(pongFrame(f.t)));
              return;
            case 'replay-exhausted':
              o.onReplayExhausted?.(f.session, f.earliest);
              return;
            case 'error': {
              const detail = f.detail ? `: ${f.detail}` : '';
              if (f.id === SUB_ID) {
                const msg = `subscribe refused: ${f.code}${detail}`;
                fatal = new Fatal(
                  f.code === 'unauthorized'
                    ? new ClientError('AEP_CLIENT_REFUSED', `relay at ${redactUrl(o.url)} ${msg}`, { wireCode: f.code })
                    : new ClientError('AEP_CLIENT_HTTP', msg, { wireCode: f.code }),
                );
                sock.close(1000);
              } else if (f.id === undefined && f.cause === undefined && !subscribed) {
                fatal = new Fatal(new ClientError('AEP_CLIENT_HELLO', `relay refused hello: ${f.code}${detail}`, { wireCode: f.code }));
                sock.close(1000);
              }
              return;
            }
            default:
              return;
          }
        },
        refused: (status) => {
          fatal = new Fatal(
            isRefusalStatus(status)
              ? refusedError(`relay at ${redactUrl(o.url)} refused the socket`, status)
              : new ClientError('AEP_CLIENT_HTTP', `relay at ${redactUrl(o.url)} refused the socket: HTTP ${status}`, { status }),
          );
          if (status >= 500) {
            failure = fatal.error;
            fatal = undefined;
          }
        },
        error: (message) => {
          if (!failure) failure = new ClientError('AEP_CLIENT_UNREACHABLE', `cannot reach relay at ${redactUrl(o.url)}: ${message}`);
        },
        close: () => {
          clearInterval(liveTimer);
          signal.removeEventListener('abort', onAbort);
          if (signal.aborted) return resolve();
          if (fatal) return reject(fatal);
          if (failure && !subscribed) return reject(failure);
          resolve(); // dropped: the caller reconnects from the last positions
        },
      },
    );
    const onAbort = () => sock.close(1000);
    signal.addEventListener('abort', onAbort, { once: true });
    // Liveness (AEP-0003 §3.5.5): ping every 30 s, give up after 90 s of silence.
    const liveTimer = setInterval(() => {
      if (Date.now() - lastHeard > LIVENESS_TIMEOUT_MS) {
        sock.terminate();
        return;
      }
      if (sock.isOpen) sock.send(encodeFrame(pingFrame()));
    }, PING_INTERVAL_MS);
    (liveTimer as { unref?: () => void }).unref?.();
  });
}
