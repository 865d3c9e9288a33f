// The rule table: one stable id per rule any checker in this project reports (validators, the
// form answer check, attr-match filters, the attention engine). Rule ids never change meaning and
// are never reused. docs/rules.md renders this table; a test keeps both in step (both
// directions), every `x-aep-rule` in schemas/ must name a row here, and FORM_RULES and
// FILTER_RULES are subsets of it.

/** One row of the rule table. */
export interface RuleInfo {
  /** Spec section the rule comes from, e.g. `AEP-0001 §5.2`. */
  section: string;
  /** What the rule requires (one sentence). */
  meaning: string;
}

/** Rule id -> spec section and meaning. Issue `rule` values are always keys of this table. */
export const RULES = {
  // --- single event: envelope (AEP-0001 §5) ---
  'envelope.not-object': { section: 'AEP-0001 §5', meaning: 'an event is one JSON object' },
  'envelope.required': { section: 'AEP-0001 §5.1', meaning: 'aep, id, type, time, source and agent are required' },
  'envelope.aep-version': { section: 'AEP-0001 §5.1', meaning: 'aep is the string "0.1"' },
  'envelope.id': { section: 'AEP-0001 §5.1', meaning: 'id is a non-empty string' },
  'envelope.type-name': {
    section: 'AEP-0001 §6',
    meaning: 'type is {category}.{rest} with a core category, or x.{vendor}.{category}.{rest}; lowercase tokens',
  },
  'envelope.time': { section: 'AEP-0001 §5.1', meaning: 'time is an RFC 3339 date-time with a zone offset or Z' },
  'envelope.source': { section: 'AEP-0001 §5.1', meaning: 'source is a non-empty absolute URI' },
  'envelope.agent': { section: 'AEP-0001 §5.1', meaning: 'agent is a non-empty string' },
  'envelope.identifier': { section: 'AEP-0001 §5.1', meaning: 'subject, session, run, step and cause are non-empty strings when present (never null)' },
  'envelope.seq': { section: 'AEP-0001 §5.1', meaning: 'seq is an integer >= 0' },
  'envelope.epoch': { section: 'AEP-0001 §5.1', meaning: 'epoch is an integer >= 0' },
  'envelope.traceparent': { section: 'AEP-0001 §5.1', meaning: 'traceparent is a W3C traceparent value (00-{32 hex}-{16 hex}-{2 hex})' },
  'envelope.severity': { section: 'AEP-0001 §8.1', meaning: 'severity is one of debug, info, notice, warning, error, critical' },
  'envelope.capture': { section: 'AEP-0001 §8.2', meaning: 'capture is one of none, metadata, redacted, full' },
  'envelope.data-object': { section: 'AEP-0001 §5.1', meaning: 'data is a JSON object when present' },
  'envelope.ext-name': { section: 'AEP-0001 §5.4', meaning: 'every top-level key matches [a-z0-9]{1,20}' },
  'envelope.ext-value': { section: 'AEP-0001 §5.4', meaning: 'an extension attribute value is a string, integer or boolean' },
  'envelope.agent-scoped-forbidden': { section: 'AEP-0001 §5.2', meaning: 'agent-scoped events (agent.*) carry no session, seq, run or step' },
  'envelope.session-required': { section: 'AEP-0001 §5.2', meaning: 'session-scoped and foreign-emitter events carry session' },
  'envelope.seq-required': { section: 'AEP-0001 §5.2', meaning: 'ordinary session-scoped events carry seq' },
  'envelope.seq-forbidden': { section: 'AEP-0001 §5.2, AEP-0004 §2', meaning: 'commands and attention.routed (foreign emitters) carry no seq' },
  'type.unregistered': {
    section: 'AEP-0001 §6, §10',
    meaning: 'an emitter emits only registered core types or x.{vendor}.* types (emitter mode only; consumers tolerate unknown members)',
  },
  // --- single event: payload (AEP-0002 §5) ---
  'payload.required': { section: 'AEP-0002 §5', meaning: 'a required payload member is present' },
  'payload.type': { section: 'AEP-0002 §5', meaning: 'a payload member has its declared JSON type' },
  'payload.enum': { section: 'AEP-0002 §5', meaning: 'a payload member is one of its enum values' },
  'payload.range': { section: 'AEP-0002 §5', meaning: 'a payload number is within its declared minimum/maximum' },
  'payload.format': { section: 'AEP-0002 §5.3', meaning: 'a payload date-time member (expires_at) is RFC 3339' },
  'payload.schema': { section: 'AEP-0002 §5', meaning: 'the payload satisfies its registered schema' },
  'form.select-choices': { section: 'AEP-0002 §5.2 (AEP-0006)', meaning: 'a field_spec of type select has choices' },
  'capture.data-at-none': { section: 'AEP-0001 §8.2', meaning: 'an event with capture none carries no data' },
  'capture.field-above-capture': {
    section: 'AEP-0001 §8.2(a), AEP-0002 §5.1',
    meaning: "no payload member above the event's declared capture (x-aep-capture)",
  },
  'attention.subject-required': { section: 'AEP-0002 §7.1', meaning: 'attention lifecycle events after the request set subject = the request id' },
  'command.subject-required': { section: 'AEP-0004 §5', meaning: 'control.attention.respond sets subject = the attention request id' },
  // --- stream (AEP-0001 §7, AEP-0002 §2/§7, AEP-0004 §3, AEP-0006) ---
  'stream.id-conflict': { section: 'AEP-0001 §7.4', meaning: 'one (source, id) names one event: a repeat must be identical (redelivery)' },
  'stream.seq-regression': { section: 'AEP-0001 §7.2', meaning: 'seq strictly increases within an epoch of a (source, session)' },
  'stream.position-duplicate': { section: 'AEP-0001 §7.2', meaning: 'two distinct events never share one (epoch, seq) of a (source, session)' },
  'stream.epoch-regression': { section: 'AEP-0001 §7.2', meaning: 'epoch never decreases within a (source, session)' },
  'stream.run-terminal-duplicate': {
    section: 'AEP-0002 §2 conv. 5',
    meaning: 'a run reaches at most one terminal (run.finished / run.failed / run.cancelled), across epochs',
  },
  'stream.session-ended-duplicate': { section: 'AEP-0002 §2 conv. 5', meaning: 'at most one distinct session.ended per session' },
  'stream.attention-terminal-duplicate': {
    section: 'AEP-0002 §7.2',
    meaning: 'an attention request is closed by exactly one terminal (attention.resolved or attention.timeout)',
  },
  'stream.attention-open-at-session-end': { section: 'AEP-0002 §7.2', meaning: "pending attention requests are closed before the emitter's session.ended" },
  'stream.ack-conflict': { section: 'AEP-0004 §3', meaning: 'one ack decision per command: acks with the same source and cause are identical' },
  'form.required-missing': { section: 'AEP-0002 §5.3 (AEP-0006)', meaning: 'an answer to a form gives every required field' },
  'form.choice-forged': { section: 'AEP-0002 §5.3 (AEP-0006)', meaning: 'a select without other is answered only with its choices[].id' },
  'capture.values-free-text': {
    section: 'AEP-0002 §5.3 (AEP-0006)',
    meaning: 'at capture metadata, answer.values holds no string-field entry and no other free text',
  },
  // --- form answers, emitter side (validateFormAnswer, validateElicitationContent; AEP-0006 §4 hardening) ---
  'form.values-not-object': { section: 'AEP-0002 §5.3', meaning: '`values` is not a JSON object' },
  'form.type-mismatch': {
    section: 'AEP-0006 (project hardening)',
    meaning: 'the JSON type of an entry does not match its field type (string/number/boolean, or a multi select not given an array)',
  },
  'form.out-of-range': { section: 'AEP-0006 (project hardening)', meaning: 'a number entry is below `min` or above `max`' },
  'form.array-for-single': { section: 'AEP-0006 (project hardening)', meaning: 'an array answers a select without `multi: true`' },
  'form.duplicate-choice': { section: 'AEP-0006 (project hardening)', meaning: 'a multi select array names the same entry twice' },
  'form.unknown-key': { section: 'AEP-0006 (project hardening)', meaning: 'a `values` key matches no `field_spec.id`' },
  'form.not-integer': { section: 'AEP-0006 (field constraints)', meaning: 'a number entry of a field constrained to integers has a fractional part' },
  'form.too-short': { section: 'AEP-0006 (field constraints)', meaning: "a string entry has fewer code points than the field's `minLength`" },
  'form.too-long': { section: 'AEP-0006 (field constraints)', meaning: "a string entry has more code points than the field's `maxLength`" },
  'form.format': { section: 'AEP-0006 (field constraints)', meaning: "a string entry does not match the field's `format` (email, uri, date, date-time)" },
  'form.too-few-choices': { section: 'AEP-0006 (field constraints)', meaning: "a multi select entry names fewer choices than the field's `minItems`" },
  'form.too-many-choices': { section: 'AEP-0006 (field constraints)', meaning: "a multi select entry names more choices than the field's `maxItems`" },
  'mcp-elicitation.schema': {
    section: 'MCP 2025-11-25 elicitation (requestedSchema)',
    meaning: 'content is checked against a requestedSchema that a form can express',
  },
  // --- answers, emitter side (the attention engine: AEP-0004 §5.3, AEP-0008 §1, contract C1) ---
  'control.respond.unknown-request': { section: 'AEP-0004 §5.3', meaning: 'the command `subject` names a pending attention request of this emitter' },
  'control.respond.wrong-session': { section: 'AEP-0004 §2', meaning: 'the command names the session of the request it answers' },
  'control.respond.answer-shape': {
    section: 'AEP-0002 §5.3',
    meaning:
      '`answer` is an object whose `option` and `text` are strings and `values` an object, carrying what the request takes (a form: values, or decline/cancel)',
  },
  'control.respond.unknown-option': {
    section: 'AEP-0002 §5.3',
    meaning: "`answer.option` is one of the request's options (on a form: a declared option, `decline` or `cancel`)",
  },
  'control.respond.unmatched-text': {
    section: 'AEP-0008 §1',
    meaning: 'a text-only answer names one option by id or unique label (unmatched text never grants)',
  },
  'control.cancel.scope': { section: 'AEP-0004 §5', meaning: '`control.cancel` carries `data.scope` "run" or "session"' },
  'control.cancel.reason': { section: 'AEP-0004 §5', meaning: '`data.reason` of a `control.cancel` is a string when present' },
  'control.cancel.run': { section: 'AEP-0004 §5', meaning: 'a run-scoped `control.cancel` names its run in the envelope `run`' },
  'control.cancel.unknown-run': { section: 'AEP-0004 §5', meaning: 'a run-scoped `control.cancel` names a run the target has (running)' },
  'control.cancel.wrong-session': { section: 'AEP-0004 §2', meaning: 'a `control.cancel` names a session the target owns' },
  'control.respond.values-not-form': { section: 'AEP-0006 §3', meaning: '`answer.values` answers only a `kind: "form"` request' },
  'control.respond.validate-failed': {
    section: 'AEP-0004 §5.3',
    meaning: 'the emitter can translate the answer for its agent (its translation hook did not fail)',
  },
  'control.respond.approval-proof': {
    section: 'AEP-0004 §5.3 (contract C1)',
    meaning: 'an allowing answer to a request with an approval text carries the `approvalproof` of that complete text',
  },
  // --- attr-match filters (compileFilter, FILTER_RULES in filter.ts) ---
  'invalid-filter.not-object': { section: 'AEP-0003 §6.2', meaning: 'the filter is not a JSON object' },
  'invalid-filter.forbidden-key': {
    section: 'AEP-0003 §6.2',
    meaning: 'the key is a non-filterable core attribute (`time`, `seq`, `aep`, `traceparent`, `data`)',
  },
  'invalid-filter.unknown-key': {
    section: 'AEP-0003 §6.2',
    meaning: 'the key is neither a filterable core attribute nor a legal extension name `^[a-z0-9]{1,20}$`',
  },
  'invalid-filter.bare-star': { section: 'AEP-0003 §6.2', meaning: 'a bare `*` (not a pattern)' },
  'invalid-filter.wildcard': { section: 'AEP-0003 §6.2', meaning: 'a `*` outside a trailing `.*` of a `type` pattern' },
  'invalid-filter.severity-comparison': {
    section: 'AEP-0003 §6.2',
    meaning: 'a severity comparison object that is empty, has members other than `gte`/`lte`, or names an unknown level',
  },
  'invalid-filter.empty-array': { section: 'AEP-0003 §6.2', meaning: 'an empty inclusion array' },
  'invalid-filter.bad-value': {
    section: 'AEP-0003 §6.2',
    meaning: 'a predicate value (or array element) that is null, a non-integer number, an object (other than the severity comparison) or a nested array',
  },
  // --- JSONL framing (checked by `aep validate`, AEP-0003 §3.1) ---
  'jsonl.not-json': { section: 'AEP-0003 §3.1', meaning: 'each line is one JSON value (UTF-8 JSON text)' },
  'jsonl.blank-line': { section: 'AEP-0003 §3.1', meaning: 'an emitter writes no blank lines (emitter mode only; consumers skip them)' },
} as const satisfies Record<string, RuleInfo>;

/** A rule id of the table. */
export type RuleId = keyof typeof RULES;

/** Builds an Issue for `rule`, citing its section. */
export function issue(rule: RuleId, path: string, message: string): { rule: RuleId; path: string; message: string; section: string } {
  return { rule, path, message, section: RULES[rule].section };
}
