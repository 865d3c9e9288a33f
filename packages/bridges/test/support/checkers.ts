// Independent checkers of the wire formats the bridges produce, used by the conformance runner,
// the unit tests and the live receivers the tests start. Written from the format specs, not from
// our encoder: CloudEvents 1.0 JSON format (structured mode) and the OTLP/HTTP JSON encoding of
// ExportLogsServiceRequest (opentelemetry-proto `logs/v1`, "JSON Protobuf Encoding").
// Each returns a list of problems; [] means the value conforms.

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

// RFC 3339 date-time with offset (CE `time` is an RFC 3339 Timestamp).
const RFC3339 = /^\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)$/;
// URI-reference: no whitespace or characters never allowed literally (RFC 3986).
const URI_REF = /^[^\s"<>\\^`{|}]+$/;
const CE_NAME = /^[a-z0-9]{1,20}$/;
const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

/** CloudEvents 1.0, JSON format, one structured-mode event (CE spec §3, JSON format §2-3). */
export function checkCloudEvent10(ce: unknown): string[] {
  const p: string[] = [];
  if (!isObj(ce)) return ['not a JSON object'];
  if (ce['specversion'] !== '1.0') p.push('specversion must be "1.0"');
  for (const k of ['id', 'source', 'type']) {
    if (typeof ce[k] !== 'string' || ce[k] === '') p.push(`${k} is REQUIRED and a non-empty String`);
  }
  if (typeof ce['source'] === 'string' && !URI_REF.test(ce['source'])) p.push('source must be a URI-reference');
  if ('subject' in ce && (typeof ce['subject'] !== 'string' || ce['subject'] === '')) p.push('subject must be a non-empty String');
  if ('time' in ce && (typeof ce['time'] !== 'string' || !RFC3339.test(ce['time']))) p.push('time must be an RFC 3339 Timestamp');
  if (
    'datacontenttype' in ce &&
    (typeof ce['datacontenttype'] !== 'string' || !/^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+(\s*;.*)?$/i.test(ce['datacontenttype']))
  )
    p.push('datacontenttype must be an RFC 2046 media type');
  if ('dataschema' in ce && (typeof ce['dataschema'] !== 'string' || !/^[A-Za-z][A-Za-z0-9+.-]*:/.test(ce['dataschema'])))
    p.push('dataschema must be an absolute URI');
  if ('data' in ce && 'data_base64' in ce) p.push('data and data_base64 are mutually exclusive');
  for (const [k, v] of Object.entries(ce)) {
    if (k === 'data' || k === 'data_base64') continue;
    if (!CE_NAME.test(k)) {
      p.push(`attribute name ${JSON.stringify(k)} is not [a-z0-9]{1,20}`);
      continue;
    }
    if (v === null) {
      p.push(`attribute ${k} is null`);
      continue;
    }
    // Context attribute types: Boolean, Integer (32-bit), String (URI, URI-reference, Timestamp and Binary are strings in JSON).
    if (typeof v === 'number') {
      if (!Number.isInteger(v) || v < INT32_MIN || v > INT32_MAX) p.push(`attribute ${k} is a number but not a 32-bit Integer`);
    } else if (typeof v !== 'string' && typeof v !== 'boolean') {
      p.push(`attribute ${k} is not a String, Integer or Boolean`);
    }
  }
  if (typeof ce['traceparent'] === 'string' && !/^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/.test(ce['traceparent']))
    p.push('traceparent is not a W3C traceparent');
  return p;
}

const LOG_RECORD_KEYS = new Set([
  'timeUnixNano',
  'observedTimeUnixNano',
  'severityNumber',
  'severityText',
  'body',
  'attributes',
  'droppedAttributesCount',
  'flags',
  'traceId',
  'spanId',
  'eventName',
]);

function checkAnyValue(v: unknown, at: string, p: string[]): void {
  if (!isObj(v)) {
    p.push(`${at}: AnyValue must be an object`);
    return;
  }
  const keys = Object.keys(v);
  if (keys.length === 0) return; // the empty value
  if (keys.length !== 1) {
    p.push(`${at}: AnyValue has more than one member (${keys.join(', ')})`);
    return;
  }
  const k = keys[0]!;
  const x = v[k];
  switch (k) {
    case 'stringValue':
      if (typeof x !== 'string') p.push(`${at}.stringValue must be a string`);
      break;
    case 'boolValue':
      if (typeof x !== 'boolean') p.push(`${at}.boolValue must be a boolean`);
      break;
    case 'intValue':
      if (typeof x !== 'string' || !/^-?\d+$/.test(x) || BigInt(x) > 9223372036854775807n || BigInt(x) < -9223372036854775808n)
        p.push(`${at}.intValue must be an int64 as a decimal string`);
      break;
    case 'doubleValue':
      if (typeof x !== 'number') p.push(`${at}.doubleValue must be a number`);
      break;
    case 'bytesValue':
      if (typeof x !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(x)) p.push(`${at}.bytesValue must be base64`);
      break;
    case 'arrayValue':
      if (!isObj(x) || !Array.isArray(x['values'])) p.push(`${at}.arrayValue must be {values: AnyValue[]}`);
      else x['values'].forEach((y, i) => checkAnyValue(y, `${at}.arrayValue.values[${i}]`, p));
      break;
    case 'kvlistValue':
      if (!isObj(x) || !Array.isArray(x['values'])) p.push(`${at}.kvlistValue must be {values: KeyValue[]}`);
      else checkKeyValues(x['values'], `${at}.kvlistValue.values`, p);
      break;
    default:
      p.push(`${at}: unknown AnyValue member ${k}`);
  }
}

function checkKeyValues(list: unknown, at: string, p: string[]): void {
  if (!Array.isArray(list)) {
    p.push(`${at} must be an array of KeyValue`);
    return;
  }
  list.forEach((kv, i) => {
    if (!isObj(kv) || typeof kv['key'] !== 'string' || Object.keys(kv).some((k) => k !== 'key' && k !== 'value')) {
      p.push(`${at}[${i}] must be {key: string, value: AnyValue}`);
      return;
    }
    checkAnyValue(kv['value'], `${at}[${i}].value`, p);
  });
}

/** One LogRecord in the OTLP/HTTP JSON encoding. */
export function checkOtlpJsonLogRecord(r: unknown, at = 'logRecord'): string[] {
  const p: string[] = [];
  if (!isObj(r)) return [`${at} is not an object`];
  for (const k of Object.keys(r)) {
    if (!LOG_RECORD_KEYS.has(k)) p.push(`${at}: unknown member ${k}${k.includes('_') ? ' (the JSON encoding uses lowerCamelCase field names)' : ''}`);
  }
  for (const k of ['timeUnixNano', 'observedTimeUnixNano']) {
    if (k in r && (typeof r[k] !== 'string' || !/^\d+$/.test(r[k]) || BigInt(r[k]) > 18446744073709551615n))
      p.push(`${at}.${k} must be a fixed64 as a decimal string`);
  }
  if ('severityNumber' in r && (!Number.isInteger(r['severityNumber']) || (r['severityNumber'] as number) < 0 || (r['severityNumber'] as number) > 24))
    p.push(`${at}.severityNumber must be an integer enum value 0-24`);
  if ('severityText' in r && typeof r['severityText'] !== 'string') p.push(`${at}.severityText must be a string`);
  if ('eventName' in r && typeof r['eventName'] !== 'string') p.push(`${at}.eventName must be a string`);
  if ('traceId' in r && (typeof r['traceId'] !== 'string' || !/^[0-9a-fA-F]{32}$/.test(r['traceId'])))
    p.push(`${at}.traceId must be 32 hex characters (not base64)`);
  if ('spanId' in r && (typeof r['spanId'] !== 'string' || !/^[0-9a-fA-F]{16}$/.test(r['spanId'])))
    p.push(`${at}.spanId must be 16 hex characters (not base64)`);
  if ('flags' in r && (!Number.isInteger(r['flags']) || (r['flags'] as number) < 0 || (r['flags'] as number) > 0xffffffff))
    p.push(`${at}.flags must be a fixed32 integer`);
  if ('droppedAttributesCount' in r && !Number.isInteger(r['droppedAttributesCount'])) p.push(`${at}.droppedAttributesCount must be an integer`);
  if ('attributes' in r) checkKeyValues(r['attributes'], `${at}.attributes`, p);
  if ('body' in r) checkAnyValue(r['body'], `${at}.body`, p);
  return p;
}

/** A whole `ExportLogsServiceRequest` (resourceLogs → scopeLogs → logRecords). */
export function checkOtlpExportLogsRequest(req: unknown): string[] {
  const p: string[] = [];
  if (!isObj(req)) return ['request body is not a JSON object'];
  for (const k of Object.keys(req)) if (k !== 'resourceLogs') p.push(`unknown member ${k}`);
  if (!Array.isArray(req['resourceLogs'])) return [...p, 'resourceLogs must be an array'];
  req['resourceLogs'].forEach((rl, i) => {
    const at = `resourceLogs[${i}]`;
    if (!isObj(rl)) {
      p.push(`${at} is not an object`);
      return;
    }
    for (const k of Object.keys(rl)) if (!['resource', 'scopeLogs', 'schemaUrl'].includes(k)) p.push(`${at}: unknown member ${k}`);
    if ('resource' in rl) {
      const res = rl['resource'];
      if (!isObj(res)) p.push(`${at}.resource is not an object`);
      else {
        for (const k of Object.keys(res)) if (!['attributes', 'droppedAttributesCount'].includes(k)) p.push(`${at}.resource: unknown member ${k}`);
        checkKeyValues(res['attributes'], `${at}.resource.attributes`, p);
      }
    }
    if (!Array.isArray(rl['scopeLogs'])) {
      p.push(`${at}.scopeLogs must be an array`);
      return;
    }
    rl['scopeLogs'].forEach((sl, j) => {
      const at2 = `${at}.scopeLogs[${j}]`;
      if (!isObj(sl)) {
        p.push(`${at2} is not an object`);
        return;
      }
      for (const k of Object.keys(sl)) if (!['scope', 'logRecords', 'schemaUrl'].includes(k)) p.push(`${at2}: unknown member ${k}`);
      if ('scope' in sl && (!isObj(sl['scope']) || typeof sl['scope']['name'] !== 'string')) p.push(`${at2}.scope must be {name, version?}`);
      if (!Array.isArray(sl['logRecords'])) {
        p.push(`${at2}.logRecords must be an array`);
        return;
      }
      sl['logRecords'].forEach((r, k) => p.push(...checkOtlpJsonLogRecord(r, `${at2}.logRecords[${k}]`)));
    });
  });
  return p;
}

/** Decodes an OTLP JSON AnyValue back to plain JSON (for assertions). */
export function fromAnyValue(v: unknown): unknown {
  if (!isObj(v)) return undefined;
  if ('stringValue' in v) return v['stringValue'];
  if ('boolValue' in v) return v['boolValue'];
  if ('intValue' in v) return Number(v['intValue']);
  if ('doubleValue' in v) return v['doubleValue'];
  if ('arrayValue' in v) return ((v['arrayValue'] as Obj)['values'] as unknown[]).map(fromAnyValue);
  if ('kvlistValue' in v) return fromKeyValues((v['kvlistValue'] as Obj)['values']);
  return null;
}

/** Decodes a KeyValue list back to a plain object. */
export function fromKeyValues(list: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of list as { key: string; value: unknown }[])
    Object.defineProperty(out, kv.key, { value: fromAnyValue(kv.value), enumerable: true, writable: true, configurable: true });
  return out;
}

type OcsfSubset = {
  base: { attributes: string[]; required: string[]; metadata: { attributes: string[]; required: string[] }; severity_id: number[]; status_id: number[] };
  profiles: Record<string, { attributes: string[]; disposition_id: number[] }>;
  classes: Record<string, { category_uid: number; attributes: string[]; required: string[]; activity_id: number[]; status_id?: number[] }>;
  objects: Record<string, string[]>;
  device_type_id: number[];
};

/** One OCSF record against the pinned class subset (conformance/bridges/ocsf-classes.json). */
export function checkOcsfRecord(r: unknown, subset: OcsfSubset): string[] {
  const p: string[] = [];
  if (!isObj(r)) return ['record is not an object'];
  const cls = subset.classes[String(r['class_uid'])];
  if (!cls) return [`class_uid ${String(r['class_uid'])} is not one of the pinned classes`];
  const md = r['metadata'];
  const profiles = isObj(md) && Array.isArray(md['profiles']) ? (md['profiles'] as string[]) : [];
  const allowed = new Set([...subset.base.attributes, ...cls.attributes, ...profiles.flatMap((n) => subset.profiles[n]?.attributes ?? [])]);
  for (const k of Object.keys(r))
    if (!allowed.has(k)) p.push(`member ${k} is not an attribute of the class${k === 'disposition_id' ? ' (needs the security_control profile)' : ''}`);
  for (const k of [...subset.base.required, ...cls.required]) if (!(k in r)) p.push(`required ${k} missing`);
  if (r['category_uid'] !== cls.category_uid) p.push(`category_uid must be ${cls.category_uid}`);
  if (!cls.activity_id.includes(r['activity_id'] as number)) p.push('activity_id not in the class enum');
  if (r['type_uid'] !== (r['class_uid'] as number) * 100 + (r['activity_id'] as number)) p.push('type_uid != class_uid * 100 + activity_id');
  if (!subset.base.severity_id.includes(r['severity_id'] as number)) p.push('severity_id not in the enum');
  if ('status_id' in r && !(cls.status_id ?? subset.base.status_id).includes(r['status_id'] as number)) p.push('status_id not in the enum');
  if ('disposition_id' in r && !(subset.profiles['security_control']?.disposition_id ?? []).includes(r['disposition_id'] as number))
    p.push('disposition_id not in the enum');
  if (!Number.isSafeInteger(r['time'])) p.push('time must be an integer of epoch milliseconds');
  if (!isObj(md)) p.push('metadata must be an object');
  else {
    for (const k of Object.keys(md)) if (!subset.base.metadata.attributes.includes(k)) p.push(`metadata.${k} is not a metadata attribute`);
    for (const k of subset.base.metadata.required) if (!(k in md)) p.push(`metadata.${k} missing`);
    if (!isObj(md['product'])) p.push('metadata.product must be an object');
  }
  for (const [obj, keys] of Object.entries(subset.objects)) {
    if (!(obj in r)) continue;
    const o = r[obj];
    if (!isObj(o)) {
      p.push(`${obj} must be an object`);
      continue;
    }
    for (const k of Object.keys(o)) if (!keys.includes(k)) p.push(`${obj}.${k} is not an attribute of ${obj}`);
  }
  if (isObj(r['device']) && !subset.device_type_id.includes(r['device']['type_id'] as number)) p.push('device.type_id not in the enum');
  if ('unmapped' in r && !isObj(r['unmapped'])) p.push('unmapped must be an object');
  return p;
}
