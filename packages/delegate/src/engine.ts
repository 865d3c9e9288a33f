// The decision interface both engines implement (issue 18 item 5): an engine tells which rules
// match a request, in the order they are to be tried (deny rules, then ask rules, then allow
// rules, each in file order), with a trace of why each did or did not. What is then sent, and
// every safety rule (contract C1, structural values only, never `kind:"auth"`), is decided once,
// for every engine, in decide.ts.
import type { RequestFacts } from './facts.js';
import type { RateLimit, RuleDecision, Tier } from './policy.js';

/** A rule (or Cedar policy) that matched. */
export interface MatchedRule {
  id: string;
  tier: Tier;
  decision: RuleDecision;
  approvalText?: string;
  shadow: boolean;
  rateLimit?: RateLimit;
}

/** One line of the "why" of a decision: a rule, whether it matched, and the reason. */
export interface RuleTrace {
  rule: string;
  tier: Tier | 'forbid';
  matched: boolean;
  /** Structural explanation ("tool Bash matches Bash; digest matches approval_text"). */
  why: string;
}

/** What an engine found for one request. */
export interface EngineVerdict {
  /** Matching rules in the order they are to be tried. */
  matches: MatchedRule[];
  /** A Cedar `forbid` held: the delegate answers nothing (the request goes to a person). */
  forbidden?: string;
  trace: RuleTrace[];
  /** When a time condition (pending, time of day) may change the verdict: evaluate again then. */
  recheckAt?: number;
}

/** Time context of an evaluation. */
export interface EvalContext {
  now: number;
  timezone: string;
  /** When the delegate first saw the request (the pending clock when the request `time` is unusable). */
  firstSeen: number;
}

/** A decision engine: the built-in rule language (default) or Cedar. */
export interface DecisionEngine {
  readonly name: 'builtin' | 'cedar';
  evaluate(facts: RequestFacts, ctx: EvalContext): EngineVerdict;
}
