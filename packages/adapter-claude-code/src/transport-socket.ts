// The daemon's Unix domain socket for the command-hook shim (channel.ts describes the exchange):
// in a 0700 directory of this user, the socket itself 0600, mutual proof of the per-install
// secret before any hook content is read, and every answer bound to its exchange by a MAC.
import { createConnection, createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { chmodSync, lstatSync, unlinkSync } from 'node:fs';
import { dirname } from 'node:path';
import { CHANNEL_VERSION, FrameReader, answerMac, daemonProof, isNonce, nonce, sameMac, shimProof } from './channel.js';
import { ADAPTER_ERRORS, AdapterError } from './errors.js';
import type { HookExchange } from './exchange.js';
import { ensurePrivateDir } from './local.js';
import type { RefusalLog } from './refusal-log.js';

/** Options of {@link listenSocket}. */
export interface SocketTransportOptions {
  path: string;
  secret: string;
  maxHookBytes: number;
  refusals: RefusalLog;
  /** Called once per authenticated hook. */
  handle: (x: HookExchange) => void;
}

/** A listening socket transport. */
export interface SocketTransport {
  path: string;
  close(): Promise<void>;
}

/** How long a connection may take to authenticate and send its hook (slow or silent peers are cut). */
const HANDSHAKE_MS = 10_000;

/** True when something answers on `path` (a live daemon), false for a stale socket file. */
function alive(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const c = createConnection(path);
    const done = (v: boolean) => {
      c.destroy();
      resolve(v);
    };
    c.once('connect', () => done(true));
    c.once('error', () => done(false));
    setTimeout(() => done(false), 1_000).unref();
  });
}

/**
 * Binds the socket. Refuses (`AEP_CC_SOCKET_UNSAFE`) a directory that is not private to this
 * user, and (`AEP_CC_ADDRESS_IN_USE`) a path where another daemon answers; a stale socket file
 * of ours is replaced.
 */
export async function listenSocket(o: SocketTransportOptions): Promise<SocketTransport> {
  ensurePrivateDir(dirname(o.path), ADAPTER_ERRORS.SOCKET_UNSAFE);
  let existing;
  try {
    existing = lstatSync(o.path);
  } catch {
    existing = undefined;
  }
  if (existing) {
    if (!existing.isSocket()) throw new AdapterError(ADAPTER_ERRORS.SOCKET_UNSAFE, `${o.path} exists and is not a socket; remove it or pick --socket`);
    if (await alive(o.path)) throw new AdapterError(ADAPTER_ERRORS.ADDRESS_IN_USE, `another daemon answers on ${o.path} (stop it, or pick --socket)`);
    unlinkSync(o.path);
  }
  const server: Server = createServer((sock) => onConnection(o, sock));
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) => reject(new AdapterError(ADAPTER_ERRORS.LISTEN_FAILED, `cannot listen on ${o.path}: ${err.message}`)));
    server.listen(o.path, () => resolve());
  });
  chmodSync(o.path, 0o600);
  const open = new Set<Socket>();
  server.on('connection', (s) => {
    open.add(s);
    s.once('close', () => open.delete(s));
  });
  return {
    path: o.path,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of open) s.destroy();
        try {
          unlinkSync(o.path);
        } catch {
          /* already gone */
        }
      }),
  };
}

function onConnection(o: SocketTransportOptions, sock: Socket): void {
  const reader = new FrameReader();
  sock.on('data', (c: Buffer) => reader.push(c));
  sock.on('error', () => reader.end());
  sock.on('close', () => reader.end());
  const cut = setTimeout(() => sock.destroy(), HANDSHAKE_MS);
  void exchange(o, sock, reader, cut).catch(() => {
    clearTimeout(cut);
    sock.destroy();
  });
}

async function exchange(o: SocketTransportOptions, sock: Socket, reader: FrameReader, cut: NodeJS.Timeout): Promise<void> {
  const hello = await reader.line();
  const ns = hello['nonce'];
  if (hello['aep-cc'] !== CHANNEL_VERSION || !isNonce(ns)) throw new Error('bad hello');
  const nd = nonce();
  sock.write(`${JSON.stringify({ nonce: nd, proof: daemonProof(o.secret, ns, nd) })}\n`);
  const head = await reader.line();
  if (!sameMac(head['proof'], shimProof(o.secret, ns, nd))) {
    o.refusals.note(ADAPTER_ERRORS.UNAUTHORIZED, 'a socket peer could not prove the hook secret: refused', 'socket');
    throw new Error('unauthorized');
  }
  const length = head['length'];
  if (typeof length !== 'number' || !Number.isSafeInteger(length) || length < 0) throw new Error('bad length');
  let answered = false;
  const send = (output: Record<string, unknown>): void => {
    if (answered) return;
    answered = true;
    const text = JSON.stringify(output);
    if (sock.destroyed) return;
    sock.end(`${JSON.stringify({ mac: answerMac(o.secret, ns, nd, text), length: Buffer.byteLength(text) })}\n${text}`);
  };
  if (length > o.maxHookBytes) {
    clearTimeout(cut);
    o.refusals.note(ADAPTER_ERRORS.HOOK_TOO_LARGE, `hook body over ${o.maxHookBytes} bytes (--max-hook-bytes): no decision`, 'socket');
    send({});
    return;
  }
  const body = await reader.bytes(length);
  clearTimeout(cut);
  const abandon: (() => void)[] = [];
  sock.once('close', () => {
    if (!answered) {
      answered = true;
      for (const cb of abandon) cb();
    }
  });
  o.handle({
    body: body.toString('utf8'),
    reply: send,
    refuse: () => send({}),
    onAbandon: (cb) => {
      abandon.push(cb);
    },
  });
}
