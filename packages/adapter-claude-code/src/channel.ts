// The command-hook channel between the shim (hook.ts) and the daemon (transport-socket.ts): a
// Unix domain socket in a directory only this user can enter, plus mutual proof of the
// per-install secret, so a listener that cannot prove it holds the secret never receives hook
// content and cannot answer, and the secret itself never crosses the socket (docs/security.md §6;
// docs/decisions.md "Claude Code adapter (issues 11, 13, 14)").
//
//   shim   -> daemon  {"aep-cc":1,"nonce":NS}\n
//   daemon -> shim    {"nonce":ND,"proof":HMAC(secret, "aep-cc daemon\n" NS "\n" ND)}\n
//   shim   -> daemon  {"proof":HMAC(secret, "aep-cc shim\n" NS "\n" ND),"length":N}\n  + N bytes of hook JSON
//   daemon -> shim    {"mac":HMAC(secret, "aep-cc answer\n" NS "\n" ND "\n" ANSWER),"length":M}\n + M bytes; end
//
// HMAC-SHA256 in hex; nonces are 16 random bytes in base64url. `node:crypto` only (the shim
// must start fast).
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** Protocol version (the `aep-cc` member of the first frame). */
export const CHANNEL_VERSION = 1;
/** Longest frame line accepted (the JSON header, not the body). */
export const MAX_FRAME_BYTES = 512;

const NONCE_RE = /^[A-Za-z0-9_-]{22}$/;
const HEX64_RE = /^[0-9a-f]{64}$/;

/** A fresh nonce. */
export function nonce(): string {
  return randomBytes(16).toString('base64url');
}

export function isNonce(v: unknown): v is string {
  return typeof v === 'string' && NONCE_RE.test(v);
}

function hmac(secret: string, parts: readonly string[]): string {
  return createHmac('sha256', secret).update(parts.join('\n')).digest('hex');
}

/** The daemon's proof that it holds the secret. */
export function daemonProof(secret: string, ns: string, nd: string): string {
  return hmac(secret, ['aep-cc daemon', ns, nd]);
}

/** The shim's proof that it holds the secret. */
export function shimProof(secret: string, ns: string, nd: string): string {
  return hmac(secret, ['aep-cc shim', ns, nd]);
}

/** The MAC binding the daemon's answer to this exchange. */
export function answerMac(secret: string, ns: string, nd: string, answer: string): string {
  return hmac(secret, ['aep-cc answer', ns, nd, answer]);
}

/** Constant-time comparison of two hex MACs. */
export function sameMac(a: unknown, b: string): boolean {
  if (typeof a !== 'string' || !HEX64_RE.test(a) || !HEX64_RE.test(b)) return false;
  return timingSafeEqual(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'));
}

/** Constant-time comparison of two secrets (HTTP `Authorization: Bearer`). */
export function sameSecret(given: unknown, secret: string): boolean {
  if (typeof given !== 'string') return false;
  const a = createHmac('sha256', 'aep-cc compare').update(given).digest();
  const b = createHmac('sha256', 'aep-cc compare').update(secret).digest();
  return timingSafeEqual(a, b);
}

/**
 * Reads newline-terminated frames and then raw bytes from a stream of chunks. `line()` and
 * `bytes(n)` resolve in order; a frame over {@link MAX_FRAME_BYTES} or a stream that ends first
 * rejects.
 */
export class FrameReader {
  private buf: Buffer = Buffer.alloc(0);
  private waiting: { want: 'line' | number; resolve: (b: Buffer) => void; reject: (e: Error) => void } | undefined;
  private ended: Error | undefined;

  push(chunk: Buffer): void {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    this.pump();
  }

  end(err?: Error): void {
    this.ended ??= err ?? new Error('channel closed');
    this.pump();
  }

  line(): Promise<Record<string, unknown>> {
    return this.next('line').then((b) => {
      const v: unknown = JSON.parse(b.toString('utf8'));
      if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error('frame is not a JSON object');
      return v as Record<string, unknown>;
    });
  }

  bytes(n: number): Promise<Buffer> {
    return this.next(n);
  }

  private next(want: 'line' | number): Promise<Buffer> {
    return new Promise<Buffer>((resolve, reject) => {
      this.waiting = { want, resolve, reject };
      this.pump();
    });
  }

  private pump(): void {
    const w = this.waiting;
    if (!w) return;
    if (w.want === 'line') {
      const i = this.buf.indexOf(10);
      if (i >= 0 && i <= MAX_FRAME_BYTES) {
        const line = this.buf.subarray(0, i);
        this.buf = this.buf.subarray(i + 1);
        this.waiting = undefined;
        w.resolve(line);
        return;
      }
      if ((i < 0 && this.buf.length > MAX_FRAME_BYTES) || i > MAX_FRAME_BYTES) {
        this.waiting = undefined;
        w.reject(new Error('frame too long'));
        return;
      }
    } else if (this.buf.length >= w.want) {
      const out = this.buf.subarray(0, w.want);
      this.buf = this.buf.subarray(w.want);
      this.waiting = undefined;
      w.resolve(out);
      return;
    }
    if (this.ended) {
      this.waiting = undefined;
      w.reject(this.ended);
    }
  }
}
