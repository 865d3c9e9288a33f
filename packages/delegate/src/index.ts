// Public API of @aep/delegate: policy delegates (issue 18). Named exports only.
export { loadPolicyFile } from './policy-file.js';
export { parsePolicy, policyHash, tierOf, RULE_ID_PATTERN, GRANT_ID_PREFIX, POLICY_DEFAULTS, POLICY_LIMITS } from './policy.js';
export type { Policy, Rule, RuleMatch, RuleDecision, FieldMatch, StructuralValue, Tier, RateLimit, ParsePolicyOptions } from './policy.js';
export { requestFacts, answerableByControl } from './facts.js';
export type { RequestFacts, FieldFacts, RequestKind } from './facts.js';
export type { DecisionEngine, EngineVerdict, EvalContext, MatchedRule, RuleTrace } from './engine.js';
export { BuiltinEngine, matchRule } from './builtin.js';
export { CedarEngine, createCedarEngine } from './cedar.js';
export { decide, refusingAnswer, needsApprovalText, valuesMisfit, grantOption } from './decide.js';
export type { Decision, Verdict, RuleAnswer, AskReason } from './decide.js';
export { GrantStore, grantFromCommand, grantMatches, grantMismatch, grantSummary } from './grants.js';
export type { Grant, GrantSummary } from './grants.js';
export { DecisionLog, readRecords, explain, factsRecord } from './log.js';
export type { DecisionRecord, ResultRecord, LogRecord, Outcome } from './log.js';
export { parseDuration, formatDuration } from './duration.js';
export { localClock, pendingMs } from './clock.js';
export { DelegateError, DELEGATE_ERRORS } from './errors.js';
export type { DelegateErrorCode } from './errors.js';
export {
  startDelegate,
  createEngine,
  defaultStateDir,
  DELEGATE_AGENT,
  DELEGATE_SESSION,
  DELEGATE_ACCEPTS,
  GRANT_COMMAND,
  REVOKE_COMMAND,
  GRANTED_EVENT,
  REVOKED_EVENT,
  SNAPSHOT_EVENT,
} from './delegate.js';
export type { DelegateOptions, DelegateHandle, DelegateStats } from './delegate.js';
export { PolicyFold, delegatesInRoster, grantDataFor } from './view.js';
