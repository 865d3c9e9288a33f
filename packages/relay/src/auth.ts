// Bearer-token authentication (AEP-0003 §8.1): `Authorization: Bearer` or `?access_token=`,
// compared in constant time. Tokens are never logged (nor URLs carrying them, §11).
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** Checks presented tokens against the configured one. */
export class Auth {
  private readonly digest: Buffer | null;
  constructor(token: string | undefined) {
    this.digest = token === undefined ? null : createHash('sha256').update(token).digest();
  }
  /** True when a token is configured (then every endpoint requires it). */
  get required(): boolean { return this.digest !== null; }
  /** Compare in constant time (digests have equal length whatever was presented). */
  check(presented: string | undefined): boolean {
    if (this.digest === null || presented === undefined) return false;
    return timingSafeEqual(createHash('sha256').update(presented).digest(), this.digest);
  }
  /** Token carried by a request: header first, then the `access_token` query parameter. */
  static presented(req: IncomingMessage, url: URL): string | undefined {
    const h = req.headers.authorization;
    if (typeof h === 'string') {
      const m = /^Bearer[ \t]+(\S+)\s*$/i.exec(h);
      if (m) return m[1];
    }
    return url.searchParams.get('access_token') ?? undefined;
  }
  /** Whether the request is authenticated (false when no token is configured). */
  authenticated(req: IncomingMessage, url: URL): boolean {
    return this.check(Auth.presented(req, url));
  }
}

/** A path safe to log: the query string is dropped entirely (it may carry `access_token`). */
export function scrubUrl(rawUrl: string | undefined): string {
  const s = rawUrl ?? '';
  const q = s.indexOf('?');
  return q < 0 ? s : `${s.slice(0, q)}?…`;
}
