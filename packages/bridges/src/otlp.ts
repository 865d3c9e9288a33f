// OpenTelemetry export: AEP events as OTLP LogRecords in the Events model (AEP-0005 §3; AEP-0005
// §3). Two layers, as OpenTelemetry itself splits them: `toOtlpLogRecord` is the pinned
// projection (proto field names, plain JSON values: what the conformance pins compare), and
// `otlpJsonLogRecord` / `otlpExportRequest` encode it in the OTLP/HTTP JSON encoding
// (lowerCamelCase, AnyValue wrapping, int64 as decimal strings, hex trace ids) for `/v1/logs`.
import { CAPTURE_LEVELS, SEVERITY_OTLP } from '@aep/protocol';
import type { CaptureLevel } from '@aep/protocol';
import { CE_TYPE_PREFIX } from './ce.js';
import { survivingPayload } from './capture.js';
import { readEnvelope } from './envelope.js';
import { diag, fail, setOwn } from './result.js';
import type { BridgeDiagnostic, BridgeResult } from './result.js';
import { unixNanoString } from './time.js';

/** Options of {@link toOtlpLogRecord}. */
export interface OtlpOptions {
  /** Exporter capture ceiling (AEP-0005 §3.3); default `metadata`. */
  maxCapture?: CaptureLevel;
  /** Resource `service.name`; default the event's `agent` (overridable for shared relays, §3.2). */
  serviceName?: string;
}

/** A JSON value as it appears in a record. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [k: string]: JsonValue };

/** The pinned projection of one event (proto field names, plain JSON values). */
export interface OtlpLogRecord {
  /** Resource attributes; `service.name` always. */
  resource: { 'service.name': string };
  /** Epoch nanoseconds as a decimal string (exact; a JSON number cannot hold them). `"0"` = unknown. */
  time_unix_nano: string;
  /** `"dev.aep." + type`: the same exported identity as CloudEvents. */
  event_name: string;
  severity_text: string;
  severity_number: number;
  /** From `traceparent`: 32 lowercase hex. */
  trace_id?: string;
  /** From `traceparent`: 16 lowercase hex. */
  span_id?: string;
  /** From `traceparent`: the trace flags as an integer. */
  flags?: number;
  /** `aep.*` envelope attributes, then the hoisted `gen_ai.*` payload members. */
  attributes: Record<string, JsonValue>;
  /** The rest of the surviving payload, wholesale; absent when nothing remains. */
  body?: Record<string, JsonValue>;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** Envelope attribute → LogRecord attribute, in the order of the pinned example (§3.2). */
const OPTIONAL_ATTRS: readonly (readonly [string, string])[] = [
  ['session', 'aep.session_id'],
  ['run', 'aep.run_id'],
  ['step', 'aep.step'],
  ['seq', 'aep.sequence'],
  ['epoch', 'aep.epoch'],
  ['cause', 'aep.causation_id'],
  ['subject', 'aep.subject'],
];

/** Checks a `maxCapture` option; `undefined` = the default `metadata`. */
export function checkMaxCapture(v: unknown): BridgeResult<CaptureLevel> {
  if (v === undefined) return { ok: true, value: 'metadata', diagnostics: [] };
  if (typeof v === 'string' && (CAPTURE_LEVELS as readonly string[]).includes(v)) return { ok: true, value: v as CaptureLevel, diagnostics: [] };
  return fail('AEP_BRIDGE_OPTION', 'option.max-capture', 'max_capture is not one of none, metadata, redacted, full', 'max_capture');
}

/**
 * One AEP event → one OTLP LogRecord (AEP-0005 §3.2), pinned shape. `aep.capture` is always
 * present and keeps the event's own value (default `metadata`); when the event's capture is
 * above `maxCapture` (default `metadata`) the payload is dropped wholesale — no `body`, no
 * hoisted `gen_ai.*` (AEP-0005 §3.3 [pin]). Otherwise top-level `data` members named `gen_ai.*`
 * become attributes verbatim and the rest is the `body`, omitted when empty.
 */
export function toOtlpLogRecord(event: unknown, options: OtlpOptions = {}): BridgeResult<OtlpLogRecord> {
  const max = checkMaxCapture(options.maxCapture);
  if (!max.ok) return max;
  const env = readEnvelope(event);
  if (!env.ok) return env;
  const f = env.value;
  const e = f.event;
  const diagnostics: BridgeDiagnostic[] = [];
  let time = unixNanoString(f.instant);
  if (time === null) {
    diagnostics.push(diag('otlp.time-range', 'time', 'the time is outside the uint64 nanosecond range: time_unix_nano "0"'));
    time = '0';
  }
  const sev = SEVERITY_OTLP[f.severity]!;
  const attributes: Record<string, JsonValue> = {
    'aep.agent_id': f.agent,
    'aep.event_id': f.id,
    'aep.capture': f.capture,
    'aep.source': f.source,
  };
  for (const [a, o] of OPTIONAL_ATTRS) {
    const v = e[a];
    if (v !== undefined) attributes[o] = v as JsonValue;
  }
  const rec: OtlpLogRecord = {
    resource: { 'service.name': options.serviceName ?? f.agent },
    time_unix_nano: time,
    event_name: CE_TYPE_PREFIX + f.type,
    severity_text: sev.severity_text,
    severity_number: sev.severity_number,
    attributes,
  };
  const tp = e['traceparent'];
  if (tp !== undefined) {
    const m = typeof tp === 'string' ? TRACEPARENT.exec(tp) : null;
    if (m) {
      rec.trace_id = m[2]!;
      rec.span_id = m[3]!;
      rec.flags = parseInt(m[4]!, 16);
    } else {
      diagnostics.push(diag('otlp.traceparent', 'traceparent', 'traceparent is not a W3C traceparent: no trace_id, span_id, flags'));
    }
  }
  const data = survivingPayload(e, f.capture, max.value, diagnostics);
  if (data !== undefined) {
    const keys = Object.keys(data);
    let hoist = 0;
    for (const k of keys) if (k.startsWith('gen_ai.')) hoist++;
    if (hoist === 0) {
      // Nothing to hoist: the body is the payload itself (shared, never mutated).
      if (keys.length > 0) rec.body = data as Record<string, JsonValue>;
    } else {
      let body: Record<string, JsonValue> | undefined;
      for (const k of keys) {
        const v = data[k] as JsonValue;
        if (k.startsWith('gen_ai.')) setOwn(attributes, k, v);
        else setOwn((body ??= {}), k, v);
      }
      if (body !== undefined) rec.body = body;
    }
  }
  return { ok: true, value: rec, diagnostics };
}

// ------------------------------------------------------------------ OTLP/HTTP JSON encoding

/** An OTLP `AnyValue` in the JSON encoding (exactly one member; `{}` = empty/null). */
export type OtlpAnyValue =
  | { stringValue: string }
  | { boolValue: boolean }
  | { intValue: string }
  | { doubleValue: number }
  | { arrayValue: { values: OtlpAnyValue[] } }
  | { kvlistValue: { values: OtlpKeyValue[] } }
  | Record<string, never>;

/** An OTLP `KeyValue`. */
export interface OtlpKeyValue {
  key: string;
  value: OtlpAnyValue;
}

/** A LogRecord in the OTLP/HTTP JSON encoding. */
export interface OtlpJsonLogRecord {
  timeUnixNano: string;
  severityNumber: number;
  severityText: string;
  eventName: string;
  body?: OtlpAnyValue;
  attributes: OtlpKeyValue[];
  traceId?: string;
  spanId?: string;
  flags?: number;
}

/** `ExportLogsServiceRequest` in the OTLP/HTTP JSON encoding. */
export interface OtlpExportLogsRequest {
  resourceLogs: {
    resource: { attributes: OtlpKeyValue[] };
    scopeLogs: { scope: { name: string; version: string }; logRecords: OtlpJsonLogRecord[] }[];
  }[];
}

/** 2^63 exactly (the int64 bound). */
const TWO_63 = 2 ** 63;

/** The instrumentation scope the bridge reports. */
export const OTLP_SCOPE = { name: '@aep/bridges', version: '0.1.0' } as const;

/**
 * A JSON value as an OTLP AnyValue: strings `stringValue`, booleans `boolValue`, integers
 * `intValue` (int64 as a decimal string, as the OTLP JSON encoding writes 64-bit integers),
 * other numbers `doubleValue`, arrays `arrayValue`, objects `kvlistValue`, `null` the empty value.
 */
export function otlpAnyValue(v: unknown): OtlpAnyValue {
  switch (typeof v) {
    case 'string':
      return { stringValue: v };
    case 'boolean':
      return { boolValue: v };
    case 'number':
      // Integers within int64 as intValue; everything else (fractions, |v| >= 2^63) as a double.
      if (Number.isSafeInteger(v)) return { intValue: String(v === 0 ? 0 : v) }; // exact digits, no exponent
      if (Number.isInteger(v) && Math.abs(v) < TWO_63) return { intValue: BigInt(v).toString() };
      return { doubleValue: v };
    case 'object':
      if (v === null) return {};
      if (Array.isArray(v)) return { arrayValue: { values: v.map(otlpAnyValue) } };
      return { kvlistValue: { values: otlpKeyValues(v as Record<string, unknown>) } };
    default:
      return {};
  }
}

/** An attribute map as OTLP `KeyValue`s, in member order. */
export function otlpKeyValues(o: Record<string, unknown>): OtlpKeyValue[] {
  return Object.keys(o).map((key) => ({ key, value: otlpAnyValue(o[key]) }));
}

/** One pinned record in the OTLP/HTTP JSON encoding (the resource travels separately). */
export function otlpJsonLogRecord(r: OtlpLogRecord): OtlpJsonLogRecord {
  const out: OtlpJsonLogRecord = {
    timeUnixNano: r.time_unix_nano,
    severityNumber: r.severity_number,
    severityText: r.severity_text,
    eventName: r.event_name,
    attributes: otlpKeyValues(r.attributes),
  };
  if (r.body !== undefined) out.body = otlpAnyValue(r.body);
  if (r.trace_id !== undefined) out.traceId = r.trace_id;
  if (r.span_id !== undefined) out.spanId = r.span_id;
  if (r.flags !== undefined) out.flags = r.flags;
  return out;
}

/**
 * An `ExportLogsServiceRequest` for `POST /v1/logs` (OTLP/HTTP, `application/json`): records
 * grouped by resource (`service.name`), in their order, one scope (`@aep/bridges`).
 */
export function otlpExportRequest(records: readonly OtlpLogRecord[]): OtlpExportLogsRequest {
  const byService = new Map<string, OtlpJsonLogRecord[]>();
  for (const r of records) {
    const name = r.resource['service.name'];
    let list = byService.get(name);
    if (!list) byService.set(name, (list = []));
    list.push(otlpJsonLogRecord(r));
  }
  return {
    resourceLogs: [...byService].map(([name, logRecords]) => ({
      resource: { attributes: [{ key: 'service.name', value: { stringValue: name } }] },
      scopeLogs: [{ scope: { ...OTLP_SCOPE }, logRecords }],
    })),
  };
}
