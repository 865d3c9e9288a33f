// Action links: signed, single-use, bound to one request and one answer, short-lived
// (docs/decisions.md "Notifiers (issue 17)", docs/security.md §9). A link is
// `{base}/a/{payload}.{mac}`: payload = base64url(JSON claims), mac = HMAC-SHA256 over it with a
// key that exists only in this notifier process (random at start, never written anywhere), so
// links die with the notifier and cannot be replayed after a restart. Checking order: mac
// (forged) -> expiry (expired) -> single use (used) -> the request still open (resolved).
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** What a link is bound to. */
export interface LinkClaims {
  v: 1;
  /** The `attention.requested` id. */
  r: string;
  /** Its session. */
  s: string;
  /** The track (rule + channel) whose copy of the request the answer refers to. */
  t: string;
  /** The answer: an option id or form values. */
  a: { option: string } | { values: Record<string, string> };
  /** Expiry (ms since the epoch). */
  x: number;
  /** Nonce (single use). */
  n: string;
}

/** Why a link is refused. */
export type LinkRefusal = 'forged' | 'expired' | 'used';

/** Signs and checks action links. */
export class LinkSigner {
  private readonly key: Buffer;
  /** Nonces already used, with their expiry (pruned once expired: an expired link is refused anyway). */
  private readonly used = new Map<string, number>();

  constructor(
    private readonly now: () => number = Date.now,
    key: Buffer = randomBytes(32),
  ) {
    this.key = key;
  }

  private mac(payload: string): string {
    return createHmac('sha256', this.key).update(`aep-action-v1.${payload}`).digest('base64url');
  }

  /** A token for these claims (nonce and expiry added). */
  sign(c: Omit<LinkClaims, 'v' | 'n' | 'x'>, ttlMs: number): { token: string; claims: LinkClaims } {
    const claims: LinkClaims = { v: 1, ...c, x: this.now() + ttlMs, n: randomBytes(12).toString('base64url') };
    const payload = Buffer.from(JSON.stringify(claims), 'utf8').toString('base64url');
    return { token: `${payload}.${this.mac(payload)}`, claims };
  }

  /** Verify a token without using it. */
  verify(token: string): { ok: true; claims: LinkClaims } | { ok: false; reason: LinkRefusal } {
    if (typeof token !== 'string' || token.length > 4096) return { ok: false, reason: 'forged' };
    const dot = token.indexOf('.');
    if (dot <= 0 || dot !== token.lastIndexOf('.')) return { ok: false, reason: 'forged' };
    const payload = token.slice(0, dot);
    // Compare the encoded text, not the decoded bytes: the last base64url character of a 32-byte
    // MAC carries two unused bits, so decoding would accept four spellings of one MAC.
    const mac = Buffer.from(token.slice(dot + 1), 'utf8');
    const want = Buffer.from(this.mac(payload), 'utf8');
    if (mac.length !== want.length || !timingSafeEqual(mac, want)) return { ok: false, reason: 'forged' };
    let claims: LinkClaims;
    try {
      claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as LinkClaims;
    } catch {
      return { ok: false, reason: 'forged' };
    }
    if (claims?.v !== 1 || typeof claims.x !== 'number' || typeof claims.n !== 'string' || typeof claims.r !== 'string' || typeof claims.s !== 'string')
      return { ok: false, reason: 'forged' };
    if (this.now() >= claims.x) return { ok: false, reason: 'expired' };
    if (this.used.has(claims.n)) return { ok: false, reason: 'used' };
    return { ok: true, claims };
  }

  /** Mark a verified link used (before its answer is sent: single use even if sending fails). */
  use(claims: LinkClaims): void {
    const now = this.now();
    for (const [n, x] of this.used) if (x <= now) this.used.delete(n);
    this.used.set(claims.n, claims.x);
  }
}
