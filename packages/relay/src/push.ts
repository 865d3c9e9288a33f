// Web Push subscriptions on the relay (contract C10, docs/architecture.md "Push subscriptions").
// Self-contained: the relay's router hands every `/push/...` request to `PushRoutes.handle`.
//
//   GET    /push/config              -> 200 {vapidPublicKey}                 (any authenticated reader)
//   POST   /push/subscriptions       -> 201 {id}   body: PushSubscription JSON + optional `filter`
//   GET    /push/subscriptions       -> 200 {subscriptions:[…]}              (owner: the notifier)
//   DELETE /push/subscriptions/{id}  -> 200 {id, deleted:true}               (owner, or the token that created it)
//
// The relay never sends pushes and never holds the VAPID private key: the notifier (`aep notify
// push`, an ordinary AEP consumer) reads the subscriptions, encrypts (RFC 8291) and sends, and
// deletes the ones the push service answers 404/410 for. Subscriptions are kept per token (the
// key of the token that registered them) in a small SQLite file beside the event store
// (`<store>.push.sqlite`), or in memory for a memory-only relay. Why a file of its own: the event
// store is written by a worker thread that holds an exclusive lock for the life of the relay, and
// subscriptions are a handful of rare writes that should not enter that hot path
// (docs/decisions.md "Notifiers (issue 17)").
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { compileFilter } from '@aep/protocol';

/** Options of the push routes (`RelayOptions.push`). */
export interface PushOptions {
  /** The VAPID public key (base64url, uncompressed P-256 point) handed to browsers. */
  vapidPublicKey: string;
  /** Most subscriptions one token may hold (default 32). */
  maxPerToken?: number;
  /**
   * Accept `http:` endpoints on loopback hosts (a local push server in tests). Default false:
   * every endpoint must be `https:` (the notifier POSTs to it; no plain-text or internal targets).
   */
  allowHttpLoopback?: boolean;
}

/**
 * Who is asking, decided by the relay's auth (today: the owner token only). `key` identifies the
 * token (never the token itself); `owner` may list and delete every subscription.
 * Hook for scoped tokens (C7): the relay will map a scoped token to `{key: its id, owner: has
 * admin}` and may refuse `subscribe` to a token without a `read` scope.
 */
export interface PushPrincipal {
  key: string;
  owner: boolean;
}

/** A stored subscription as the notifier reads it. */
export interface StoredPushSubscription {
  id: string;
  endpoint: string;
  expirationTime: number | null;
  keys: { p256dh: string; auth: string };
  filter?: Record<string, unknown>;
  created: string;
  /** Key of the token that registered it (never the token). */
  token: string;
}

/** Where subscriptions live: SQLite beside the store, or memory. */
interface PushStore {
  list(): StoredPushSubscription[];
  byEndpoint(endpoint: string): StoredPushSubscription | undefined;
  get(id: string): StoredPushSubscription | undefined;
  countFor(token: string): number;
  put(s: StoredPushSubscription): void;
  remove(id: string): boolean;
  close(): void;
}

class MemoryPushStore implements PushStore {
  private readonly rows = new Map<string, StoredPushSubscription>();
  list(): StoredPushSubscription[] {
    return [...this.rows.values()];
  }
  byEndpoint(endpoint: string): StoredPushSubscription | undefined {
    return this.list().find((s) => s.endpoint === endpoint);
  }
  get(id: string): StoredPushSubscription | undefined {
    return this.rows.get(id);
  }
  countFor(token: string): number {
    return this.list().filter((s) => s.token === token).length;
  }
  put(s: StoredPushSubscription): void {
    this.rows.set(s.id, s);
  }
  remove(id: string): boolean {
    return this.rows.delete(id);
  }
  close(): void {}
}

interface Db {
  exec(s: string): unknown;
  pragma(s: string): unknown;
  prepare(s: string): { run(...a: unknown[]): { changes: number }; all(...a: unknown[]): unknown[]; get(...a: unknown[]): unknown };
  close(): void;
}

const SCHEMA = `CREATE TABLE IF NOT EXISTS push_subscriptions (
  id TEXT PRIMARY KEY, token TEXT NOT NULL, endpoint TEXT NOT NULL UNIQUE, json TEXT NOT NULL, created TEXT NOT NULL);`;

class SqlitePushStore implements PushStore {
  constructor(private readonly db: Db) {}
  static async open(path: string): Promise<SqlitePushStore> {
    const mod = await import('better-sqlite3');
    const Database = (mod as unknown as { default: new (p: string, o?: { timeout?: number }) => Db }).default;
    const db = new Database(path, { timeout: 1000 });
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec(SCHEMA);
    return new SqlitePushStore(db);
  }
  private row(r: unknown): StoredPushSubscription | undefined {
    if (!r) return undefined;
    try {
      return JSON.parse((r as { json: string }).json) as StoredPushSubscription;
    } catch {
      return undefined;
    }
  }
  list(): StoredPushSubscription[] {
    return this.db
      .prepare('SELECT json FROM push_subscriptions ORDER BY created, id')
      .all()
      .map((r) => this.row(r))
      .filter((s): s is StoredPushSubscription => s !== undefined);
  }
  byEndpoint(endpoint: string): StoredPushSubscription | undefined {
    return this.row(this.db.prepare('SELECT json FROM push_subscriptions WHERE endpoint = ?').get(endpoint));
  }
  get(id: string): StoredPushSubscription | undefined {
    return this.row(this.db.prepare('SELECT json FROM push_subscriptions WHERE id = ?').get(id));
  }
  countFor(token: string): number {
    return (this.db.prepare('SELECT COUNT(*) AS n FROM push_subscriptions WHERE token = ?').get(token) as { n: number }).n;
  }
  put(s: StoredPushSubscription): void {
    this.db
      .prepare(
        'INSERT INTO push_subscriptions (id, token, endpoint, json, created) VALUES (?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET token = excluded.token, endpoint = excluded.endpoint, json = excluded.json',
      )
      .run(s.id, s.token, s.endpoint, JSON.stringify(s), s.created);
  }
  remove(id: string): boolean {
    return this.db.prepare('DELETE FROM push_subscriptions WHERE id = ?').run(id).changes > 0;
  }
  close(): void {
    this.db.close();
  }
}

/** Where the subscriptions of a relay whose event store is `storePath` are kept. */
export function pushStorePath(storePath: string): string {
  return `${storePath}.push.sqlite`;
}

/** A token's key: the first 16 bytes of its SHA-256, hex (identifies it without revealing it). */
export function tokenKey(token: string): string {
  return createHash('sha256').update(token).digest('hex').slice(0, 32);
}

const MAX_BODY = 16 * 1024;
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function b64urlBytes(s: unknown): number {
  if (typeof s !== 'string' || !/^[A-Za-z0-9_-]+={0,2}$/.test(s)) return -1;
  return Buffer.from(s.replace(/=+$/, ''), 'base64url').length;
}

/** The C9 headers and no caching: a subscription list is a credential to the person's devices. */
function send(res: ServerResponse, status: number, body: unknown, extra: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(text)),
    'Cache-Control': 'no-store',
    'Content-Security-Policy': "frame-ancestors 'none'; base-uri 'none'; object-src 'none'",
    'X-Frame-Options': 'DENY',
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    ...extra,
  });
  res.end(text);
}

function fail(res: ServerResponse, status: number, error: string, detail: string, extra: Record<string, string> = {}): void {
  send(res, status, { error, detail }, extra);
}

/** Validate a browser PushSubscription (+ filter); returns the problem, or the clean value. */
export function checkSubscription(
  body: unknown,
  allowHttpLoopback = false,
): { ok: true; value: Omit<StoredPushSubscription, 'id' | 'created' | 'token'> } | { ok: false; detail: string } {
  if (!isObject(body)) return { ok: false, detail: 'the body must be a JSON object: a PushSubscription (toJSON()) plus an optional filter' };
  const endpoint = body['endpoint'];
  if (typeof endpoint !== 'string' || endpoint.length === 0 || endpoint.length > 2048)
    return { ok: false, detail: 'endpoint must be a URL string of at most 2048 characters' };
  let u: URL;
  try {
    u = new URL(endpoint);
  } catch {
    return { ok: false, detail: 'endpoint is not a URL' };
  }
  const httpOk = allowHttpLoopback && u.protocol === 'http:' && LOOPBACK.has(u.hostname);
  if (u.protocol !== 'https:' && !httpOk) return { ok: false, detail: 'endpoint must be an https: URL (a push service)' };
  if (u.username || u.password) return { ok: false, detail: 'endpoint must not carry credentials' };
  const exp = body['expirationTime'];
  if (exp !== undefined && exp !== null && (typeof exp !== 'number' || !Number.isFinite(exp)))
    return { ok: false, detail: 'expirationTime must be null or a number (ms since the epoch)' };
  const keys = body['keys'];
  if (!isObject(keys)) return { ok: false, detail: 'keys must be an object {p256dh, auth} (RFC 8291)' };
  const p = keys['p256dh'];
  const a = keys['auth'];
  if (b64urlBytes(p) !== 65 || Buffer.from(String(p).replace(/=+$/, ''), 'base64url')[0] !== 4)
    return { ok: false, detail: 'keys.p256dh must be base64url of an uncompressed P-256 public key (65 bytes, RFC 8291 §3.1)' };
  if (b64urlBytes(a) !== 16) return { ok: false, detail: 'keys.auth must be base64url of a 16-byte authentication secret (RFC 8291 §3.2)' };
  const value: Omit<StoredPushSubscription, 'id' | 'created' | 'token'> = {
    endpoint,
    expirationTime: typeof exp === 'number' ? exp : null,
    keys: { p256dh: String(p), auth: String(a) },
  };
  const filter = body['filter'];
  if (filter !== undefined) {
    const c = compileFilter(filter);
    if (!c.ok) return { ok: false, detail: `filter: ${c.issues.map((i) => `${i.rule}: ${i.message}`).join('; ')} (AEP-0003 §6.1)` };
    value.filter = filter as Record<string, unknown>;
  }
  return { ok: true, value };
}

/** The `/push/...` routes of one relay. */
export class PushRoutes {
  private readonly maxPerToken: number;
  private constructor(
    private readonly store: PushStore,
    private readonly opts: PushOptions,
  ) {
    this.maxPerToken = opts.maxPerToken ?? 32;
  }

  /** Open the subscription store (`storePath` null: memory). */
  static async open(storePath: string | null, opts: PushOptions): Promise<PushRoutes> {
    if (typeof opts.vapidPublicKey !== 'string' || b64urlBytes(opts.vapidPublicKey) !== 65) {
      throw Object.assign(new Error('option push.vapidPublicKey must be base64url of an uncompressed P-256 public key (65 bytes)'), {
        code: 'AEP_RELAY_BAD_OPTION',
      });
    }
    const store = storePath === null ? new MemoryPushStore() : await SqlitePushStore.open(pushStorePath(storePath));
    return new PushRoutes(store, opts);
  }

  /** Whether the router should hand `path` to this module. */
  static handles(path: string): boolean {
    return path === '/push/config' || path === '/push/subscriptions' || path.startsWith('/push/subscriptions/');
  }

  /**
   * Answer one request. `who` is the relay's auth decision: null = not authenticated;
   * `tokenRequired` false = the relay runs without a token (then push is refused: subscriptions
   * are reachable only with a credential).
   */
  async handle(req: IncomingMessage, res: ServerResponse, path: string, who: PushPrincipal | null, tokenRequired: boolean): Promise<void> {
    if (!tokenRequired) {
      req.resume();
      return fail(res, 403, 'unauthorized', 'this relay runs without a token: push subscriptions need one (start it with --token, as aep up does)');
    }
    if (!who) {
      req.resume();
      return fail(res, 401, 'unauthorized', 'missing or invalid bearer token (AEP-0003 §8.1)', { 'WWW-Authenticate': 'Bearer' });
    }
    const method = req.method ?? 'GET';
    if (path === '/push/config') {
      req.resume();
      if (method !== 'GET' && method !== 'HEAD') return fail(res, 405, 'method-not-allowed', 'use GET', { Allow: 'GET' });
      return send(res, 200, { vapidPublicKey: this.opts.vapidPublicKey });
    }
    if (path === '/push/subscriptions') {
      if (method === 'POST') return this.create(req, res, who);
      req.resume();
      if (method === 'GET') {
        if (!who.owner) return fail(res, 403, 'forbidden', 'listing push subscriptions needs the owner token');
        return send(res, 200, { subscriptions: this.store.list() });
      }
      return fail(res, 405, 'method-not-allowed', 'use POST (subscribe) or GET (list)', { Allow: 'GET, POST' });
    }
    req.resume();
    let id: string;
    try {
      id = decodeURIComponent(path.slice('/push/subscriptions/'.length));
    } catch {
      return fail(res, 404, 'not-found', 'no such push subscription');
    }
    if (method !== 'DELETE') return fail(res, 405, 'method-not-allowed', 'use DELETE', { Allow: 'DELETE' });
    const s = this.store.get(id);
    if (!s || (!who.owner && s.token !== who.key)) return fail(res, 404, 'not-found', 'no such push subscription');
    this.store.remove(id);
    return send(res, 200, { id, deleted: true });
  }

  private async create(req: IncomingMessage, res: ServerResponse, who: PushPrincipal): Promise<void> {
    const ct = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (ct !== 'application/json') {
      req.resume();
      return fail(res, 415, 'unsupported-media-type', 'Content-Type must be application/json');
    }
    const body = await readBody(req, MAX_BODY);
    if (body === null) return fail(res, 413, 'payload-too-large', `a push subscription is at most ${MAX_BODY} bytes`, { Connection: 'close' });
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      return fail(res, 400, 'invalid-subscription', 'the body is not JSON');
    }
    const c = checkSubscription(parsed, this.opts.allowHttpLoopback === true);
    if (!c.ok) return fail(res, 400, 'invalid-subscription', c.detail);
    // The same browser subscribing again (same endpoint) updates its row and keeps its id.
    const prev = this.store.byEndpoint(c.value.endpoint);
    if (!prev && this.store.countFor(who.key) >= this.maxPerToken) {
      return fail(res, 400, 'limit-exceeded', `a token may hold at most ${this.maxPerToken} push subscriptions (delete one first)`);
    }
    const s: StoredPushSubscription = {
      id: prev?.id ?? randomBytes(12).toString('base64url'),
      ...c.value,
      created: prev?.created ?? new Date().toISOString(),
      token: who.key,
    };
    this.store.put(s);
    return send(res, 201, { id: s.id });
  }

  /** Close the store. */
  close(): void {
    this.store.close();
  }
}

function readBody(req: IncomingMessage, max: number): Promise<Buffer | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (v: Buffer | null) => {
      if (!done) {
        done = true;
        resolve(v);
      }
    };
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > max) {
        finish(null);
        req.resume();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => finish(Buffer.concat(chunks)));
    req.on('error', () => finish(Buffer.alloc(0)));
    req.on('close', () => finish(Buffer.concat(chunks)));
  });
}
