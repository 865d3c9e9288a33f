// Grants: standing allows a person created with "Always allow this" (issue 18 item 4). A grant
// is scoped to one agent, one tool and one exact approval text (its `approvaldigest`; optionally
// one session), always expires, and holds the text itself, because only the text lets the
// delegate compute the `approvalproof` an allowing answer needs (contract C1): the delegate
// reads requests at `metadata` and never sees the text. Kept in a file of mode 0600.
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { approvalDigest } from '@aep/protocol';
import { parseDuration } from './duration.js';
import { DelegateError } from './errors.js';
import type { RequestFacts } from './facts.js';
import { GRANT_ID_PREFIX, RULE_ID_PATTERN } from './policy.js';

/** A grant as stored (with the approval text). */
export interface Grant {
  /** `grant-…`: also the rule id its answers carry (`policyrule`). */
  id: string;
  agent: string;
  tool: string;
  digest: string;
  session?: string;
  /** Epoch ms. */
  created: number;
  expires: number;
  /** The exact approval text (never logged, never in an event below `full`). */
  text: string;
  /** Asserted sender of the grant command (its `agent`), for the audit. */
  by?: string;
  /** The request the person answered when they created it. */
  request?: string;
}

/** What a grant shows anywhere but its own file: structural members only. */
export interface GrantSummary {
  grant: string;
  agent: string;
  tool: string;
  digest: string;
  session?: string;
  /** RFC 3339. */
  expires: string;
  created: string;
  by?: string;
  request?: string;
}

export function grantSummary(g: Grant): GrantSummary {
  return {
    grant: g.id,
    agent: g.agent,
    tool: g.tool,
    digest: g.digest,
    ...(g.session !== undefined ? { session: g.session } : {}),
    expires: new Date(g.expires).toISOString(),
    created: new Date(g.created).toISOString(),
    ...(g.by !== undefined ? { by: g.by } : {}),
    ...(g.request !== undefined ? { request: g.request } : {}),
  };
}

const NAME_MAX = 256;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function newGrantId(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  const bytes = new Uint8Array(16);
  globalThis.crypto.getRandomValues(bytes);
  let s = '';
  for (const b of bytes) s += alphabet[b % alphabet.length];
  return `${GRANT_ID_PREFIX}${s}`;
}

/**
 * Checks the `data` of an `x.aep.control.grant` command and builds the grant: `agent`, `tool`,
 * `digest` (32 hex) and `text` are required and `approvalDigest(text)` must equal `digest` (the
 * grantor held the exact text); `ttl` (duration) or `expires` (RFC 3339) bounded by `maxTtlMs`,
 * default `defaultTtlMs`; `session` and `request` optional. Messages never repeat the text.
 */
export function grantFromCommand(
  data: unknown,
  now: number,
  limits: { defaultTtlMs: number; maxTtlMs: number },
  by?: string,
): { ok: true; grant: Grant } | { ok: false; path: string; message: string } {
  const bad = (path: string, message: string) => ({ ok: false as const, path, message });
  if (!isObject(data)) return bad('/data', 'a grant needs data {agent, tool, digest, text, ttl?}');
  const name = (k: string): string | undefined => {
    const v = data[k];
    return typeof v === 'string' && v !== '' && v.length <= NAME_MAX ? v : undefined;
  };
  const agent = name('agent');
  if (agent === undefined) return bad('/data/agent', 'the agent the grant applies to is required (a name of at most 256 characters)');
  const tool = name('tool');
  if (tool === undefined) return bad('/data/tool', 'the tool (the request subject) the grant applies to is required');
  const digest = data['digest'];
  if (typeof digest !== 'string' || !/^[0-9a-f]{32}$/.test(digest))
    return bad('/data/digest', 'the approvaldigest of the request (32 hex characters) is required');
  const text = data['text'];
  if (typeof text !== 'string' || text === '') return bad('/data/text', 'the exact approval text is required (send the command at capture full)');
  if (approvalDigest(text) !== digest) return bad('/data/text', 'the text is not the approval text of that digest: grant only what you saw complete');
  let expires: number;
  if (data['expires'] !== undefined) {
    const e = typeof data['expires'] === 'string' ? Date.parse(data['expires']) : NaN;
    if (!Number.isFinite(e)) return bad('/data/expires', 'expires must be an RFC 3339 time');
    expires = e;
  } else if (data['ttl'] !== undefined) {
    const ttl = parseDuration(data['ttl']);
    if (ttl === undefined || ttl === 0) return bad('/data/ttl', 'ttl must be a duration such as 30m, 24h or 7d');
    expires = now + ttl;
  } else {
    expires = now + limits.defaultTtlMs;
  }
  if (expires <= now) return bad('/data/expires', 'the grant would already have expired');
  if (expires > now + limits.maxTtlMs)
    return bad('/data/expires', `a grant expires at most ${Math.round(limits.maxTtlMs / 3_600_000)} h after it is made (policy grants.max_ttl)`);
  const grant: Grant = { id: newGrantId(), agent, tool, digest, created: now, expires, text };
  const session = name('session');
  if (session !== undefined) grant.session = session;
  const request = name('request');
  if (request !== undefined) grant.request = request;
  if (by !== undefined && by !== '') grant.by = by.slice(0, NAME_MAX);
  return { ok: true, grant };
}

/** True when `g` applies to a request with these facts at `now`. */
export function grantMatches(g: Grant, f: RequestFacts, now: number): boolean {
  return now < g.expires && f.digest === g.digest && f.agent === g.agent && f.tool === g.tool && (g.session === undefined || g.session === f.session);
}

/** Why `g` does not apply (for the trace), or undefined when it does. */
export function grantMismatch(g: Grant, f: RequestFacts, now: number): string | undefined {
  if (now >= g.expires) return `expired at ${new Date(g.expires).toISOString()}`;
  if (f.digest !== g.digest) return f.digest === undefined ? 'the request carries no approvaldigest' : `approvaldigest ${f.digest} is not ${g.digest}`;
  if (f.agent !== g.agent) return `agent ${f.agent} is not ${g.agent}`;
  if (f.tool !== g.tool) return `tool ${f.tool ?? '(none)'} is not ${g.tool}`;
  if (g.session !== undefined && g.session !== f.session) return `session ${f.session} is not ${g.session}`;
  return undefined;
}

/** The grants of one delegate, optionally persisted to a 0600 file (written atomically). */
export class GrantStore {
  private readonly byId = new Map<string, Grant>();

  constructor(readonly file?: string) {
    if (file) this.load(file);
  }

  /** Active and expired grants, oldest first. */
  all(): Grant[] {
    return [...this.byId.values()].sort((a, b) => a.created - b.created || (a.id < b.id ? -1 : 1));
  }

  active(now: number): Grant[] {
    return this.all().filter((g) => now < g.expires);
  }

  get(id: string): Grant | undefined {
    return this.byId.get(id);
  }

  add(g: Grant): void {
    this.byId.set(g.id, g);
    this.save();
  }

  /** Removes a grant; false when unknown. */
  revoke(id: string): Grant | undefined {
    const g = this.byId.get(id);
    if (!g) return undefined;
    this.byId.delete(id);
    this.save();
    return g;
  }

  /** Removes and returns the grants expired at `now`. */
  expire(now: number): Grant[] {
    const gone = this.all().filter((g) => now >= g.expires);
    if (gone.length === 0) return gone;
    for (const g of gone) this.byId.delete(g.id);
    this.save();
    return gone;
  }

  private load(file: string): void {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw new DelegateError('AEP_DELEGATE_STATE', `cannot read the grants file ${file}: ${(err as Error).message}`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new DelegateError('AEP_DELEGATE_STATE', `the grants file ${file} is not JSON (move it away to start without grants)`);
    }
    const list = isObject(parsed) && Array.isArray(parsed['grants']) ? (parsed['grants'] as unknown[]) : [];
    for (const g of list) {
      if (!isObject(g)) continue;
      const id = g['id'];
      const ok =
        typeof id === 'string' &&
        RULE_ID_PATTERN.test(id) &&
        id.startsWith(GRANT_ID_PREFIX) &&
        typeof g['agent'] === 'string' &&
        typeof g['tool'] === 'string' &&
        typeof g['digest'] === 'string' &&
        typeof g['text'] === 'string' &&
        approvalDigest(g['text']) === g['digest'] &&
        typeof g['created'] === 'number' &&
        typeof g['expires'] === 'number';
      if (ok) this.byId.set(id, g as unknown as Grant);
    }
  }

  private save(): void {
    if (!this.file) return;
    const file = this.file;
    try {
      mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify({ version: 1, grants: this.all() }, null, 2) + '\n', { mode: 0o600 });
      chmodSync(tmp, 0o600);
      renameSync(tmp, file);
    } catch (err) {
      throw new DelegateError('AEP_DELEGATE_STATE', `cannot write the grants file ${file}: ${(err as Error).message}`);
    }
  }
}
