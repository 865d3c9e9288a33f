// From matching rules to what the delegate does (issue 18 item 2), the same for every engine:
//
// 1. `kind:"auth"` is never answered (credentials and logins are a person's).
// 2. A Cedar `forbid` that holds: nothing is answered.
// 3. Deny rules, in file order: the first that matches denies, with the request's refusing
//    answer (`decline` on a form, else the option `deny`, else the first option whose id
//    refuses); a request with no refusing answer goes to a person (never on to an allow).
// 4. Ask rules: the first that matches leaves the request to a person.
// 5. Allow rules: the first that matches *and whose decision fits the request* answers: an
//    option the request offers; values that are structural for the request's fields (numbers in
//    range, booleans, choice ids; never a string field, never `other` text; every required
//    field answered). A request carrying `approvaldigest` (or `kind:"permission"`) is answered
//    other than by refusing only with an option and the exact approval text (contract C1: the
//    text is what the `approvalproof` is computed from), never with values.
// 6. Grants: the first active grant for this agent, tool and digest allows.
// 7. Nothing matched: a person answers.
import { approvalDigest, FORM_CANCEL_OPTION, FORM_DECLINE_OPTION, optionEffect } from '@aep/protocol';
import type { DecisionEngine, EvalContext, MatchedRule, RuleTrace } from './engine.js';
import type { RequestFacts } from './facts.js';
import type { Grant } from './grants.js';
import { grantMismatch } from './grants.js';
import type { RateLimit, StructuralValue } from './policy.js';

/** The answer a rule sends: an option id or structural values, never text. */
export interface RuleAnswer {
  option?: string;
  values?: Record<string, StructuralValue>;
}

/** Why a request is left to a person. */
export type AskReason = 'never' | 'forbidden' | 'cannot-deny' | 'ask-rule' | 'no-match';

export type Verdict =
  | {
      action: 'answer';
      tier: 'deny' | 'allow';
      /** The rule id, or the grant id (`grant-…`). */
      rule: string;
      answer: RuleAnswer;
      /** The approval text the `approvalproof` is computed from (never logged). */
      proofText?: string;
      shadow: boolean;
      rateLimit?: RateLimit;
      grant?: boolean;
    }
  | { action: 'ask'; reason: AskReason; rule?: string };

export interface Decision {
  verdict: Verdict;
  trace: RuleTrace[];
  recheckAt?: number;
}

function isForm(f: RequestFacts): boolean {
  return f.kind === 'form' || f.fields.length > 0;
}

/** The answer that refuses this request, or undefined when it has none. */
export function refusingAnswer(f: RequestFacts): RuleAnswer | undefined {
  if (isForm(f)) return { option: FORM_DECLINE_OPTION };
  if (f.options.includes('deny')) return { option: 'deny' };
  const o = f.options.find((id) => optionEffect(id) === 'deny');
  return o !== undefined ? { option: o } : undefined;
}

/** Approval requests (contract C1) are answered other than by refusing only with the exact text. */
export function needsApprovalText(f: RequestFacts): boolean {
  return f.digest !== undefined || f.kind === 'permission';
}

/** Why `values` cannot answer this request, or undefined when they are a structural, complete answer. */
export function valuesMisfit(values: Record<string, StructuralValue>, f: RequestFacts): string | undefined {
  if (!isForm(f)) return 'values answer a form, and this request is not one';
  const byId = new Map(f.fields.map((x) => [x.id, x] as const));
  for (const [id, v] of Object.entries(values)) {
    const field = byId.get(id);
    if (!field) return `the form has no field ${id}`;
    switch (field.type) {
      case 'string':
        return `field ${id} takes text, and a delegate never answers free text`;
      case 'number':
        if (typeof v !== 'number' || !Number.isFinite(v)) return `field ${id} takes a number`;
        if (field.min !== undefined && v < field.min) return `${v} is below the minimum of field ${id}`;
        if (field.max !== undefined && v > field.max) return `${v} is above the maximum of field ${id}`;
        break;
      case 'boolean':
        if (typeof v !== 'boolean') return `field ${id} takes true or false`;
        break;
      case 'select': {
        if (field.multi) {
          if (!Array.isArray(v)) return `field ${id} takes a list of choice ids`;
          if (new Set(v).size !== v.length) return `field ${id}: a choice is listed twice`;
          const bad = v.find((x) => !field.choices.includes(x));
          if (bad !== undefined) return `field ${id} offers no choice ${bad} (a delegate never sends other text)`;
        } else {
          if (typeof v !== 'string') return `field ${id} takes one choice id${typeof v === 'number' ? ' (quote it in YAML)' : ''}`;
          if (!field.choices.includes(v)) return `field ${id} offers no choice ${v} (a delegate never sends other text)`;
        }
        break;
      }
    }
  }
  const missing = f.fields.find((x) => x.required && !Object.prototype.hasOwnProperty.call(values, x.id));
  if (missing) return `required field ${missing.id} is not answered${missing.type === 'string' ? ' (it takes text: a person answers it)' : ''}`;
  return undefined;
}

/** The answer of an allow-tier rule for this request, or why it does not fit. */
function allowAnswer(m: MatchedRule, f: RequestFacts): { answer: RuleAnswer; proofText?: string } | { misfit: string } {
  const d = m.decision;
  if (d.type === 'values') {
    // Values carry no approval proof: an approval request (contract C1) is never answered with them.
    if (needsApprovalText(f)) return { misfit: 'an approval request (approvaldigest or kind permission) is never answered with values' };
    const why = valuesMisfit(d.values, f);
    return why ? { misfit: why } : { answer: { values: d.values } };
  }
  if (d.type !== 'option') return { misfit: 'not an answer' };
  if (!f.options.includes(d.option)) return { misfit: `the request offers no option ${d.option}` };
  if (!needsApprovalText(f)) return { answer: { option: d.option } };
  if (m.approvalText === undefined)
    return { misfit: 'an approval request is answered other than by refusing only with the exact approval text (match.approval_text)' };
  if (f.digest === undefined || approvalDigest(m.approvalText) !== f.digest) return { misfit: "the approval text does not match the request's approvaldigest" };
  return { answer: { option: d.option }, proofText: m.approvalText };
}

/** The deny-tier answer of a rule, or undefined when the request cannot be refused that way. */
function denyAnswer(m: MatchedRule, f: RequestFacts): RuleAnswer | undefined {
  const d = m.decision;
  if (d.type === 'option') {
    if (f.options.includes(d.option)) return { option: d.option };
    if (isForm(f) && (d.option === FORM_DECLINE_OPTION || d.option === FORM_CANCEL_OPTION)) return { option: d.option };
    return undefined;
  }
  return refusingAnswer(f);
}

/** The permissive option a grant answers with: `allow`, else the first option whose id allows. */
export function grantOption(f: RequestFacts): string | undefined {
  if (f.options.includes('allow')) return 'allow';
  return f.options.find((id) => optionEffect(id) === 'allow');
}

/** Decides one request: the engine's matches, then the rules above. */
export function decide(engine: DecisionEngine, grants: readonly Grant[], f: RequestFacts, ctx: EvalContext): Decision {
  if (f.kind === 'auth') {
    return {
      verdict: { action: 'ask', reason: 'never' },
      trace: [{ rule: '(delegate)', tier: 'ask', matched: true, why: 'a delegate never answers kind auth' }],
    };
  }
  const v = engine.evaluate(f, ctx);
  const trace = [...v.trace];
  const done = (verdict: Verdict): Decision => ({ verdict, trace, ...(v.recheckAt !== undefined ? { recheckAt: v.recheckAt } : {}) });
  if (v.forbidden !== undefined) return done({ action: 'ask', reason: 'forbidden', rule: v.forbidden });
  for (const m of v.matches) {
    if (m.tier === 'deny') {
      const answer = denyAnswer(m, f);
      if (!answer) {
        trace.push({ rule: m.id, tier: 'deny', matched: true, why: 'the request has no refusing answer: a person answers it' });
        return done({ action: 'ask', reason: 'cannot-deny', rule: m.id });
      }
      return done({ action: 'answer', tier: 'deny', rule: m.id, answer, shadow: m.shadow, ...(m.rateLimit ? { rateLimit: m.rateLimit } : {}) });
    }
    if (m.tier === 'ask') return done({ action: 'ask', reason: 'ask-rule', rule: m.id });
    const a = allowAnswer(m, f);
    if ('misfit' in a) {
      trace.push({ rule: m.id, tier: 'allow', matched: false, why: `matched, but its decision does not fit: ${a.misfit}` });
      continue;
    }
    return done({
      action: 'answer',
      tier: 'allow',
      rule: m.id,
      answer: a.answer,
      shadow: m.shadow,
      ...(a.proofText !== undefined ? { proofText: a.proofText } : {}),
      ...(m.rateLimit ? { rateLimit: m.rateLimit } : {}),
    });
  }
  for (const g of grants) {
    const why = grantMismatch(g, f, ctx.now);
    if (why !== undefined) {
      trace.push({ rule: g.id, tier: 'allow', matched: false, why: `grant: ${why}` });
      continue;
    }
    const option = grantOption(f);
    if (option === undefined) {
      trace.push({ rule: g.id, tier: 'allow', matched: false, why: 'grant: the request offers no allowing option' });
      continue;
    }
    trace.push({
      rule: g.id,
      tier: 'allow',
      matched: true,
      why: `grant for agent ${g.agent}, tool ${g.tool}, approvaldigest ${g.digest}, until ${new Date(g.expires).toISOString()}`,
    });
    return done({ action: 'answer', tier: 'allow', rule: g.id, answer: { option }, proofText: g.text, shadow: false, grant: true });
  }
  return done({ action: 'ask', reason: 'no-match' });
}
