// Scoped tokens (contract C7): `aep_<id>_<secret>`, created by the owner (or an `admin` token),
// stored hashed (sha256 of the 256-bit random secret: a slow KDF adds nothing to a secret that
// cannot be guessed) in the relay's store, or in memory for `--memory`. The token itself is shown
// once, at creation, and never stored or logged.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { parseScope, type Scope } from './scopes.js';

/** A token as stored (the secret's digest, never the secret). */
export interface StoredToken {
  id: string;
  name: string;
  hash: string;
  scopes: string[];
  created: string;
  expires?: string | undefined;
  revoked?: string | undefined;
}

/** Where tokens are persisted (the SQLite store), if anywhere. */
export interface TokenSink {
  token(t: StoredToken): void;
}

/** One live token. */
export interface TokenRecord extends StoredToken {
  readonly parsed: readonly Scope[];
}

/** What `GET /tokens` shows of a token (no digest). */
export interface TokenView {
  id: string;
  name: string;
  scopes: string[];
  created: string;
  expires?: string;
  revoked?: string;
}

const TOKEN = /^aep_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;
const MAX_TOKENS = 10_000;

function digest(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}

/** A refused token request (HTTP 400, the message names the rule). */
export class TokenRequestError extends Error {}

/** The relay's scoped tokens. */
export class Tokens {
  private readonly byId = new Map<string, TokenRecord>();

  constructor(
    private readonly sink: TokenSink | null,
    stored: readonly StoredToken[] = [],
  ) {
    for (const t of stored) {
      try {
        this.byId.set(t.id, { ...t, parsed: t.scopes.map(parseScope) });
      } catch {
        /* a row this version cannot read grants nothing */
      }
    }
  }

  /** `POST /tokens` body → a new token (the string is returned once). Throws TokenRequestError. */
  create(body: unknown, now: Date): { view: TokenView; token: string } {
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw new TokenRequestError('the body must be a JSON object {name?, scopes, expires?}');
    const b = body as Record<string, unknown>;
    for (const k of Object.keys(b))
      if (!['name', 'scopes', 'expires'].includes(k))
        throw new TokenRequestError(`unknown member ${JSON.stringify(k.slice(0, 40))} (allowed: name, scopes, expires)`);
    const name = b['name'] ?? '';
    if (typeof name !== 'string' || name.length > 200 || [...name].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f))
      throw new TokenRequestError('name must be a string of at most 200 characters without control characters');
    const scopes = b['scopes'];
    if (!Array.isArray(scopes) || scopes.length === 0 || scopes.length > 64)
      throw new TokenRequestError(
        'scopes must be a non-empty array of at most 64 scope strings (read[:LEVEL], emit[:k=v,...], answer[:k=v,...], permit[:k=v,...], steer[:k=v,...], admin)',
      );
    let parsed: Scope[];
    try {
      parsed = scopes.map(parseScope);
    } catch (err) {
      throw new TokenRequestError(`bad scope: ${(err as Error).message}`);
    }
    let expires: string | undefined;
    if (b['expires'] !== undefined) {
      const e = b['expires'];
      const t = typeof e === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.test(e) ? Date.parse(e) : NaN;
      if (Number.isNaN(t)) throw new TokenRequestError('expires must be an RFC 3339 date-time with a zone (e.g. 2026-12-31T23:59:59Z)');
      if (t <= now.getTime()) throw new TokenRequestError('expires must be in the future');
      expires = new Date(t).toISOString();
    }
    if (this.byId.size >= MAX_TOKENS) throw new TokenRequestError(`at most ${MAX_TOKENS} tokens; revoke some first`);
    let id: string;
    do {
      id = randomBytes(8).toString('hex');
    } while (this.byId.has(id));
    const secret = randomBytes(32).toString('base64url');
    const rec: TokenRecord = {
      id,
      name,
      hash: digest(secret).toString('hex'),
      scopes: parsed.map((s) => s.text),
      created: now.toISOString(),
      ...(expires ? { expires } : {}),
      parsed,
    };
    this.byId.set(id, rec);
    this.persist(rec);
    return { view: view(rec), token: `aep_${id}_${secret}` };
  }

  /** Every token, newest last. */
  list(): TokenView[] {
    return [...this.byId.values()].map(view);
  }

  /** Revoke (idempotent); undefined when no such token. */
  revoke(id: string, now: Date): TokenRecord | undefined {
    const rec = this.byId.get(id);
    if (!rec) return undefined;
    if (rec.revoked === undefined) {
      rec.revoked = now.toISOString();
      this.persist(rec);
    }
    return rec;
  }

  /**
   * A token created or revoked at another relay of the cluster (scale-out seam, issue 16). An
   * existing record is updated in place, so connections holding it see a revocation at once;
   * a revocation is never undone.
   */
  apply(t: StoredToken): void {
    const rec = this.byId.get(t.id);
    if (!rec) {
      try {
        this.byId.set(t.id, { ...t, parsed: t.scopes.map(parseScope) });
      } catch {
        /* a token this version cannot read grants nothing */
      }
      return;
    }
    if (rec.hash !== t.hash) return; // an id is never reused with another secret
    if (t.revoked !== undefined && rec.revoked === undefined) rec.revoked = t.revoked;
  }

  /** The live (not revoked, not expired) token a presented string proves, compared in constant time. */
  verify(presented: string, now: number): TokenRecord | null {
    const m = TOKEN.exec(presented);
    if (!m) return null;
    const rec = this.byId.get(m[1]!);
    if (!rec) return null;
    if (!timingSafeEqual(digest(m[2]!), Buffer.from(rec.hash, 'hex'))) return null;
    return live(rec, now) ? rec : null;
  }

  private persist(rec: TokenRecord): void {
    const { parsed: _p, ...stored } = rec;
    this.sink?.token(stored);
  }
}

/** True while a token is neither revoked nor expired. */
export function live(rec: StoredToken, now: number): boolean {
  return rec.revoked === undefined && (rec.expires === undefined || Date.parse(rec.expires) > now);
}

function view(rec: TokenRecord): TokenView {
  return {
    id: rec.id,
    name: rec.name,
    scopes: [...rec.scopes],
    created: rec.created,
    ...(rec.expires ? { expires: rec.expires } : {}),
    ...(rec.revoked ? { revoked: rec.revoked } : {}),
  };
}
