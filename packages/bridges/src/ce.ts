// CloudEvents 1.0 bridge, JSON format, structured mode only (AEP-0005 §1, §2; AEP-0005 §1-2).
// Written by hand on purpose (issue 15): the `cloudevents` SDK rewrites `time` and throws on a
// whole event for one illegal extension, while B2 wants `time` verbatim and §2 wants the rest
// of the event mapped when one attribute is dropped.
import { CORE_ATTRIBUTES } from '@aep/protocol';
import { diag, fail, isPlainObject, setOwn } from './result.js';
import type { BridgeDiagnostic, BridgeResult } from './result.js';

/** The reverse-DNS root added to every AEP type at the bridge (B3; AEP-0001 §6). */
export const CE_TYPE_PREFIX = 'dev.aep.';

/** CloudEvents `specversion` (B1). */
export const CE_SPECVERSION = '1.0';

/** Media type of a structured-mode CloudEvent in the JSON format (CE HTTP binding §3.2). */
export const CE_STRUCTURED_MEDIA_TYPE = 'application/cloudevents+json';

/** Media type of a batch of CloudEvents in the JSON format (CE HTTP binding §3.3). */
export const CE_BATCH_MEDIA_TYPE = 'application/cloudevents-batch+json';

/**
 * The B4/B5 attribute table, AEP name → CE name, in the order the pinned example writes them
 * (AEP-0005 §1). `traceparent` keeps its name: it is the CE Distributed Tracing extension.
 */
export const CE_ATTRIBUTE_MAP: readonly (readonly [aep: string, ce: string])[] = [
  ['aep', 'aepversion'],
  ['agent', 'aepagentid'],
  ['session', 'aepsessionid'],
  ['run', 'aeprunid'],
  ['step', 'aepstep'],
  ['seq', 'aepsequence'],
  ['epoch', 'aepepoch'],
  ['cause', 'aepcausationid'],
  ['severity', 'aepseverity'],
  ['capture', 'aepcapture'],
  ['traceparent', 'traceparent'],
];

/** B2 pass-through members, copied verbatim both ways (`data` last: it goes after the extensions). */
const PASS_THROUGH = ['id', 'source', 'subject', 'time'] as const;

/** CE attributes the inverse handles itself (dropped, stripped, reversed or copied): one lookup per key. */
const HANDLED: ReadonlySet<string> = new Set(['specversion', 'datacontenttype', 'type', 'data', ...PASS_THROUGH, ...CE_ATTRIBUTE_MAP.map(([, c]) => c)]);

/**
 * CE attribute names the mapping writes or that CloudEvents itself defines with a meaning the
 * AEP envelope has no member for. An AEP extension attribute with one of these names cannot
 * pass "verbatim under its own name" (B4) without clashing, and a CE attribute of that name on
 * the way in has no AEP counterpart: both directions drop it with a diagnostic (`ce.reserved-name`).
 */
export const CE_RESERVED_NAMES: ReadonlySet<string> = new Set([
  'specversion',
  'datacontenttype',
  'dataschema',
  ...CE_ATTRIBUTE_MAP.map(([, c]) => c).filter((c) => c !== 'traceparent'),
]);

const CORE = new Set<string>(CORE_ATTRIBUTES);
const NAME = /^[a-z0-9]{1,20}$/;

/** A structured-mode CloudEvent in the JSON format (attribute values as JSON). */
export type CloudEvent = Record<string, unknown> & { specversion: string; id: string; source: string; type: string };

/** An AEP event as a plain JSON object. */
export type AepEventObject = Record<string, unknown>;

/**
 * Value an AEP extension may hold: string, integer or boolean (AEP-0001 §5.4). CloudEvents'
 * Integer is 32-bit (CE 1.0 §3.1.2); an AEP integer outside that range is still passed verbatim,
 * so the inverse stays exact (docs/decisions.md "Bridges").
 */
function isScalar(v: unknown): boolean {
  return typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isInteger(v));
}

/**
 * AEP → CloudEvents (AEP-0005 §1): B1 constants (`datacontenttype` only with `data`), B2
 * members verbatim, B3 `type = "dev.aep." + type`, B4 table, B5 `traceparent`; AEP extension
 * attributes under their own names. Absent attributes give no CE attribute (no defaults). An
 * extension that CE cannot carry (illegal name, non-scalar value, reserved name) is dropped with
 * a diagnostic and the rest still maps. The input is not otherwise validated (use
 * `validateEnvelope`); it is never mutated.
 */
export function encodeCloudEvent(event: unknown): BridgeResult<CloudEvent> {
  if (!isPlainObject(event)) return fail('AEP_BRIDGE_EVENT_INVALID', 'event.not-object', 'the input is not a JSON object');
  const type = event['type'];
  if (typeof type !== 'string' || type === '') return fail('AEP_BRIDGE_EVENT_INVALID', 'event.required', 'type is missing or not a non-empty string', 'type');
  const diagnostics: BridgeDiagnostic[] = [];
  const ce: Record<string, unknown> = { specversion: CE_SPECVERSION };
  const id = event['id'];
  if (id !== undefined) ce['id'] = id;
  const source = event['source'];
  if (source !== undefined) ce['source'] = source;
  ce['type'] = CE_TYPE_PREFIX + type;
  const subject = event['subject'];
  if (subject !== undefined) ce['subject'] = subject;
  const time = event['time'];
  if (time !== undefined) ce['time'] = time;
  const data = event['data'];
  if (data !== undefined) ce['datacontenttype'] = 'application/json';
  for (const [a, c] of CE_ATTRIBUTE_MAP) {
    const v = event[a];
    if (v !== undefined) ce[c] = v;
  }
  for (const k of Object.keys(event)) {
    if (CORE.has(k)) continue;
    const v = event[k];
    if (!NAME.test(k)) {
      diagnostics.push(diag('ce.illegal-name', k, 'an extension attribute whose name is not [a-z0-9]{1,20} cannot be a CloudEvents attribute: dropped'));
      continue;
    }
    if (CE_RESERVED_NAMES.has(k)) {
      diagnostics.push(diag('ce.reserved-name', k, `the extension attribute ${k} is named like an attribute the CloudEvents mapping writes: dropped`));
      continue;
    }
    if (!isScalar(v)) {
      diagnostics.push(diag('ce.extension-value', k, `the extension attribute ${k} is not a string, integer or boolean: dropped`));
      continue;
    }
    ce[k] = v;
  }
  if (data !== undefined) ce['data'] = data;
  return { ok: true, value: ce as CloudEvent, diagnostics };
}

/** True for `application/json`, `text/json` and any `+json` structured suffix, parameters ignored. */
function isJsonMediaType(v: string): boolean {
  if (v === 'application/json') return true;
  const base = v.split(';', 1)[0]!.trim().toLowerCase();
  return base === 'application/json' || base === 'text/json' || /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+\+json$/.test(base);
}

/**
 * CloudEvents → AEP (AEP-0005 §2): only `dev.aep.*` types are in scope (any other type gives
 * `value: null`, "no event", with a `ce.foreign-type` diagnostic: lifting foreign events is an
 * adapter's job). Drops `specversion`/`datacontenttype`, strips the prefix, reverses the table
 * and copies the B2 members, so `decode(encode(e))` equals `e` modulo member order. Other
 * attributes: a legal AEP extension name (`[a-z0-9]{1,20}`, not a core AEP name) with a scalar
 * value is preserved (`aepfuture` from a newer minor, or any other extension); an illegal name,
 * a name spelled like a core AEP attribute, a reserved name or a non-scalar value is dropped
 * with a diagnostic, and never sets or overwrites a core attribute. The result is not validated
 * against the AEP envelope schema (use `validateEnvelope`).
 */
export function decodeCloudEvent(ce: unknown): BridgeResult<AepEventObject | null> {
  if (!isPlainObject(ce)) return fail('AEP_BRIDGE_CE_INVALID', 'ce.not-object', 'the input is not a JSON object');
  if (ce['specversion'] !== CE_SPECVERSION) return fail('AEP_BRIDGE_CE_INVALID', 'ce.specversion', 'specversion is missing or not "1.0"', 'specversion');
  for (const k of ['id', 'source', 'type'] as const) {
    const v = ce[k];
    if (typeof v !== 'string' || v === '') return fail('AEP_BRIDGE_CE_INVALID', 'ce.required', `${k} is missing or not a non-empty string`, k);
  }
  const type = ce['type'] as string;
  if (!type.startsWith(CE_TYPE_PREFIX)) {
    return {
      ok: true,
      value: null,
      diagnostics: [diag('ce.foreign-type', 'type', 'the type does not start with dev.aep.: out of scope for the bridge, no event')],
    };
  }
  if (Object.prototype.hasOwnProperty.call(ce, 'data_base64'))
    return fail('AEP_BRIDGE_CE_INVALID', 'ce.data-base64', 'the event carries data_base64', 'data_base64');
  const dct = ce['datacontenttype'];
  if (dct !== undefined && (typeof dct !== 'string' || !isJsonMediaType(dct)))
    return fail('AEP_BRIDGE_CE_INVALID', 'ce.datacontenttype', 'datacontenttype is not a JSON media type', 'datacontenttype');
  const data = ce['data'];
  if (data !== undefined && !isPlainObject(data)) return fail('AEP_BRIDGE_CE_INVALID', 'ce.data-not-object', 'data is not a JSON object', 'data');

  const diagnostics: BridgeDiagnostic[] = [];
  const e: AepEventObject = {};
  // Core attributes first: from the table and B2 only, so nothing below can set one.
  const aep = ce['aepversion'];
  if (aep !== undefined) e['aep'] = aep;
  e['id'] = ce['id'];
  e['type'] = type.slice(CE_TYPE_PREFIX.length);
  for (const k of PASS_THROUGH) {
    if (k === 'id') continue;
    const v = ce[k];
    if (v !== undefined) e[k] = v;
  }
  for (const [a, c] of CE_ATTRIBUTE_MAP) {
    if (a === 'aep') continue;
    const v = ce[c];
    if (v !== undefined) e[a] = v;
  }
  for (const k of Object.keys(ce)) {
    if (HANDLED.has(k)) continue;
    const v = ce[k];
    if (!NAME.test(k)) {
      diagnostics.push(diag('ce.illegal-name', k, 'not a legal AEP extension name ([a-z0-9]{1,20}): dropped, the rest still maps'));
      continue;
    }
    if (CORE.has(k)) {
      diagnostics.push(
        diag(
          'ce.core-collision',
          k,
          `a CloudEvents extension spelled like the core AEP attribute ${k} is not a legal extension name: dropped, the core attribute comes from the mapping only`,
        ),
      );
      continue;
    }
    if (CE_RESERVED_NAMES.has(k)) {
      diagnostics.push(diag('ce.reserved-name', k, `${k} has no AEP counterpart: dropped`));
      continue;
    }
    if (!isScalar(v)) {
      diagnostics.push(diag('ce.extension-value', k, `the extension ${k} is not a string, integer or boolean: dropped`));
      continue;
    }
    setOwn(e, k, v);
  }
  if (data !== undefined) e['data'] = data;
  return { ok: true, value: e, diagnostics };
}
