// Results, issues and diagnostics of the bridge mappings (AEP-0005). Mappings never throw on
// their input: an unusable input gives an issue (stable code + rule id + message naming the
// rule), a usable one a value plus the diagnostics of what was dropped on the way (AEP-0005 §2:
// "dropped with a diagnostic; the rest still maps").

/** Stable error codes of the mappings (docs/errors.md, "Bridges"). */
export type BridgeErrorCode = 'AEP_BRIDGE_EVENT_INVALID' | 'AEP_BRIDGE_CE_INVALID' | 'AEP_BRIDGE_OPTION';

/** Why an input could not be mapped at all. */
export interface BridgeIssue {
  code: BridgeErrorCode;
  /** Rule id from {@link BRIDGE_RULES}. */
  rule: BridgeRuleId;
  /** Names the rule and the section behind it; never quotes attribute values (they may be content). */
  message: string;
  /** The attribute concerned, when there is one. */
  attribute?: string;
}

/** Something dropped or not asserted while the rest still mapped. */
export interface BridgeDiagnostic {
  rule: BridgeRuleId;
  /** The attribute (or `data` member) concerned. */
  attribute: string;
  message: string;
}

/** Outcome of one mapping: a value (possibly `null` = "no record", by design) or an issue. */
export type BridgeResult<T> = { ok: true; value: T; diagnostics: BridgeDiagnostic[] } | { ok: false; issue: BridgeIssue };

/** Rule vocabulary of the bridges: section of AEP-0005 or of the source spec, and meaning. */
export const BRIDGE_RULES = {
  'event.not-object': { section: 'AEP-0001 §5', meaning: 'an AEP event is a JSON object' },
  'event.required': { section: 'AEP-0001 §5.1', meaning: 'id, type, time, source and agent are non-empty strings' },
  'event.time': {
    section: 'AEP-0001 §5.1; AEP-0005 §3.2',
    meaning: 'time is an RFC 3339 date-time with a zone offset (the bridges derive epoch times from it)',
  },
  'event.severity': { section: 'AEP-0001 §8.1', meaning: 'severity is one of debug, info, notice, warning, error, critical' },
  'event.capture': { section: 'AEP-0001 §8.2', meaning: 'capture is one of none, metadata, redacted, full' },
  'event.data': { section: 'AEP-0001 §5.1', meaning: 'data, when present, is a JSON object' },
  'ce.not-object': { section: 'CloudEvents 1.0 JSON format §3', meaning: 'a structured-mode CloudEvent is a JSON object' },
  'ce.specversion': { section: 'CloudEvents 1.0 §3.1.1', meaning: 'specversion is "1.0"' },
  'ce.required': { section: 'CloudEvents 1.0 §3.1.1', meaning: 'id, source and type are non-empty strings' },
  'ce.data-base64': { section: 'AEP-0005 §2; AEP-0001 §5.1', meaning: 'binary data (data_base64) has no AEP form: AEP data is a JSON object' },
  'ce.data-not-object': { section: 'AEP-0005 §2; AEP-0001 §5.1', meaning: 'data of an AEP-typed CloudEvent is a JSON object' },
  'ce.datacontenttype': { section: 'AEP-0005 §1 B1', meaning: 'datacontenttype of an AEP-typed CloudEvent is a JSON media type' },
  'ce.foreign-type': { section: 'AEP-0005 §2', meaning: 'only CloudEvents whose type starts with dev.aep. are in scope; others give no event' },
  'ce.illegal-name': { section: 'AEP-0005 §2; AEP-0001 §5.4', meaning: 'an attribute name that is not [a-z0-9]{1,20} is dropped, the rest still maps' },
  'ce.core-collision': {
    section: 'AEP-0005 §2; AEP-0001 §5.4',
    meaning: 'a CloudEvents extension spelled like a core AEP attribute is dropped; it never sets or overwrites the core attribute',
  },
  'ce.reserved-name': {
    section: 'AEP-0005 §1 B1/B4 (project choice)',
    meaning:
      'an attribute named like one the mapping itself writes (specversion, datacontenttype, dataschema, the aep* table) is dropped: carrying it would make the inverse ambiguous',
  },
  'ce.extension-value': {
    section: 'AEP-0001 §5.4; CloudEvents 1.0 §3.1.2',
    meaning: 'an extension value is a string, an integer or a boolean; others are dropped',
  },
  'capture.above-max': { section: 'AEP-0005 §3.3, §4.4 [pin]', meaning: 'an event whose capture is above max_capture exports no payload (dropped wholesale)' },
  'capture.dishonest': {
    section: 'AEP-0001 §8.2(a); AEP-0002 §5.1',
    meaning: "a payload member annotated above the event's declared capture: the payload is dropped wholesale (fail closed)",
  },
  'otlp.traceparent': {
    section: 'AEP-0005 §3.2; W3C Trace Context',
    meaning: 'a traceparent that is not 00-<32 hex>-<16 hex>-<2 hex> gives no trace_id/span_id/flags',
  },
  'option.max-capture': { section: 'AEP-0005 §3.3, §4.4', meaning: 'max_capture is one of none, metadata, redacted, full' },
  'otlp.time-range': {
    section: 'AEP-0005 §3.2; OTLP time_unix_nano (fixed64)',
    meaning: 'a time before 1970 or after 2554 cannot be a uint64 of nanoseconds: time_unix_nano is "0" (unknown)',
  },
} as const;

/** A rule id of {@link BRIDGE_RULES}. */
export type BridgeRuleId = keyof typeof BRIDGE_RULES;

/** Builds a failed result. */
export function fail<T>(code: BridgeErrorCode, rule: BridgeRuleId, message: string, attribute?: string): BridgeResult<T> {
  const issue: BridgeIssue = { code, rule, message: `${rule}: ${message} (${BRIDGE_RULES[rule].section})` };
  if (attribute !== undefined) issue.attribute = attribute;
  return { ok: false, issue };
}

/** Builds a diagnostic. */
export function diag(rule: BridgeRuleId, attribute: string, message: string): BridgeDiagnostic {
  return { rule, attribute, message: `${rule}: ${message} (${BRIDGE_RULES[rule].section})` };
}

/** A plain JSON object (not null, not an array). */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

// The mappings read fixed attribute names directly (`e['session']`): none of them is a member of
// Object.prototype, so a JSON object without the member reads `undefined`. Dynamic names (member
// keys of `data`, extension names, types as lookup keys) are written with `setOwn` and looked up
// with hasOwnProperty, so `__proto__` or `constructor` stay plain data.

/** Own-property write that is safe for any key, `__proto__` included. */
export function setOwn(o: Record<string, unknown>, k: string, v: unknown): void {
  if (k === '__proto__') Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  else o[k] = v;
}
