// Envelope classification and the hand-written envelope fast path (AEP-0001 §5, §5.2, §6).
// The fast path only answers "valid or not"; when it says "not", validate.ts runs the generated
// schema validator to produce the issues, so rule ids always come from the schema. A property
// test (test/property-validate.test.ts) checks that both verdicts agree.
import { isDateTime, isUri } from './schema-runtime.js';
import { TYPE_PATTERN, ATTRIBUTE_NAME_PATTERN } from './generated/registry.js';

const TYPE_RE = new RegExp(TYPE_PATTERN);
const NAME_RE = new RegExp(ATTRIBUTE_NAME_PATTERN);
const TRACEPARENT_RE = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;
const AGENT_RE = /^agent\./;
// The seq-less set (AEP-0001 §5.2): the four core commands, vendor commands, attention.routed.
const FOREIGN_RE = /^(?:control\.(?:attention\.respond|cancel|pause|resume)|attention\.routed|x\.[a-z0-9_-]+\.control\..+)$/;
const COMMAND_RE = /^(?:control\.(?:attention\.respond|cancel|pause|resume)|x\.[a-z0-9_-]+\.control\..+)$/;

/** The envelope class of a type (AEP-0001 §5.2), decided exactly as the envelope schema does. */
export type ScopeClass = 'agent' | 'foreign' | 'session';

/**
 * Envelope class of `type`: `agent` (prefix `agent.`: no session/seq/run/step), `foreign`
 * (the four core commands, `x.{vendor}.control.*`, `attention.routed`: session, no seq), or
 * `session` (everything else: session and seq).
 */
export function scopeClass(type: string): ScopeClass {
  const known = TYPE_CACHE.get(type);
  if (known !== undefined) return known === INVALID ? classify(type) : known;
  return classify(type);
}

function classify(type: string): ScopeClass {
  if (AGENT_RE.test(type)) return 'agent';
  if (FOREIGN_RE.test(type)) return 'foreign';
  return 'session';
}

// Memo of type name -> class (or INVALID for an ill-formed name). The hot path sees few distinct
// types; the memo is cleared when it grows past its bound, so hostile input cannot grow it.
const INVALID = 'invalid';
const TYPE_CACHE = new Map<string, ScopeClass | typeof INVALID>();
const TYPE_CACHE_MAX = 4096;

/** Class of a well-formed type name, or undefined when the name breaks AEP-0001 §6. */
function typeClass(type: string): ScopeClass | undefined {
  let c = TYPE_CACHE.get(type);
  if (c === undefined) {
    c = TYPE_RE.test(type) ? classify(type) : INVALID;
    if (TYPE_CACHE.size >= TYPE_CACHE_MAX) TYPE_CACHE.clear();
    TYPE_CACHE.set(type, c);
  }
  return c === INVALID ? undefined : c;
}

/**
 * True for the imperative command types (AEP-0004 §2): `control.attention.respond`,
 * `control.cancel`, `control.pause`, `control.resume` and `x.{vendor}.control.*`.
 * The acks `control.accepted`/`control.rejected` are not commands.
 */
export function isCommandType(type: string): boolean {
  return COMMAND_RE.test(type);
}

/** True when `type` is a well-formed AEP type name (AEP-0001 §6). */
export function isValidTypeName(type: string): boolean {
  return TYPE_RE.test(type);
}

// Memo of source URI -> verdict. A stream has few distinct sources; the lookup also leaves the
// string's hash computed for the stream rules' per-source map (one hash instead of a regex run
// per event). Bounded like TYPE_CACHE; long strings are not memoized (they would pin memory).
const SOURCE_CACHE = new Map<string, boolean>();
const SOURCE_CACHE_MAX = 4096;
const SOURCE_CACHE_LEN = 256;

function sourceValid(v: string): boolean {
  if (v.length === 0) return false;
  if (v.length > SOURCE_CACHE_LEN) return isUri(v);
  let ok = SOURCE_CACHE.get(v);
  if (ok === undefined) {
    ok = isUri(v);
    if (SOURCE_CACHE.size >= SOURCE_CACHE_MAX) SOURCE_CACHE.clear();
    SOURCE_CACHE.set(v, ok);
  }
  return ok;
}

// The last valid `time` seen: events of a stream often share their timestamp (ms resolution), and
// comparing with it costs less than checking the date again.
let lastTime = '\u0000';

function timeValid(v: string): boolean {
  if (!isDateTime(v)) return false;
  lastTime = v;
  return true;
}

function nonEmpty(v: unknown): boolean {
  return typeof v === 'string' && v.length > 0;
}

function nonNegInt(v: unknown): boolean {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0;
}

/**
 * Fast envelope check: true exactly when the envelope schema accepts `e`. Hot path of every
 * validation (relay ingest, `aep validate`), hence no allocation and a single pass over keys.
 */
export function envelopeFastValid(e: unknown): boolean {
  if (typeof e !== 'object' || e === null || Array.isArray(e)) return false;
  const o = e as Record<string, unknown>;
  for (const k in o) {
    const v = o[k];
    switch (k) {
      case 'aep':
        if (v !== '0.1') return false;
        break;
      case 'id':
      case 'agent':
      case 'subject':
      case 'session':
      case 'run':
      case 'step':
      case 'cause':
        if (!nonEmpty(v)) return false;
        break;
      case 'type':
        if (typeof v !== 'string' || typeClass(v) === undefined) return false;
        break;
      case 'time':
        if (typeof v !== 'string' || (v !== lastTime && !timeValid(v))) return false;
        break;
      case 'source':
        if (typeof v !== 'string' || !sourceValid(v)) return false;
        break;
      case 'seq':
      case 'epoch':
        if (!nonNegInt(v)) return false;
        break;
      case 'traceparent':
        if (typeof v !== 'string' || !TRACEPARENT_RE.test(v)) return false;
        break;
      case 'severity':
        if (v !== 'info' && v !== 'notice' && v !== 'warning' && v !== 'error' && v !== 'debug' && v !== 'critical') return false;
        break;
      case 'capture':
        if (v !== 'metadata' && v !== 'redacted' && v !== 'full' && v !== 'none') return false;
        break;
      case 'data':
        if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
        break;
      default:
        if (!NAME_RE.test(k)) return false;
        if (typeof v !== 'string' && typeof v !== 'boolean' && !(typeof v === 'number' && Number.isInteger(v))) return false;
    }
  }
  if (o['aep'] === undefined || o['id'] === undefined || o['time'] === undefined || o['source'] === undefined || o['agent'] === undefined) return false;
  const type = o['type'];
  if (typeof type !== 'string') return false;
  const cls = typeClass(type);
  if (cls === undefined) return false;
  if (cls === 'agent') {
    return o['session'] === undefined && o['seq'] === undefined && o['run'] === undefined && o['step'] === undefined;
  }
  if (o['session'] === undefined) return false;
  return cls === 'foreign' ? o['seq'] === undefined : o['seq'] !== undefined;
}
