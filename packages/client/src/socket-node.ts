// The `ws`-based socket of `@aep/client/node`: the token travels as `Authorization: Bearer`
// (never in a URL, so it cannot reach a log, AEP-0003 §11), per-message deflate is off, and a
// refused upgrade reports its HTTP status (a 401 is "refused", not "unreachable", issue 14).
import WebSocket from 'ws';
import { socketUrl } from '@aep/protocol';
import type { ClientSocket, SocketEvents, SocketFactory, SocketRequest } from './socket.js';

/** A {@link SocketFactory} built on the `ws` package. */
export const nodeSocketFactory: SocketFactory = (req: SocketRequest, events: SocketEvents): ClientSocket => {
  const headers: Record<string, string> = {};
  if (req.token) headers['Authorization'] = `Bearer ${req.token}`;
  let finished = false;
  const finish = (code: number) => {
    if (finished) return;
    finished = true;
    events.close(code);
  };
  let ws: WebSocket;
  try {
    ws = new WebSocket(socketUrl(req.url), {
      headers,
      perMessageDeflate: false,
      ...(req.handshakeTimeoutMs !== undefined ? { handshakeTimeout: req.handshakeTimeoutMs } : {}),
    });
  } catch (err) {
    // An invalid URL: report it like a failed connection, on the next tick (callers attach first).
    queueMicrotask(() => {
      events.error((err as Error).message);
      finish(1006);
    });
    return { send: () => {}, close: () => {}, terminate: () => {}, bufferedAmount: 0, isOpen: false };
  }
  ws.on('open', () => {
    if (!finished) events.open();
  });
  ws.on('message', (buf: Buffer, isBinary: boolean) => {
    if (!finished && !isBinary) events.message(buf.toString('utf8'));
  });
  ws.on('unexpected-response', (_req, res) => {
    if (!finished) events.refused(res.statusCode ?? 0);
    res.resume();
    ws.terminate();
  });
  ws.on('error', (err) => {
    if (!finished) events.error(err.message);
  });
  ws.on('close', (code: number) => finish(code));
  return {
    send: (text) => {
      if (!finished && ws.readyState === WebSocket.OPEN) ws.send(text);
    },
    close: (code = 1000) => {
      try {
        ws.close(code);
      } catch {
        ws.terminate();
      }
    },
    terminate: () => {
      ws.terminate();
    },
    get bufferedAmount() {
      return ws.bufferedAmount;
    },
    get isOpen() {
      return !finished && ws.readyState === WebSocket.OPEN;
    },
  };
};
