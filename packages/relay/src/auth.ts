// Authentication and authorization (AEP-0003 §8.1; AEP-0004 §4.3; contract C7). A request
// carries a token as `Authorization: Bearer` or `?access_token=`; it is the owner token
// (`--token`: every scope) or a scoped token (tokens.ts). Compared in constant time; tokens are
// never logged (nor URLs carrying them, §11).
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { captureRank, type CaptureLevel } from '@aep/protocol';
import { allows, needed, type ScopeContext, type ScopeName } from './scopes.js';
import { live, type TokenRecord, type Tokens } from './tokens.js';

/** Who is asking: the owner, a scoped token, or anyone (a relay without a token). */
export class Principal {
  private constructor(
    readonly kind: 'owner' | 'scoped' | 'open',
    readonly token: TokenRecord | null,
  ) {}

  /** The owner token: every scope. */
  static readonly owner = new Principal('owner', null);
  /** A relay without a token (dev posture): read and emit open to all, no commands, no admin. */
  static readonly open = new Principal('open', null);
  static scoped(t: TokenRecord): Principal {
    return new Principal('scoped', t);
  }

  /** True when the request proved a token (commands need it, AEP-0004 §4.1). */
  get authenticated(): boolean {
    return this.kind !== 'open';
  }

  /** The scoped token's id (never the token). */
  get tokenId(): string | undefined {
    return this.token?.id;
  }

  /** False once a scoped token is revoked or expired. */
  valid(now = Date.now()): boolean {
    return this.token === null || live(this.token, now);
  }

  /**
   * `null` when the principal may not read; otherwise the capture ceiling it reads at most at
   * (`undefined` = as received).
   */
  readCeiling(): { ceiling: CaptureLevel | undefined } | null {
    if (this.kind !== 'scoped') return { ceiling: undefined };
    let best = -1;
    let level: CaptureLevel | undefined;
    for (const s of this.token!.parsed)
      if (s.name === 'read' && captureRank(s.level) > best) {
        best = captureRank(s.level);
        level = s.level;
      }
    return level === undefined ? null : { ceiling: level };
  }

  /** The lower of a requested ceiling and the principal's own. */
  cap(requested: CaptureLevel | undefined): CaptureLevel | undefined {
    const mine = this.readCeiling()?.ceiling;
    if (mine === undefined) return requested;
    if (requested === undefined) return mine;
    return captureRank(requested) <= captureRank(mine) ? requested : mine;
  }

  /** `null` when allowed; otherwise the scope that is missing, as a refusal names it. */
  check(name: ScopeName, ctx: ScopeContext = {}): string | null {
    if (this.kind === 'owner') return null;
    if (this.kind === 'open') return name === 'read' || name === 'emit' ? null : needed(name, ctx);
    for (const s of this.token!.parsed) if (s.name === name && allows(s, ctx)) return null;
    return needed(name, ctx);
  }
}

/** Resolves the principal of a request. */
export class Auth {
  private readonly digest: Buffer | null;
  constructor(
    token: string | undefined,
    readonly tokens: Tokens,
  ) {
    this.digest = token === undefined ? null : createHash('sha256').update(token).digest();
  }
  /** True when an owner token is configured (then every endpoint requires a token). */
  get required(): boolean {
    return this.digest !== null;
  }
  /** The owner token, compared in constant time (digests have equal length whatever was presented). */
  private isOwner(presented: string): boolean {
    return this.digest !== null && timingSafeEqual(createHash('sha256').update(presented).digest(), this.digest);
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
  /**
   * The principal of a request: without an owner token configured, `Principal.open`; with one,
   * the owner or a live scoped token, else null (answered 401).
   */
  principal(req: IncomingMessage, url: URL): Principal | null {
    if (!this.required) return Principal.open;
    const p = Auth.presented(req, url);
    if (p === undefined) return null;
    if (this.isOwner(p)) return Principal.owner;
    const t = this.tokens.verify(p, Date.now());
    return t ? Principal.scoped(t) : null;
  }
}

/** A path safe to log: the query string is dropped entirely (it may carry `access_token`). */
export function scrubUrl(rawUrl: string | undefined): string {
  const s = rawUrl ?? '';
  const q = s.indexOf('?');
  return q < 0 ? s : `${s.slice(0, q)}?…`;
}
