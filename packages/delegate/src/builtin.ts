// The built-in rule language (the default engine): every condition of `match` against the
// structural facts of a request, with a reason for each verdict (`aep delegate explain`).
import { DAY_NAMES, localClock, minuteText, nextMinute, pendingMs } from './clock.js';
import type { DecisionEngine, EngineVerdict, EvalContext, MatchedRule, RuleTrace } from './engine.js';
import type { FieldFacts, RequestFacts } from './facts.js';
import { globMatch } from './glob.js';
import type { FieldMatch, Policy, Rule, RuleMatch, Tier } from './policy.js';

const TIERS: readonly Tier[] = ['deny', 'ask', 'allow'];

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const sa = new Set(a);
  const sb = new Set(b);
  if (sa.size !== sb.size) return false;
  for (const x of sa) if (!sb.has(x)) return false;
  return true;
}

function list(v: readonly string[]): string {
  return v.length === 1 ? v[0]! : `any of ${v.join(', ')}`;
}

/** Why `field` fails `fm`, or undefined when it meets it. */
function fieldMismatch(id: string, field: FieldFacts, fm: FieldMatch): string | undefined {
  if (fm.type !== undefined && field.type !== fm.type) return `field ${id} is ${field.type}, not ${fm.type}`;
  for (const k of ['required', 'multi', 'other'] as const) {
    if (fm[k] !== undefined && field[k] !== fm[k]) return `field ${id} has ${k} ${String(field[k])}, not ${String(fm[k])}`;
  }
  if (fm.choices !== undefined && !sameSet(field.choices, fm.choices))
    return `field ${id} offers choices ${field.choices.join(', ') || '(none)'}, not ${fm.choices.join(', ')}`;
  if (fm.min !== undefined && field.min !== fm.min) return `field ${id} has min ${field.min ?? '(none)'}, not ${fm.min}`;
  if (fm.max !== undefined && field.max !== fm.max) return `field ${id} has max ${field.max ?? '(none)'}, not ${fm.max}`;
  return undefined;
}

/**
 * Checks every condition of `m`; returns `{ok, why}`: on a match the conditions that held, else
 * the first that failed.
 */
export function matchRule(m: RuleMatch, f: RequestFacts, ctx: EvalContext, timezone: string): { ok: boolean; why: string } {
  const held: string[] = [];
  const names = ['agent', 'source', 'session', 'tool', 'severity'] as const;
  for (const k of names) {
    const pats = m[k];
    if (pats === undefined) continue;
    const v = k === 'tool' ? f.tool : f[k];
    if (v === undefined) return { ok: false, why: `the request has no ${k === 'tool' ? 'tool (subject)' : k}` };
    if (!pats.some((p) => globMatch(p, v))) return { ok: false, why: `${k} ${v} does not match ${list(pats)}` };
    held.push(`${k} ${v} matches ${list(pats)}`);
  }
  if (m.kind !== undefined) {
    if (!m.kind.includes(f.kind)) return { ok: false, why: `kind ${f.kind} is not ${list(m.kind)}` };
    held.push(`kind ${f.kind}`);
  }
  if (m.digest !== undefined) {
    if (f.digest === undefined) return { ok: false, why: 'the request carries no approvaldigest' };
    if (!m.digest.includes(f.digest)) return { ok: false, why: `approvaldigest ${f.digest} is not ${list(m.digest)}` };
    held.push(`approvaldigest ${f.digest}`);
  }
  if (m.options !== undefined) {
    if (!sameSet(f.options, m.options)) return { ok: false, why: `options are ${f.options.join(', ') || '(none)'}, not ${m.options.join(', ')}` };
    held.push(`options ${m.options.join(', ')}`);
  }
  if (m.fields !== undefined) {
    const want = Object.keys(m.fields);
    const have = f.fields.map((x) => x.id);
    if (!sameSet(have, want)) return { ok: false, why: `fields are ${have.join(', ') || '(none)'}, not ${want.join(', ')}` };
    for (const id of want) {
      const why = fieldMismatch(
        id,
        f.fields.find((x) => x.id === id)!,
        m.fields[id]!,
      );
      if (why) return { ok: false, why };
    }
    held.push(`fields ${want.join(', ')}`);
  }
  if (m.time !== undefined) {
    const { day, minute } = localClock(ctx.now, timezone);
    if (m.time.days !== undefined && !m.time.days.includes(day))
      return { ok: false, why: `${DAY_NAMES[day]} is not ${m.time.days.map((d) => DAY_NAMES[d]).join(', ')}` };
    const from = m.time.from ?? 0;
    const to = m.time.to ?? 1440;
    const inside = from < to ? minute >= from && minute < to : minute >= from || minute < to;
    if (!inside) return { ok: false, why: `${minuteText(minute)} is outside ${minuteText(from)}-${minuteText(to % 1440)} (${timezone})` };
    held.push(`time ${minuteText(minute)} ${DAY_NAMES[day]}`);
  }
  if (m.pending !== undefined) {
    const p = pendingMs(ctx.now, f.time, ctx.firstSeen);
    if (m.pending.min !== undefined && p < m.pending.min) return { ok: false, why: `pending ${p} ms, less than ${m.pending.min} ms` };
    if (m.pending.max !== undefined && p >= m.pending.max) return { ok: false, why: `pending ${p} ms, not less than ${m.pending.max} ms` };
    held.push(`pending ${p} ms`);
  }
  return { ok: true, why: held.length ? held.join('; ') : 'the rule matches every request' };
}

/** The next time a time condition of `m` may flip, after `now`. */
function recheckOf(m: RuleMatch, f: RequestFacts, ctx: EvalContext): number | undefined {
  let at: number | undefined;
  const take = (t: number) => {
    if (t > ctx.now && (at === undefined || t < at)) at = t;
  };
  if (m.time !== undefined) take(nextMinute(ctx.now));
  if (m.pending !== undefined) {
    const start = Number.isFinite(f.time) ? f.time : ctx.firstSeen;
    if (m.pending.min !== undefined) take(start + m.pending.min);
    if (m.pending.max !== undefined) take(start + m.pending.max);
  }
  return at;
}

function toMatched(r: Rule): MatchedRule {
  const out: MatchedRule = { id: r.id, tier: r.tier, decision: r.decision, shadow: r.shadow };
  if (r.approvalText !== undefined) out.approvalText = r.approvalText;
  if (r.rateLimit !== undefined) out.rateLimit = r.rateLimit;
  return out;
}

/** The built-in engine over a parsed {@link Policy}. */
export class BuiltinEngine implements DecisionEngine {
  readonly name = 'builtin' as const;
  private readonly ordered: Rule[];

  constructor(readonly policy: Policy) {
    // deny -> ask -> allow, file order within each tier (Claude Code's permission model).
    this.ordered = TIERS.flatMap((t) => policy.rules.filter((r) => r.tier === t));
  }

  evaluate(facts: RequestFacts, ctx: EvalContext): EngineVerdict {
    const matches: MatchedRule[] = [];
    const trace: RuleTrace[] = [];
    let recheckAt: number | undefined;
    for (const r of this.ordered) {
      const { ok, why } = matchRule(r.match, facts, ctx, this.policy.timezone);
      trace.push({ rule: r.id, tier: r.tier, matched: ok, why });
      if (ok) matches.push(toMatched(r));
      const t = recheckOf(r.match, facts, ctx);
      if (t !== undefined && (recheckAt === undefined || t < recheckAt)) recheckAt = t;
    }
    return { matches, trace, ...(recheckAt !== undefined ? { recheckAt } : {}) };
  }
}
