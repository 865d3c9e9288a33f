// The WebSocket seam of the browser-safe core (issue 13 item 3): `subscribe`, `CommandSender`
// and (in `@aep/client/node`) `EmitterConnection` talk to a `ClientSocket` made by a
// `SocketFactory`. The core builds one from any standard WebSocket constructor (an option, or
// `globalThis.WebSocket` in browsers and Node >= 22); `@aep/client/node` injects one built on
// `ws` that can send `Authorization` and see the HTTP status of a refused upgrade.
import { eventsUrl, socketUrl } from '@aep/protocol';
import { ClientError } from './errors.js';

/** One client WebSocket, whatever implements it. */
export interface ClientSocket {
  /** Sends one text frame (dropped silently when the socket is not open). */
  send(text: string): void;
  /** Orderly close (close handshake). */
  close(code?: number): void;
  /** Drop the connection now (no close handshake where the implementation allows it). */
  terminate(): void;
  /** Bytes queued but not yet written (flow control, AEP-0003 §8.4). */
  readonly bufferedAmount: number;
  /** True between `open` and `close`. */
  readonly isOpen: boolean;
}

/** What a socket reports; `close` comes exactly once, last. */
export interface SocketEvents {
  open(): void;
  /** A text frame (binary frames are reserved in 0.1 and never reported, AEP-0003 §3.5). */
  message(text: string): void;
  /**
   * The relay answered the upgrade with an HTTP status instead of switching protocols
   * (401/403: the token; reported before `close`).
   */
  refused(status: number): void;
  /** A transport error (cannot connect, reset); a `close` follows. Never carries the token. */
  error(message: string): void;
  close(code: number): void;
}

/** Where to connect. `url` is the relay's base URL (`http(s)://host:port`). */
export interface SocketRequest {
  url: string;
  token?: string;
  /** Give up an unopened socket after this long (reported as `error` then `close`). */
  handshakeTimeoutMs?: number;
}

/** Makes sockets. `@aep/client/node` provides one built on `ws`. */
export type SocketFactory = (request: SocketRequest, events: SocketEvents) => ClientSocket;

/** The part of the standard (WHATWG) WebSocket the core uses. */
export interface WebSocketLike {
  readonly readyState: number;
  readonly bufferedAmount: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
  onclose: ((ev: { code: number }) => void) | null;
}

/** A standard WebSocket constructor (`globalThis.WebSocket` in browsers and Node >= 22). */
export type WebSocketConstructor = new (url: string) => WebSocketLike;

/** Socket options shared by `subscribe`, `CommandSender` and `EmitterConnection`. */
export interface SocketOptions {
  /**
   * A standard WebSocket constructor; default `globalThis.WebSocket`. Such sockets cannot set
   * headers, so the token travels as `?access_token=` on the upgrade URL (AEP-0003 §8).
   */
  WebSocket?: WebSocketConstructor;
  /** A socket factory; wins over `WebSocket` (`@aep/client/node` defaults it to `ws`). */
  socketFactory?: SocketFactory;
}

const OPEN = 1;

/**
 * After a standard socket failed before opening, ask `GET /events` with the same token: a
 * standard WebSocket hides the upgrade's HTTP status, and a wrong token must be reported as a
 * refusal, never as "unreachable" (issue 14). Bounded; `undefined` when it cannot tell.
 */
async function probeRefusal(req: SocketRequest): Promise<number | undefined> {
  if (typeof fetch !== 'function') return undefined;
  const ac = new AbortController();
  const t = setTimeout(() => ac.abort(), 3_000);
  try {
    const headers: Record<string, string> = {};
    if (req.token) headers['Authorization'] = `Bearer ${req.token}`;
    const res = await fetch(eventsUrl(req.url), { headers, signal: ac.signal });
    await res.body?.cancel().catch(() => undefined);
    return res.status === 401 || res.status === 403 ? res.status : undefined;
  } catch {
    return undefined;
  } finally {
    clearTimeout(t);
  }
}

/** A {@link SocketFactory} over a standard WebSocket constructor (token as `access_token`). */
export function standardSocketFactory(Ctor: WebSocketConstructor): SocketFactory {
  return (req, events) => {
    let opened = false;
    let finished = false;
    const ws = new Ctor(socketUrl(req.url, req.token ? { accessToken: req.token } : {}));
    const timer =
      req.handshakeTimeoutMs !== undefined
        ? setTimeout(() => {
            if (!opened) {
              events.error(`no WebSocket handshake within ${req.handshakeTimeoutMs} ms`);
              finish(1006);
              try {
                ws.close();
              } catch {
                /* already closing */
              }
            }
          }, req.handshakeTimeoutMs)
        : undefined;
    const finish = (code: number) => {
      if (finished) return;
      finished = true;
      if (timer !== undefined) clearTimeout(timer);
      events.close(code);
    };
    ws.onopen = () => {
      if (finished) return;
      opened = true;
      if (timer !== undefined) clearTimeout(timer);
      events.open();
    };
    ws.onmessage = (ev) => {
      if (!finished && typeof ev.data === 'string') events.message(ev.data);
    };
    ws.onerror = () => {
      if (!finished && opened) events.error('WebSocket error');
    };
    ws.onclose = (ev) => {
      if (finished) return;
      if (opened) {
        finish(ev.code);
        return;
      }
      void probeRefusal(req).then((status) => {
        if (finished) return;
        if (status !== undefined) events.refused(status);
        else events.error('the WebSocket did not open');
        finish(ev.code);
      });
    };
    return {
      send: (text) => {
        if (opened && !finished && ws.readyState === OPEN) ws.send(text);
      },
      close: (code = 1000) => {
        try {
          ws.close(code);
        } catch {
          /* already closed */
        }
      },
      terminate: () => {
        try {
          ws.close();
        } catch {
          /* already closed */
        }
        finish(1006);
      },
      get bufferedAmount() {
        return ws.bufferedAmount;
      },
      get isOpen() {
        return opened && !finished && ws.readyState === OPEN;
      },
    };
  };
}

/** The factory an option set selects: `socketFactory`, else `WebSocket`, else `globalThis.WebSocket`. */
export function resolveSocketFactory(o: SocketOptions): SocketFactory {
  if (o.socketFactory) return o.socketFactory;
  const Ctor = o.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
  if (!Ctor) {
    throw new ClientError('AEP_CLIENT_OPTION', 'no WebSocket implementation: pass the WebSocket option, or import from @aep/client/node (uses ws)');
  }
  return standardSocketFactory(Ctor);
}
