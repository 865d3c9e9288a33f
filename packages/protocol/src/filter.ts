// `attr-match` subscription filters (AEP-0003 §6.1-§6.3).
// Validation fails closed: any doubt rejects the whole filter, never a partial or match-all one.
import type { Issue } from './issue.js';
import { severityRank } from './levels.js';

/** Result of {@link compileFilter}. */
export type CompiledFilter = { ok: true; match(e: unknown): boolean } | { ok: false; issues: Issue[] };

/** Filterable core attributes (AEP-0003 §6.2). */
export const FILTERABLE_ATTRIBUTES: readonly string[] = [
  'id',
  'type',
  'subject',
  'source',
  'agent',
  'session',
  'run',
  'step',
  'epoch',
  'cause',
  'severity',
  'capture',
];
/** Core attributes that are never filterable: a filter naming one is invalid (AEP-0003 §6.2). */
export const NON_FILTERABLE_ATTRIBUTES: readonly string[] = ['time', 'seq', 'aep', 'traceparent', 'data'];

const FILTERABLE = new Set(FILTERABLE_ATTRIBUTES);
const FORBIDDEN = new Set(NON_FILTERABLE_ATTRIBUTES);
const EXT_NAME = /^[a-z0-9]{1,20}$/;
// `token(.token)*.*`: a type prefix pattern; tokens hold no `.` and no `*`.
const TYPE_PATTERN = /^[^.*]+(?:\.[^.*]+)*\.\*$/;
const SECTION = 'AEP-0003 §6.2';

/** Rule ids reported by {@link compileFilter} (docs/rules.md). On WS they map to the `invalid-filter` error code, on SSE to HTTP 400. */
export const FILTER_RULES = {
  'invalid-filter.not-object': 'the filter is not a JSON object',
  'invalid-filter.forbidden-key': 'the key is a non-filterable core attribute (`time`, `seq`, `aep`, `traceparent`, `data`)',
  'invalid-filter.unknown-key': 'the key is neither a filterable core attribute nor a legal extension name `^[a-z0-9]{1,20}$`',
  'invalid-filter.bare-star': 'a bare `*` (not a pattern)',
  'invalid-filter.wildcard': 'a `*` outside a trailing `.*` of a `type` pattern',
  'invalid-filter.severity-comparison': 'a severity comparison object that is empty, has members other than `gte`/`lte`, or names an unknown level',
  'invalid-filter.empty-array': 'an empty inclusion array',
  'invalid-filter.bad-value':
    'a predicate value (or array element) that is null, a non-integer number, an object (other than the severity comparison) or a nested array',
} as const;

/** A rule id of {@link FILTER_RULES}. */
export type FilterRule = keyof typeof FILTER_RULES;

type Pred = (v: unknown, present: boolean) => boolean;

const DEFAULTS: Readonly<Record<string, unknown>> = { severity: 'info', capture: 'metadata', epoch: 0 };

function ptr(key: string, i?: number): string {
  const k = '/' + key.replace(/~/g, '~0').replace(/\//g, '~1');
  return i === undefined ? k : `${k}/${i}`;
}

/**
 * Validates an attr-match filter and compiles it into a matcher (AEP-0003 §6). Invalid filters
 * return every issue found (rule ids {@link FILTER_RULES}); a valid one matches an event when
 * every member matches: scalar = exact JSON equality (no coercion), non-empty array = any-of,
 * `"p.*"` on `type` = strictly longer with prefix `p.`, `{gte,lte}` on `severity` = inclusive.
 * Absent `severity`/`capture`/`epoch` take their defaults (`info`/`metadata`/`0`) before
 * matching; any other absent attribute does not match. The matcher accepts any value (a
 * non-object never matches) and reads own properties only. Never throws.
 */
export function compileFilter(filter: unknown): CompiledFilter {
  const issues: Issue[] = [];
  const add = (rule: FilterRule, path: string, detail: string) => issues.push({ rule, path, message: `${rule}: ${detail}`, section: SECTION });
  if (filter === null || typeof filter !== 'object' || Array.isArray(filter)) {
    add('invalid-filter.not-object', '', 'an attr-match filter must be a JSON object');
    return { ok: false, issues };
  }
  const preds: [string, Pred][] = [];
  for (const key of Object.keys(filter)) {
    const value = (filter as Record<string, unknown>)[key];
    if (FORBIDDEN.has(key)) {
      add('invalid-filter.forbidden-key', ptr(key), `"${key}" is not filterable`);
      continue;
    }
    if (!FILTERABLE.has(key) && !EXT_NAME.test(key)) {
      add('invalid-filter.unknown-key', ptr(key), `"${key}" is neither a filterable attribute nor a legal extension name`);
      continue;
    }
    const pred = compilePredicate(key, value, add);
    if (pred) preds.push([key, pred]);
  }
  if (issues.length > 0) return { ok: false, issues };

  const match = (e: unknown): boolean => {
    if (e === null || typeof e !== 'object' || Array.isArray(e)) return false;
    const rec = e as Record<string, unknown>;
    for (const [key, pred] of preds) {
      const present = Object.prototype.hasOwnProperty.call(rec, key);
      let v = present ? rec[key] : undefined;
      let has = present;
      if (!present && Object.prototype.hasOwnProperty.call(DEFAULTS, key)) {
        v = DEFAULTS[key];
        has = true;
      }
      if (!pred(v, has)) return false;
    }
    return true;
  };
  return { ok: true, match };
}

type Scalar = string | number | boolean;

function compilePredicate(key: string, value: unknown, add: (rule: FilterRule, path: string, detail: string) => void): Pred | undefined {
  if (key === 'severity' && value !== null && typeof value === 'object' && !Array.isArray(value)) {
    return compileSeverity(value as Record<string, unknown>, add);
  }
  const list = Array.isArray(value) ? value : [value];
  if (Array.isArray(value) && value.length === 0) {
    add('invalid-filter.empty-array', ptr(key), 'an inclusion array must not be empty');
    return undefined;
  }
  let ok = true;
  const exact: Scalar[] = [];
  const prefixes: string[] = [];
  list.forEach((el, i) => {
    const p = Array.isArray(value) ? ptr(key, i) : ptr(key);
    if (typeof el === 'string') {
      if (!el.includes('*')) {
        exact.push(el);
        return;
      }
      if (el === '*') {
        add('invalid-filter.bare-star', p, 'a bare `*` is not a pattern; omit the key to match everything');
        ok = false;
        return;
      }
      if (key === 'type' && TYPE_PATTERN.test(el)) {
        prefixes.push(el.slice(0, -1));
        return;
      }
      add(
        'invalid-filter.wildcard',
        p,
        key === 'type' ? `"${el}": a \`*\` is only allowed as a trailing \`.*\`` : `"${el}": wildcards are only allowed on \`type\``,
      );
      ok = false;
      return;
    }
    if (typeof el === 'boolean' || (typeof el === 'number' && Number.isInteger(el))) {
      exact.push(el);
      return;
    }
    add('invalid-filter.bad-value', p, `a predicate value must be a string, an integer or a boolean; got ${describe(el)}`);
    ok = false;
  });
  if (!ok) return undefined;
  if (prefixes.length === 0 && exact.length === 1) {
    const want = exact[0];
    return (v, has) => has && v === want;
  }
  const set = new Set<unknown>(exact);
  return (v, has) => {
    if (!has) return false;
    if (set.has(v)) return true;
    if (typeof v !== 'string') return false;
    for (const p of prefixes) if (v.length > p.length && v.startsWith(p)) return true;
    return false;
  };
}

function compileSeverity(obj: Record<string, unknown>, add: (rule: FilterRule, path: string, detail: string) => void): Pred | undefined {
  const keys = Object.keys(obj);
  let ok = keys.length > 0;
  if (!ok) add('invalid-filter.severity-comparison', '/severity', 'a severity comparison needs `gte` and/or `lte`');
  for (const k of keys) {
    if (k !== 'gte' && k !== 'lte') {
      add('invalid-filter.severity-comparison', `/severity/${k}`, `"${k}" is not a comparison; use \`gte\`/\`lte\``);
      ok = false;
      continue;
    }
    if (severityRank(obj[k]) < 0) {
      add('invalid-filter.severity-comparison', `/severity/${k}`, `${JSON.stringify(obj[k]) ?? 'undefined'} is not one of the six severity levels`);
      ok = false;
    }
  }
  if (!ok) return undefined;
  const gte = 'gte' in obj ? severityRank(obj['gte']) : -Infinity;
  const lte = 'lte' in obj ? severityRank(obj['lte']) : Infinity;
  return (v, has) => {
    if (!has) return false;
    const r = severityRank(v);
    return r >= 0 && r >= gte && r <= lte;
  };
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a nested array';
  if (typeof v === 'number') return `the non-integer number ${v}`;
  return `${typeof v === 'object' ? 'an object' : typeof v}`;
}
