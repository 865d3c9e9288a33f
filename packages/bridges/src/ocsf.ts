// OCSF projection, AEP → OCSF 1.8.0, one-way (AEP-0005 §4). Only the session,
// tool and attention lifecycles project; every other event gives no record by design.
import { SEVERITY_OCSF } from '@aep/protocol';
import type { CaptureLevel } from '@aep/protocol';
import { survivingPayload } from './capture.js';
import { readEnvelope } from './envelope.js';
import { checkMaxCapture } from './otlp.js';
import { isPlainObject } from './result.js';
import type { BridgeDiagnostic, BridgeResult } from './result.js';
import { epochMillis } from './time.js';

/** The pinned OCSF schema version (re-checked each AEP release, §4). */
export const OCSF_VERSION = '1.8.0';

/** Options of {@link toOcsfRecord}. */
export interface OcsfOptions {
  /** Exporter capture ceiling (AEP-0005 §4.6); default `metadata`. */
  maxCapture?: CaptureLevel;
}

/** One row of the class table (§4.2). */
export interface OcsfClassRow {
  class_uid: 1007 | 2004 | 3002;
  category_uid: 1 | 2 | 3;
  activity_id: number;
  status_id?: number;
  /** A disposition the event type itself asserts (only `tool.denied` and `attention.timeout`). */
  disposition_id?: number;
}

/** The class table of AEP-0005 §4.2, by AEP type. */
export const OCSF_CLASSES: Readonly<Record<string, OcsfClassRow>> = {
  'session.started': { class_uid: 3002, category_uid: 3, activity_id: 1, status_id: 1 },
  'session.ended': { class_uid: 3002, category_uid: 3, activity_id: 2, status_id: 1 },
  'tool.requested': { class_uid: 1007, category_uid: 1, activity_id: 1 },
  'tool.completed': { class_uid: 1007, category_uid: 1, activity_id: 2, status_id: 1 },
  'tool.failed': { class_uid: 1007, category_uid: 1, activity_id: 2, status_id: 2 },
  'tool.denied': { class_uid: 1007, category_uid: 1, activity_id: 1, status_id: 2, disposition_id: 2 },
  'attention.requested': { class_uid: 2004, category_uid: 2, activity_id: 1, status_id: 1 },
  'attention.answered': { class_uid: 2004, category_uid: 2, activity_id: 2, status_id: 2 },
  'attention.resolved': { class_uid: 2004, category_uid: 2, activity_id: 3, status_id: 4 },
  'attention.timeout': { class_uid: 2004, category_uid: 2, activity_id: 3, disposition_id: 16 },
};

/** OCSF `disposition_id` 16 "No Action". */
const NO_ACTION = 16;

/** One OCSF record (the members §4.3 builds; nothing else). */
export interface OcsfRecord {
  class_uid: number;
  category_uid: number;
  activity_id: number;
  /** `class_uid * 100 + activity_id`. */
  type_uid: number;
  status_id?: number;
  disposition_id?: number;
  severity_id: number;
  /** Epoch milliseconds of `time` (integer). */
  time: number;
  /** The AEP `type`. */
  message: string;
  metadata: {
    version: string;
    uid: string;
    original_time: string;
    product: { name: string };
    correlation_uid?: string;
    profiles?: string[];
  };
  user?: { name: string };
  session?: { uid: string };
  actor?: { app_name: string };
  process?: { name?: string; uid?: string };
  device?: { type_id: 0; hostname: string } | { type_id: 0; name: string };
  finding_info?: { uid?: string; title: string };
  unmapped: { aep: Record<string, unknown>; data?: Record<string, unknown> };
}

/**
 * The host of a URI's authority (userinfo and port removed: a hostname, and credentials never
 * travel into a record field), or `null` when the URI has no authority or an empty one.
 */
export function uriHost(uri: string): string | null {
  const hit = HOSTS.get(uri);
  if (hit !== undefined) return hit;
  const h = parseHost(uri);
  if (HOSTS.size >= 1024) HOSTS.clear(); // sources repeat; a small bounded memo is enough
  HOSTS.set(uri, h);
  return h;
}

const HOSTS = new Map<string, string | null>();

function parseHost(uri: string): string | null {
  const m = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^/?#]*)/.exec(uri);
  if (!m) return null;
  let auth = m[1]!;
  const at = auth.lastIndexOf('@');
  if (at >= 0) auth = auth.slice(at + 1);
  let host: string;
  if (auth.startsWith('[')) {
    const end = auth.indexOf(']');
    host = end > 0 ? auth.slice(1, end) : auth.slice(1);
  } else {
    host = auth.replace(/:[0-9]*$/, '');
  }
  return host === '' ? null : host;
}

/**
 * One AEP event → one OCSF 1.8.0 record, or `value: null` when its type has no class (control,
 * progress, presence, messages, `x.*`, … : no record by design, §4). Class, activity, status and
 * disposition per the table; `disposition_id` only where the event itself asserts the outcome
 * (`tool.denied` 2, a `dismissed` resolution 16, a timeout 16; an `answered` resolution none,
 * nor one whose payload did not survive), with `metadata.profiles: ["security_control"]`.
 * `unmapped.aep` = every envelope attribute but `data`, verbatim; `unmapped.data` = the
 * surviving payload (same `maxCapture` rule as OTLP, default `metadata`), omitted when empty.
 */
export function toOcsfRecord(event: unknown, options: OcsfOptions = {}): BridgeResult<OcsfRecord | null> {
  const max = checkMaxCapture(options.maxCapture);
  if (!max.ok) return max;
  const env = readEnvelope(event);
  if (!env.ok) return env;
  const f = env.value;
  const row = Object.prototype.hasOwnProperty.call(OCSF_CLASSES, f.type) ? OCSF_CLASSES[f.type]! : undefined;
  if (row === undefined) return { ok: true, value: null, diagnostics: [] };
  const e = f.event;
  const diagnostics: BridgeDiagnostic[] = [];
  const data = survivingPayload(e, f.capture, max.value, diagnostics);

  let disposition = row.disposition_id;
  if (f.type === 'attention.resolved' && data !== undefined && data['resolution'] === 'dismissed') disposition = NO_ACTION;

  const metadata: OcsfRecord['metadata'] = { version: OCSF_VERSION, uid: f.id, original_time: f.time, product: { name: f.agent } };
  const cause = e['cause'];
  if (typeof cause === 'string') metadata.correlation_uid = cause;
  if (disposition !== undefined) metadata.profiles = ['security_control'];

  // `unmapped` is added last so it reads last in the JSON.
  const rec = {
    class_uid: row.class_uid,
    category_uid: row.category_uid,
    activity_id: row.activity_id,
    type_uid: row.class_uid * 100 + row.activity_id,
    severity_id: SEVERITY_OCSF[f.severity]!.severity_id,
    time: epochMillis(f.instant),
    message: f.type,
    metadata,
  } as OcsfRecord;
  if (row.status_id !== undefined) rec.status_id = row.status_id;
  if (disposition !== undefined) rec.disposition_id = disposition;

  const subject = e['subject'];
  switch (row.class_uid) {
    case 3002: {
      rec.user = { name: f.agent };
      const session = e['session'];
      if (typeof session === 'string') rec.session = { uid: session };
      break;
    }
    case 1007: {
      rec.actor = { app_name: f.agent };
      const tool = data !== undefined ? data['tool'] : undefined;
      const proc: { name?: string; uid?: string } = {};
      // The subject names the tool; without one, the surviving payload's own tool name (never invented).
      if (typeof subject === 'string') proc.name = subject;
      else if (isPlainObject(tool) && typeof tool['name'] === 'string') proc.name = tool['name'];
      if (isPlainObject(tool) && typeof tool['call_id'] === 'string') proc.uid = tool['call_id'];
      rec.process = proc;
      const host = uriHost(f.source);
      rec.device = host !== null ? { type_id: 0, hostname: host } : { type_id: 0, name: f.source };
      break;
    }
    default: {
      // The request id: its own id on the request, `subject` on every later lifecycle event.
      const uid = f.type === 'attention.requested' ? f.id : typeof subject === 'string' ? subject : undefined;
      rec.finding_info = uid !== undefined ? { uid, title: f.type } : { title: f.type };
    }
  }

  // Rest destructuring defines own properties (CopyDataProperties): `__proto__` stays plain data.
  const { data: _data, ...aep } = e;
  rec.unmapped = { aep };
  if (data !== undefined && Object.keys(data).length > 0) rec.unmapped.data = data;
  return { ok: true, value: rec, diagnostics };
}
