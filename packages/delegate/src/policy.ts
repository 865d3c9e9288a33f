// The policy file (issue 18 item 2): YAML or JSON, schema-checked here with errors that name
// the line and the path (`policy.yaml:12: rules[2].match.tool: ...`). The file is data: ordered
// rules whose `match` states structural facts only (facts.ts) and whose `decision` is deny, ask,
// an option id, or a map of structural values. What can never be written is refused at load
// time, with the reason: a match on text (prompt, labels), a permissive answer to a permission
// request without the exact approval text, an answer to `kind:"auth"`.
import { LineCounter, isAlias, isMap, isPair, isScalar, isSeq, parseDocument } from 'yaml';
import type { Node as YamlNode } from 'yaml';
import { approvalDigest, canonicalJson, optionEffect, sha256Hex } from '@aep/protocol';
import { parseDuration } from './duration.js';
import { DelegateError } from './errors.js';
import type { RequestKind } from './facts.js';

/** Rule ids (and grant ids) are structural tokens: they travel in `policyrule` and `attention.routed`. */
export const RULE_ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;
/** Grant ids start with this; no rule id of a policy file may. */
export const GRANT_ID_PREFIX = 'grant-';

/** Limits that keep a policy file a thing people read. */
export const POLICY_LIMITS = { bytes: 1 << 20, rules: 10_000, listItems: 1_000, stringChars: 4_096, approvalTextChars: 65_536 } as const;

const KINDS: readonly RequestKind[] = ['permission', 'input', 'auth', 'review', 'form', 'other'];
const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;

/** A structural value a rule may answer with: a number, a boolean, a choice id or a list of choice ids. */
export type StructuralValue = number | boolean | string | string[];

/** Conditions on one field (every member optional; a field named in `fields` must exist). */
export interface FieldMatch {
  type?: 'string' | 'number' | 'boolean' | 'select';
  required?: boolean;
  multi?: boolean;
  other?: boolean;
  /** The exact set of choice ids (order ignored). */
  choices?: string[];
  min?: number;
  max?: number;
}

/** What a rule matches. Every member is and-ed; a list is any-of. */
export interface RuleMatch {
  agent?: string[];
  source?: string[];
  session?: string[];
  tool?: string[];
  kind?: RequestKind[];
  severity?: string[];
  /** Any of these `approvaldigest` values (from `digest`, or computed from `approval_text`). */
  digest?: string[];
  /** The exact set of option ids (order ignored). */
  options?: string[];
  /** The exact set of field ids, each with its conditions. */
  fields?: Record<string, FieldMatch>;
  /** Local time window: days (0 = Sunday) and minutes since midnight, `from` inclusive, `to` exclusive (wraps past midnight when `to` < `from`). */
  time?: { days?: number[]; from?: number; to?: number };
  /** How long the request has been pending, in ms: `min` inclusive, `max` exclusive. */
  pending?: { min?: number; max?: number };
}

/** A rule's decision. */
export type RuleDecision =
  { type: 'deny' } | { type: 'ask' } | { type: 'option'; option: string } | { type: 'values'; values: Record<string, StructuralValue> };

/** The tier a decision belongs to: deny rules are checked before ask before allow (Claude Code's model). */
export type Tier = 'deny' | 'ask' | 'allow';

export interface RateLimit {
  max: number;
  perMs: number;
}

export interface Rule {
  id: string;
  tier: Tier;
  match: RuleMatch;
  decision: RuleDecision;
  /** The exact approval text (`match.approval_text`): the only way a rule can allow an approval request (contract C1). */
  approvalText?: string;
  /** Log what it would answer, answer nothing. */
  shadow: boolean;
  rateLimit?: RateLimit;
  /** 1-based line of the rule in the file (0 when built in code). */
  line: number;
}

export interface Policy {
  version: 1;
  engine: 'builtin' | 'cedar';
  /** Cedar policies (text), for `engine: cedar`. */
  cedar?: { text: string; file?: string };
  shadow: boolean;
  /** `local`, `UTC` or an IANA zone name, for `match.time`. */
  timezone: string;
  /** Over every answer of the delegate (shadow answers counted too). */
  rateLimit: RateLimit;
  /** A file whose existence stops every answer at once. */
  killSwitch?: string;
  grants: { defaultTtlMs: number; maxTtlMs: number };
  rules: Rule[];
  /** sha256 of the canonical policy (recorded with every decision). */
  hash: string;
}

/** Defaults a policy file may override. */
export const POLICY_DEFAULTS = {
  rateLimit: { max: 60, perMs: 60_000 },
  grants: { defaultTtlMs: 24 * 3_600_000, maxTtlMs: 30 * 86_400_000 },
  timezone: 'local',
} as const;

type Path = (string | number)[];

function pathText(p: Path): string {
  let s = '';
  for (const seg of p) s += typeof seg === 'number' ? `[${seg}]` : s === '' ? seg : `.${seg}`;
  return s === '' ? '(top level)' : s;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** An own property, whatever the key (`__proto__` included: a policy key never reaches a prototype). */
function setOwn<T>(o: Record<string, T>, k: string, v: T): void {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
}

/** Parsed YAML as plain data, with the line of every path. */
interface Located {
  value: unknown;
  lines: Map<string, number>;
}

/** YAML (JSON is YAML) to plain data; anchors/aliases and non-JSON scalars are refused. */
function load(text: string, file: string): Located {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, uniqueKeys: true, prettyErrors: false, schema: 'core', strict: true });
  const err = doc.errors[0];
  if (err) {
    const line = err.linePos?.[0]?.line ?? lc.linePos(err.pos[0]).line;
    throw new DelegateError('AEP_DELEGATE_POLICY', `${file}:${line}: not valid YAML or JSON: ${err.message.split('\n')[0] ?? err.code}`, { line });
  }
  const lines = new Map<string, number>();
  const lineOf = (node: { range?: [number, number, number] | null } | null | undefined): number => (node?.range ? lc.linePos(node.range[0]).line : 1);
  const walk = (node: unknown, path: Path): unknown => {
    if (node === null || node === undefined) return null;
    if (isAlias(node)) {
      const line = lineOf(node as YamlNode);
      throw new DelegateError('AEP_DELEGATE_POLICY', `${file}:${line}: ${pathText(path)}: YAML aliases are not allowed in a policy (write the value out)`, {
        line,
        path: pathText(path),
      });
    }
    const here = pathText(path);
    if (!lines.has(here)) lines.set(here, lineOf(node as YamlNode));
    if (isMap(node)) {
      const out: Record<string, unknown> = {};
      for (const pair of node.items) {
        if (!isPair(pair)) continue;
        const k = pair.key;
        const key = isScalar(k) ? k.value : undefined;
        if (typeof key !== 'string' && typeof key !== 'number') {
          const line = lineOf(k as YamlNode);
          throw new DelegateError('AEP_DELEGATE_POLICY', `${file}:${line}: ${here}: keys must be plain strings`, { line, path: here });
        }
        const ks = String(key);
        const sub = [...path, ks];
        lines.set(pathText(sub), lineOf(k as YamlNode));
        setOwn(out, ks, walk(pair.value, sub));
      }
      return out;
    }
    if (isSeq(node)) return node.items.map((item, i) => walk(item, [...path, i]));
    if (isScalar(node)) {
      const v = node.value;
      if (v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v))) return v;
      const line = lineOf(node);
      throw new DelegateError('AEP_DELEGATE_POLICY', `${file}:${line}: ${here}: only strings, numbers, booleans and null are allowed`, { line, path: here });
    }
    return null;
  };
  return { value: walk(doc.contents, []), lines };
}

/** Collects the first schema error with its line. */
class Checker {
  constructor(
    readonly file: string,
    readonly lines: Map<string, number>,
  ) {}

  fail(path: Path, message: string): never {
    // The line of the nearest path the file spelled out.
    let line = 1;
    for (let n = path.length; n >= 0; n--) {
      const l = this.lines.get(pathText(path.slice(0, n)));
      if (l !== undefined) {
        line = l;
        break;
      }
    }
    const p = pathText(path);
    throw new DelegateError('AEP_DELEGATE_POLICY', `${this.file}:${line}: ${p}: ${message}`, { line, path: p });
  }

  object(v: unknown, path: Path): Record<string, unknown> {
    if (!isObject(v)) this.fail(path, 'must be a mapping');
    return v;
  }

  keys(o: Record<string, unknown>, path: Path, allowed: readonly string[], hint?: (key: string) => string | undefined): void {
    for (const k of Object.keys(o)) {
      if (allowed.includes(k)) continue;
      this.fail([...path, k], hint?.(k) ?? `unknown key (allowed: ${allowed.join(', ')})`);
    }
  }

  string(v: unknown, path: Path, what = 'a string'): string {
    if (typeof v !== 'string' || v === '') this.fail(path, `must be ${what}`);
    if (v.length > POLICY_LIMITS.stringChars) this.fail(path, `is longer than ${POLICY_LIMITS.stringChars} characters`);
    return v;
  }

  /** A string, or a number written without quotes where an id is meant (`choices: [1, 2]`). */
  id(v: unknown, path: Path): string {
    if (typeof v === 'number' && Number.isSafeInteger(v)) return String(v);
    return this.string(v, path, 'an id (a string)');
  }

  list<T>(v: unknown, path: Path, item: (x: unknown, p: Path) => T): T[] {
    const arr = Array.isArray(v) ? v : [v];
    if (Array.isArray(v) && v.length === 0) this.fail(path, 'must not be an empty list');
    if (arr.length > POLICY_LIMITS.listItems) this.fail(path, `has more than ${POLICY_LIMITS.listItems} items`);
    return arr.map((x, i) => item(x, Array.isArray(v) ? [...path, i] : path));
  }

  bool(v: unknown, path: Path): boolean {
    if (typeof v !== 'boolean') this.fail(path, 'must be true or false');
    return v;
  }

  number(v: unknown, path: Path): number {
    if (typeof v !== 'number' || !Number.isFinite(v)) this.fail(path, 'must be a number');
    return v;
  }

  duration(v: unknown, path: Path): number {
    const ms = parseDuration(v);
    if (ms === undefined) this.fail(path, 'must be a duration such as 45s, 15m, 12h or 7d (or a number of milliseconds)');
    return ms;
  }

  rateLimit(v: unknown, path: Path): RateLimit {
    const o = this.object(v, path);
    this.keys(o, path, ['max', 'per']);
    const max = o['max'];
    if (typeof max !== 'number' || !Number.isSafeInteger(max) || max < 0) this.fail([...path, 'max'], 'must be a whole number of answers (0 or more)');
    if (o['per'] === undefined) this.fail([...path, 'per'], 'is required (a duration such as 1m)');
    const perMs = this.duration(o['per'], [...path, 'per']);
    if (perMs === 0) this.fail([...path, 'per'], 'must be longer than 0');
    return { max, perMs };
  }
}

const TOP_KEYS = ['version', 'engine', 'cedar', 'shadow', 'timezone', 'rate_limit', 'kill_switch', 'grants', 'rules'] as const;
const RULE_KEYS = ['id', 'match', 'decision', 'shadow', 'rate_limit'] as const;
const MATCH_KEYS = ['agent', 'source', 'session', 'tool', 'kind', 'severity', 'digest', 'approval_text', 'options', 'fields', 'time', 'pending'] as const;
const FIELD_KEYS = ['type', 'required', 'multi', 'other', 'choices', 'min', 'max'] as const;
const TEXT_KEYS = new Set(['prompt', 'label', 'labels', 'text', 'message', 'context', 'title', 'contains', 'regex', 'pattern', 'content']);

function textHint(key: string): string | undefined {
  return TEXT_KEYS.has(key)
    ? 'a rule can never see or match free text (prompts, labels, answers): the delegate reads structural facts only (docs/delegates.md "What a rule can see")'
    : undefined;
}

function parseTime(c: Checker, v: unknown, path: Path): number {
  const m = typeof v === 'string' ? /^([01]\d|2[0-3]):([0-5]\d)$/.exec(v) : null;
  if (!m) c.fail(path, 'must be a time of day HH:MM (24 h)');
  return Number(m[1]) * 60 + Number(m[2]);
}

function validTimeZone(tz: string): boolean {
  if (tz === 'local') return true;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

function parseMatch(c: Checker, v: unknown, path: Path): { match: RuleMatch; approvalText?: string } {
  if (v === undefined || v === null) return { match: {} };
  const o = c.object(v, path);
  c.keys(o, path, MATCH_KEYS, textHint);
  const match: RuleMatch = {};
  const strings = (k: 'agent' | 'source' | 'session' | 'tool' | 'severity') => {
    if (o[k] !== undefined) match[k] = c.list(o[k], [...path, k], (x, p) => c.string(x, p, 'a string (`*` matches any run of characters)'));
  };
  strings('agent');
  strings('source');
  strings('session');
  strings('tool');
  strings('severity');
  if (o['kind'] !== undefined) {
    match.kind = c.list(o['kind'], [...path, 'kind'], (x, p) => {
      if (typeof x !== 'string' || !(KINDS as readonly string[]).includes(x)) c.fail(p, `must be one of ${KINDS.join(', ')}`);
      return x as RequestKind;
    });
  }
  if (o['digest'] !== undefined && o['approval_text'] !== undefined) {
    c.fail([...path, 'digest'], 'give digest or approval_text, not both (approval_text stands for its digest)');
  }
  if (o['digest'] !== undefined) {
    match.digest = c.list(o['digest'], [...path, 'digest'], (x, p) => {
      if (typeof x !== 'string' || !/^[0-9a-f]{32}$/.test(x))
        c.fail(p, 'must be an approvaldigest: 32 lowercase hex characters, quoted (aep delegate digest TEXT prints one)');
      return x;
    });
  }
  let approvalText: string | undefined;
  if (o['approval_text'] !== undefined) {
    const t = o['approval_text'];
    if (typeof t !== 'string' || t === '')
      c.fail([...path, 'approval_text'], 'must be the exact approval text (a non-empty string; for Bash the whole command)');
    if (t.length > POLICY_LIMITS.approvalTextChars) c.fail([...path, 'approval_text'], `is longer than ${POLICY_LIMITS.approvalTextChars} characters`);
    approvalText = t;
    match.digest = [approvalDigest(t)];
  }
  if (o['options'] !== undefined) match.options = c.list(o['options'], [...path, 'options'], (x, p) => c.id(x, p));
  if (o['fields'] !== undefined) {
    const fo = c.object(o['fields'], [...path, 'fields']);
    const fields: Record<string, FieldMatch> = {};
    for (const [id, spec] of Object.entries(fo)) {
      const fp = [...path, 'fields', id];
      const so = spec === null ? {} : c.object(spec, fp);
      c.keys(so, fp, FIELD_KEYS, textHint);
      const fm: FieldMatch = {};
      if (so['type'] !== undefined) {
        const t = so['type'];
        if (t !== 'string' && t !== 'number' && t !== 'boolean' && t !== 'select') c.fail([...fp, 'type'], 'must be string, number, boolean or select');
        fm.type = t;
      }
      for (const k of ['required', 'multi', 'other'] as const) if (so[k] !== undefined) fm[k] = c.bool(so[k], [...fp, k]);
      if (so['choices'] !== undefined) fm.choices = c.list(so['choices'], [...fp, 'choices'], (x, p) => c.id(x, p));
      if (so['min'] !== undefined) fm.min = c.number(so['min'], [...fp, 'min']);
      if (so['max'] !== undefined) fm.max = c.number(so['max'], [...fp, 'max']);
      setOwn(fields, id, fm);
    }
    match.fields = fields;
  }
  if (o['time'] !== undefined) {
    const tp = [...path, 'time'];
    const to = c.object(o['time'], tp);
    c.keys(to, tp, ['days', 'from', 'to']);
    const time: NonNullable<RuleMatch['time']> = {};
    if (to['days'] !== undefined) {
      time.days = c.list(to['days'], [...tp, 'days'], (x, p) => {
        const i = typeof x === 'string' ? (DAYS as readonly string[]).indexOf(x.toLowerCase().slice(0, 3)) : -1;
        if (i < 0) c.fail(p, `must be a day: ${DAYS.join(', ')}`);
        return i;
      });
    }
    if (to['from'] !== undefined) time.from = parseTime(c, to['from'], [...tp, 'from']);
    if (to['to'] !== undefined) time.to = parseTime(c, to['to'], [...tp, 'to']);
    if (time.from !== undefined && time.to !== undefined && time.from === time.to)
      c.fail([...tp, 'to'], 'must differ from `from` (an empty window never matches)');
    match.time = time;
  }
  if (o['pending'] !== undefined) {
    const pp = [...path, 'pending'];
    const po = c.object(o['pending'], pp);
    c.keys(po, pp, ['min', 'max']);
    const pending: NonNullable<RuleMatch['pending']> = {};
    if (po['min'] !== undefined) pending.min = c.duration(po['min'], [...pp, 'min']);
    if (po['max'] !== undefined) pending.max = c.duration(po['max'], [...pp, 'max']);
    if (pending.min !== undefined && pending.max !== undefined && pending.max <= pending.min) c.fail([...pp, 'max'], 'must be longer than min');
    match.pending = pending;
  }
  return approvalText !== undefined ? { match, approvalText } : { match };
}

function parseValue(c: Checker, v: unknown, path: Path): StructuralValue {
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) c.fail(path, 'must be a finite number');
    return v;
  }
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string') {
    if (v === '') c.fail(path, 'must not be empty');
    return c.string(v, path);
  }
  if (Array.isArray(v)) {
    if (v.length > POLICY_LIMITS.listItems) c.fail(path, `has more than ${POLICY_LIMITS.listItems} items`);
    return v.map((x, i) => c.id(x, [...path, i]));
  }
  c.fail(path, 'must be a number, a boolean, a choice id or a list of choice ids (never text for a string field)');
}

function parseDecision(c: Checker, v: unknown, path: Path): RuleDecision {
  if (v === 'deny') return { type: 'deny' };
  if (v === 'ask') return { type: 'ask' };
  if (typeof v === 'string') c.fail(path, 'must be deny, ask, {option: ID} or {values: {FIELD: VALUE, ...}}');
  const o = c.object(v, path);
  c.keys(o, path, ['option', 'values'], (k) =>
    k === 'text' || k === 'reason' ? 'a delegate never sends text: a decision is deny, ask, an option id or structural values' : undefined,
  );
  if (o['option'] !== undefined && o['values'] !== undefined) c.fail(path, 'give option or values, not both');
  if (o['option'] !== undefined) return { type: 'option', option: c.id(o['option'], [...path, 'option']) };
  if (o['values'] !== undefined) {
    const vo = c.object(o['values'], [...path, 'values']);
    if (Object.keys(vo).length === 0) c.fail([...path, 'values'], 'must answer at least one field');
    const values: Record<string, StructuralValue> = {};
    for (const [k, x] of Object.entries(vo)) setOwn(values, k, parseValue(c, x, [...path, 'values', k]));
    return { type: 'values', values };
  }
  c.fail(path, 'must be deny, ask, {option: ID} or {values: {FIELD: VALUE, ...}}');
}

/** The tier of a decision: an option whose id refuses (`deny`, `decline`, ...) is a deny. */
export function tierOf(d: RuleDecision): Tier {
  if (d.type === 'deny') return 'deny';
  if (d.type === 'ask') return 'ask';
  if (d.type === 'option') return optionEffect(d.option) === 'deny' ? 'deny' : 'allow';
  return 'allow';
}

function parseRule(c: Checker, v: unknown, i: number, ids: Set<string>): Rule {
  const path: Path = ['rules', i];
  const o = c.object(v, path);
  c.keys(o, path, RULE_KEYS, textHint);
  const id = o['id'];
  if (typeof id !== 'string' || !RULE_ID_PATTERN.test(id))
    c.fail([...path, 'id'], 'is required: 1-64 characters of a-z, 0-9, _ and -, starting with a letter or digit');
  if (id.startsWith(GRANT_ID_PREFIX)) c.fail([...path, 'id'], `must not start with "${GRANT_ID_PREFIX}" (reserved for grants)`);
  if (ids.has(id)) c.fail([...path, 'id'], `"${id}" is used by an earlier rule (rule ids are unique)`);
  ids.add(id);
  const { match, approvalText } = parseMatch(c, o['match'], [...path, 'match']);
  if (o['decision'] === undefined) c.fail([...path, 'decision'], 'is required: deny, ask, {option: ID} or {values: {...}}');
  const decision = parseDecision(c, o['decision'], [...path, 'decision']);
  const tier = tierOf(decision);
  if (tier !== 'ask' && match.kind?.includes('auth')) {
    c.fail([...path, 'match', 'kind'], "a delegate never answers kind auth (credentials and logins are a person's): remove auth, or decide ask");
  }
  if (
    decision.type === 'option' &&
    optionEffect(decision.option) !== 'deny' &&
    approvalText === undefined &&
    (match.kind === undefined || match.kind.includes('permission'))
  ) {
    c.fail(
      [...path, 'decision'],
      `option "${decision.option}" does not refuse, and a delegate can answer a permission request other than by refusing only with the exact approval text a person approved: add match.approval_text (or give match.kind without permission). Tool-name-wide rules can deny or ask, never allow; tool-wide allows are Claude Code's own permission settings (docs/delegates.md)`,
    );
  }
  if (decision.type === 'values' && match.kind !== undefined && !match.kind.includes('form')) {
    c.fail([...path, 'decision'], 'values answer a form: match.kind must include form');
  }
  const rule: Rule = { id, tier, match, decision, shadow: false, line: c.lines.get(pathText(path)) ?? 0 };
  if (approvalText !== undefined) rule.approvalText = approvalText;
  if (o['shadow'] !== undefined) rule.shadow = c.bool(o['shadow'], [...path, 'shadow']);
  if (o['rate_limit'] !== undefined) rule.rateLimit = c.rateLimit(o['rate_limit'], [...path, 'rate_limit']);
  return rule;
}

/** Options of {@link parsePolicy}. */
export interface ParsePolicyOptions {
  /** Name used in messages (default `policy`). */
  file?: string;
  /** Reads the Cedar file named by `cedar:` (relative to the policy file); absent: Cedar files are refused. */
  readCedar?: (name: string) => string;
}

/**
 * Parses and schema-checks a policy (YAML or JSON text). Throws {@link DelegateError}
 * `AEP_DELEGATE_POLICY` naming `file:line: path: what is wrong`.
 */
export function parsePolicy(text: string, opts: ParsePolicyOptions = {}): Policy {
  const file = opts.file ?? 'policy';
  if (text.length > POLICY_LIMITS.bytes)
    throw new DelegateError('AEP_DELEGATE_POLICY', `${file}:1: the policy is larger than ${POLICY_LIMITS.bytes} bytes`, { line: 1 });
  const { value, lines } = load(text, file);
  const c: Checker = new Checker(file, lines);
  const top = c.object(value, []);
  c.keys(top, [], TOP_KEYS, textHint);
  if (top['version'] !== 1) c.fail(['version'], 'is required and must be 1');
  const engine = top['engine'] ?? 'builtin';
  if (engine !== 'builtin' && engine !== 'cedar') c.fail(['engine'], 'must be builtin or cedar');
  const policy: Policy = {
    version: 1,
    engine,
    shadow: false,
    timezone: POLICY_DEFAULTS.timezone,
    rateLimit: { ...POLICY_DEFAULTS.rateLimit },
    grants: { ...POLICY_DEFAULTS.grants },
    rules: [],
    hash: '',
  };
  if (top['shadow'] !== undefined) policy.shadow = c.bool(top['shadow'], ['shadow']);
  if (top['timezone'] !== undefined) {
    const tz = c.string(top['timezone'], ['timezone']);
    if (!validTimeZone(tz)) c.fail(['timezone'], 'must be local, UTC or an IANA zone name such as Europe/Berlin');
    policy.timezone = tz;
  }
  if (top['rate_limit'] !== undefined) policy.rateLimit = c.rateLimit(top['rate_limit'], ['rate_limit']);
  if (top['kill_switch'] !== undefined) policy.killSwitch = c.string(top['kill_switch'], ['kill_switch'], 'a file path');
  if (top['grants'] !== undefined) {
    const g = c.object(top['grants'], ['grants']);
    c.keys(g, ['grants'], ['default_ttl', 'max_ttl']);
    if (g['max_ttl'] !== undefined) policy.grants.maxTtlMs = c.duration(g['max_ttl'], ['grants', 'max_ttl']);
    if (g['default_ttl'] !== undefined) policy.grants.defaultTtlMs = c.duration(g['default_ttl'], ['grants', 'default_ttl']);
    if (policy.grants.maxTtlMs === 0) c.fail(['grants', 'max_ttl'], 'must be longer than 0 (grants always expire)');
    if (policy.grants.defaultTtlMs === 0 || policy.grants.defaultTtlMs > policy.grants.maxTtlMs)
      c.fail(['grants', 'default_ttl'], 'must be longer than 0 and at most max_ttl');
  }
  const ids = new Set<string>();
  if (top['rules'] !== undefined && top['rules'] !== null) {
    if (!Array.isArray(top['rules'])) c.fail(['rules'], 'must be a list of rules');
    if (top['rules'].length > POLICY_LIMITS.rules) c.fail(['rules'], `has more than ${POLICY_LIMITS.rules} rules`);
    policy.rules = top['rules'].map((r, i) => parseRule(c, r, i, ids));
  }
  if (engine === 'cedar') {
    const name = top['cedar'];
    if (typeof name !== 'string' || name === '') c.fail(['cedar'], 'engine cedar needs `cedar: FILE` (the .cedar policies, relative to this file)');
    if (!opts.readCedar) c.fail(['cedar'], 'Cedar files cannot be read here');
    let cedarText: string;
    try {
      cedarText = opts.readCedar(name);
    } catch (err) {
      throw new DelegateError(
        'AEP_DELEGATE_POLICY_READ',
        `${file}:${lines.get('cedar') ?? 1}: cedar: cannot read ${name}: ${err instanceof Error ? err.message : String(err)}`,
        { line: lines.get('cedar') ?? 1, path: 'cedar' },
      );
    }
    policy.cedar = { text: cedarText, file: name };
  } else if (top['cedar'] !== undefined) {
    c.fail(['cedar'], 'is only read with engine: cedar');
  }
  policy.hash = policyHash(policy);
  return policy;
}

/** sha256 (32 hex) of the policy's canonical form: which policy made a decision. */
export function policyHash(p: Omit<Policy, 'hash'> | Policy): string {
  const { hash: _h, ...rest } = p as Policy;
  return sha256Hex(canonicalJson(JSON.parse(JSON.stringify(rest)) as unknown)).slice(0, 32);
}
