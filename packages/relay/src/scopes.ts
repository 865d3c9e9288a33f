// Token scopes (issue 12 item 4; contract C7): what a token may do at the relay.
//   read[:LEVEL]            read (SSE, WebSocket subscribe, roster) at most at LEVEL (bare = metadata)
//   emit[:k=v,...]          send Events (keys agent, session)
//   answer[:k=v,...]        control.attention.respond to non-permission requests (agent, session, kind)
//   permit[:k=v,...]        control.attention.respond to kind:"permission" requests (agent, session)
//   steer[:k=v,...]         control.cancel|pause|resume and x.*.control.* (agent, session)
//   admin                   token management (/tokens)
// A key repeated is any-of; keys are and-ed; several scopes of one name are or-ed.
import { captureRank, CAPTURE_LEVELS, type CaptureLevel } from '@aep/protocol';

/** The scope names. */
export const SCOPE_NAMES = ['read', 'emit', 'answer', 'permit', 'steer', 'admin'] as const;
/** One scope name. */
export type ScopeName = (typeof SCOPE_NAMES)[number];

const KEYS: Readonly<Record<ScopeName, readonly string[]>> = {
  read: [],
  emit: ['agent', 'session'],
  answer: ['agent', 'session', 'kind'],
  permit: ['agent', 'session'],
  steer: ['agent', 'session'],
  admin: [],
};

/** One parsed scope. */
export interface Scope {
  readonly name: ScopeName;
  /** read only: the ceiling. */
  readonly level?: CaptureLevel;
  /** Constraint key → allowed values (any-of). Empty = unconstrained. */
  readonly where: ReadonlyMap<string, readonly string[]>;
  /** The scope as written (normalized: bare `read` → `read:metadata`). */
  readonly text: string;
}

/** What an operation touches, for constraint matching. Unknown facts never satisfy a constraint. */
export interface ScopeContext {
  agent?: string | undefined;
  session?: string | undefined;
  kind?: string | undefined;
}

const VALUE = /^[^\s,=]{1,200}$/;

/** Parse one scope string; throws a message naming the rule on a bad one. */
export function parseScope(text: unknown): Scope {
  if (typeof text !== 'string' || text === '') throw new Error('a scope is a non-empty string');
  const colon = text.indexOf(':');
  const name = colon < 0 ? text : text.slice(0, colon);
  const rest = colon < 0 ? undefined : text.slice(colon + 1);
  if (!(SCOPE_NAMES as readonly string[]).includes(name))
    throw new Error(`unknown scope ${JSON.stringify(name.slice(0, 40))}: expected one of ${SCOPE_NAMES.join(', ')}`);
  const n = name as ScopeName;
  if (n === 'read') {
    const level = rest ?? 'metadata';
    if (captureRank(level) < 0) throw new Error(`read:${level.slice(0, 40)}: the level must be one of ${CAPTURE_LEVELS.join(', ')}`);
    return { name: n, level: level as CaptureLevel, where: new Map(), text: `read:${level}` };
  }
  if (n === 'admin') {
    if (rest !== undefined) throw new Error('admin takes no constraints');
    return { name: n, where: new Map(), text: 'admin' };
  }
  const where = new Map<string, string[]>();
  if (rest !== undefined) {
    if (rest === '') throw new Error(`${n}: empty constraint list`);
    for (const part of rest.split(',')) {
      const eq = part.indexOf('=');
      const k = eq < 0 ? part : part.slice(0, eq);
      const v = eq < 0 ? '' : part.slice(eq + 1);
      if (!KEYS[n].includes(k)) throw new Error(`${n}: unknown constraint key ${JSON.stringify(k.slice(0, 40))} (allowed: ${KEYS[n].join(', ')})`);
      if (!VALUE.test(v)) throw new Error(`${n}: ${k} needs a value without spaces, commas or "="`);
      const list = where.get(k) ?? [];
      if (!list.includes(v)) list.push(v);
      where.set(k, list);
    }
  }
  const norm = [...where].flatMap(([k, vs]) => vs.map((v) => `${k}=${v}`)).join(',');
  return { name: n, where, text: norm ? `${n}:${norm}` : n };
}

/** True when `scope` allows an operation on `ctx` (every constraint key satisfied, any-of values). */
export function allows(scope: Scope, ctx: ScopeContext): boolean {
  for (const [k, values] of scope.where) {
    const have = ctx[k as keyof ScopeContext];
    if (have === undefined || !values.includes(have)) return false;
  }
  return true;
}

/** The scope an operation needs, spelled as a refusal names it ("token lacks scope …"). */
export function needed(name: ScopeName, ctx: ScopeContext): string {
  const parts = KEYS[name].filter((k) => ctx[k as keyof ScopeContext] !== undefined).map((k) => `${k}=${String(ctx[k as keyof ScopeContext])}`);
  return parts.length ? `${name}:${parts.join(',')}` : name;
}
