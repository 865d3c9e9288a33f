// Optional engine: Cedar (`@cedar-policy/cedar-wasm`, issue 18 item 5) behind the same decision
// interface as the built-in rules. A request is asked as
//
//   principal = Agent::"<agent>", action = Action::"answer", resource = Tool::"<subject>"
//   context   = the structural facts (facts.ts): kind, session, source, severity, digest,
//               has_digest, options, field_ids, fields, pending_ms, weekday, hour, minute
//
// Each `permit` is a rule: `@id("rule-id")` and one decision annotation, `@decision("deny")`,
// `@decision("ask")`, `@option("ID")` or `@values("{\"field\":value}")` (JSON of structural
// values), optionally `@approval_text("exact text")` and `@shadow("true")`. Permits are tried
// deny -> ask -> allow, in file order within a tier, like the built-in rules. A satisfied
// `forbid` (it needs `@id` too) stops every answer: the request goes to a person. Every safety
// rule (contract C1, structural values only, never `kind:"auth"`) is applied after the engine,
// in decide.ts, exactly as for the built-in rules.
import type * as CedarWasm from '@cedar-policy/cedar-wasm/nodejs';
import { localClock, nextMinute, pendingMs } from './clock.js';
import { DAY_NAMES } from './clock.js';
import type { DecisionEngine, EngineVerdict, EvalContext, MatchedRule, RuleTrace } from './engine.js';
import { DelegateError } from './errors.js';
import type { RequestFacts } from './facts.js';
import type { Policy, RuleDecision, StructuralValue, Tier } from './policy.js';
import { GRANT_ID_PREFIX, RULE_ID_PATTERN, tierOf } from './policy.js';

type CedarModule = typeof CedarWasm;

interface CedarRule {
  id: string;
  effect: 'permit' | 'forbid';
  tier: Tier;
  decision?: RuleDecision;
  approvalText?: string;
  shadow: boolean;
  text: string;
}

function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

function fail(file: string, message: string, line?: number): never {
  throw new DelegateError('AEP_DELEGATE_CEDAR', `${file}${line !== undefined ? `:${line}` : ''}: ${message}`, line !== undefined ? { line } : {});
}

function structural(v: unknown): v is StructuralValue {
  return (
    typeof v === 'boolean' ||
    (typeof v === 'number' && Number.isFinite(v)) ||
    (typeof v === 'string' && v !== '') ||
    (Array.isArray(v) && v.every((x) => typeof x === 'string' && x !== ''))
  );
}

function parseRules(cedar: CedarModule, text: string, file: string): CedarRule[] {
  const check = cedar.checkParsePolicySet({ staticPolicies: text });
  if (check.type === 'failure') {
    const e = check.errors[0];
    const off = e?.sourceLocations?.[0]?.start;
    fail(file, `not valid Cedar: ${e?.message ?? 'parse error'}`, off !== undefined ? lineAt(text, off) : undefined);
  }
  const parts = cedar.policySetTextToParts(text);
  if (parts.type === 'failure') fail(file, `not valid Cedar: ${parts.errors[0]?.message ?? 'parse error'}`);
  if (parts.policy_templates.length > 0) fail(file, 'templates are not supported: write static policies');
  const rules: CedarRule[] = [];
  const ids = new Set<string>();
  let searchFrom = 0;
  for (const part of parts.policies) {
    const json = cedar.policyToJson(part);
    if (json.type === 'failure') fail(file, `not valid Cedar: ${json.errors[0]?.message ?? 'parse error'}`);
    const ann = json.json.annotations ?? {};
    const at = text.indexOf('@id', searchFrom);
    const line = at >= 0 ? lineAt(text, at) : undefined;
    if (at >= 0) searchFrom = at + 3;
    const id = ann['id'];
    if (typeof id !== 'string' || !RULE_ID_PATTERN.test(id)) fail(file, 'every policy needs @id("rule-id"): 1-64 characters of a-z, 0-9, _ and -', line);
    if (id.startsWith(GRANT_ID_PREFIX)) fail(file, `@id must not start with "${GRANT_ID_PREFIX}" (reserved for grants)`, line);
    if (ids.has(id)) fail(file, `@id("${id}") is used twice`, line);
    ids.add(id);
    const effect = json.json.effect;
    const shadow = ann['shadow'] === 'true';
    if (effect === 'forbid') {
      rules.push({ id, effect, tier: 'ask', shadow, text: part });
      continue;
    }
    const given = ['decision', 'option', 'values'].filter((k) => typeof ann[k] === 'string');
    if (given.length !== 1) fail(file, `policy ${id}: give exactly one of @decision("deny"|"ask"), @option("ID"), @values("{...}")`, line);
    let decision: RuleDecision;
    if (typeof ann['decision'] === 'string') {
      if (ann['decision'] !== 'deny' && ann['decision'] !== 'ask') fail(file, `policy ${id}: @decision is deny or ask (allow with @option or @values)`, line);
      decision = { type: ann['decision'] };
    } else if (typeof ann['option'] === 'string') {
      if (ann['option'] === '') fail(file, `policy ${id}: @option names an option id`, line);
      decision = { type: 'option', option: ann['option'] };
    } else {
      let values: unknown;
      try {
        values = JSON.parse(ann['values']!);
      } catch {
        fail(file, `policy ${id}: @values must be a JSON object`, line);
      }
      if (typeof values !== 'object' || values === null || Array.isArray(values) || Object.keys(values).length === 0)
        fail(file, `policy ${id}: @values must be a non-empty JSON object`, line);
      for (const [k, v] of Object.entries(values)) {
        if (!structural(v)) fail(file, `policy ${id}: @values.${k} must be a number, a boolean, a choice id or a list of choice ids`, line);
      }
      decision = { type: 'values', values: values as Record<string, StructuralValue> };
    }
    const rule: CedarRule = { id, effect, tier: tierOf(decision), decision, shadow, text: part };
    if (typeof ann['approval_text'] === 'string' && ann['approval_text'] !== '') rule.approvalText = ann['approval_text'];
    rules.push(rule);
  }
  return rules;
}

const TIME_WORDS = /\b(pending_ms|weekday|hour|minute)\b/;

/** The Cedar engine. Create with {@link createCedarEngine} (it loads the wasm module). */
export class CedarEngine implements DecisionEngine {
  readonly name = 'cedar' as const;
  private readonly ordered: CedarRule[];
  private readonly forbids: CedarRule[];
  private readonly staticPolicies: Record<string, string>;
  private readonly timeDependent: boolean;

  constructor(
    private readonly cedar: CedarModule,
    readonly policy: Policy,
    rules: CedarRule[],
  ) {
    const permits = rules.filter((r) => r.effect === 'permit');
    this.ordered = (['deny', 'ask', 'allow'] as const).flatMap((t) => permits.filter((r) => r.tier === t));
    this.forbids = rules.filter((r) => r.effect === 'forbid');
    this.staticPolicies = Object.fromEntries(rules.map((r) => [r.id, r.text]));
    this.timeDependent = rules.some((r) => TIME_WORDS.test(r.text));
  }

  /** The Cedar context of a request: its structural facts (never text). */
  static context(f: RequestFacts, ctx: EvalContext, timezone: string): Record<string, unknown> {
    const { day, minute } = localClock(ctx.now, timezone);
    const fields: Record<string, unknown> = {};
    for (const x of f.fields) {
      fields[x.id] = {
        type: x.type,
        required: x.required,
        multi: x.multi,
        other: x.other,
        choices: x.choices,
        ...(x.min !== undefined && Number.isSafeInteger(x.min) ? { min: x.min } : {}),
        ...(x.max !== undefined && Number.isSafeInteger(x.max) ? { max: x.max } : {}),
      };
    }
    return {
      kind: f.kind,
      session: f.session,
      source: f.source,
      severity: f.severity,
      has_digest: f.digest !== undefined,
      digest: f.digest ?? '',
      options: f.options,
      field_ids: f.fields.map((x) => x.id),
      fields,
      pending_ms: Math.min(Number.MAX_SAFE_INTEGER, Math.floor(pendingMs(ctx.now, f.time, ctx.firstSeen))),
      weekday: DAY_NAMES[day],
      hour: Math.floor(minute / 60),
      minute: minute % 60,
    };
  }

  evaluate(facts: RequestFacts, ctx: EvalContext): EngineVerdict {
    const answer = this.cedar.isAuthorized({
      principal: { type: 'Agent', id: facts.agent },
      action: { type: 'Action', id: 'answer' },
      resource: { type: 'Tool', id: facts.tool ?? '' },
      context: CedarEngine.context(facts, ctx, this.policy.timezone) as Record<string, never>,
      policies: { staticPolicies: this.staticPolicies },
      entities: [],
    });
    const trace: RuleTrace[] = [];
    const recheck = this.timeDependent ? { recheckAt: Math.min(ctx.now + 5_000, nextMinute(ctx.now)) } : {};
    if (answer.type === 'failure') {
      trace.push({ rule: '(cedar)', tier: 'ask', matched: false, why: `Cedar could not evaluate the request: ${answer.errors[0]?.message ?? 'error'}` });
      return { matches: [], forbidden: '(cedar)', trace, ...recheck };
    }
    const { decision, diagnostics } = answer.response;
    const satisfied = new Set(diagnostics.reason);
    const errors = new Map(diagnostics.errors.map((e) => [e.policyId, e.error.message] as const));
    let forbidden: string | undefined;
    for (const r of this.forbids) {
      const hit = decision === 'deny' && satisfied.has(r.id);
      trace.push({
        rule: r.id,
        tier: 'forbid',
        matched: hit,
        why: errors.has(r.id) ? `error: ${errors.get(r.id)!}` : hit ? 'Cedar forbid satisfied: nothing is answered' : 'Cedar forbid not satisfied',
      });
      if (hit && forbidden === undefined) forbidden = r.id;
    }
    const matches: MatchedRule[] = [];
    for (const r of this.ordered) {
      // With a satisfied forbid Cedar reports only the forbids; the permits are then moot.
      const hit = decision === 'allow' && satisfied.has(r.id);
      trace.push({
        rule: r.id,
        tier: r.tier,
        matched: hit,
        why: errors.has(r.id)
          ? `error: ${errors.get(r.id)!}`
          : hit
            ? 'Cedar permit satisfied'
            : forbidden
              ? 'not considered: a forbid holds'
              : 'Cedar permit not satisfied',
      });
      if (hit && r.decision) {
        const m: MatchedRule = { id: r.id, tier: r.tier, decision: r.decision, shadow: r.shadow };
        if (r.approvalText !== undefined) m.approvalText = r.approvalText;
        matches.push(m);
      }
    }
    return { matches, trace, ...(forbidden !== undefined ? { forbidden } : {}), ...recheck };
  }
}

/** Loads Cedar and parses the policy's Cedar text (`AEP_DELEGATE_CEDAR` on failure). */
export async function createCedarEngine(policy: Policy): Promise<CedarEngine> {
  if (!policy.cedar) throw new DelegateError('AEP_DELEGATE_CEDAR', 'engine cedar needs Cedar policies (cedar: FILE)');
  let cedar: CedarModule;
  try {
    cedar = await import('@cedar-policy/cedar-wasm/nodejs');
  } catch (err) {
    throw new DelegateError(
      'AEP_DELEGATE_CEDAR',
      `the Cedar engine (@cedar-policy/cedar-wasm) cannot be loaded here: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  const rules = parseRules(cedar, policy.cedar.text, policy.cedar.file ?? 'cedar');
  return new CedarEngine(cedar, policy, rules);
}
