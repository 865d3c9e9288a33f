// Parsing of POST bodies (AEP-0003 §3.2): one Event (`application/json`, also a JSON array) or
// NDJSON (`application/x-ndjson`). Raw bytes are kept per Event for byte-identical replay.
import { envelopeFastValid, validateEnvelope, isCommandType } from '@aep/protocol';
import type { Issue } from '@aep/protocol';
import type { HttpErrorCode } from './errors.js';
import type { AepEvent } from './hub.js';
import { isObject, own } from './util.js';

/**
 * One parsed Event with the exact bytes it arrived as. `body`, when present, holds `raw` as the
 * UTF-8 bytes received at `body[at, at + bytes)` (the request body itself, no view object per
 * Event): the buffer copies them without encoding.
 */
export interface Incoming {
  event: AepEvent;
  raw: string;
  bytes: number;
  body?: Buffer;
  at?: number;
}

/** A refusal of a whole body. */
export interface BodyError {
  status: number;
  body: Record<string, unknown>;
}

/** Render issues as a short detail naming the rules. */
export function issuesDetail(issues: readonly Issue[]): string {
  return issues
    .slice(0, 5)
    .map((i) => `${i.rule}${i.path ? ` at ${i.path}` : ''}: ${i.message}`)
    .join('; ');
}

/** The raw text to store for an Event: as received, unless it has an interior line break. */
function rawFor(text: string, value: unknown): string {
  return /[\r\n]/.test(text) ? JSON.stringify(value) : text;
}

/** JSON insignificant whitespace (RFC 8259 §2) and the other characters `trim()` removes. */
function isSpace(c: number): boolean {
  return (
    c === 0x20 ||
    c === 0x09 ||
    c === 0x0a ||
    c === 0x0d ||
    c === 0xfeff ||
    c === 0xa0 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x3000 ||
    c === 0x0b ||
    c === 0x0c
  );
}

/** Validate one parsed value as an ingestible Event (envelope only, §3.2; no commands on HTTP). */
export function checkEvent(
  value: unknown,
  allowCommands: boolean,
): { ok: true } | { ok: false; status: number; error: HttpErrorCode; detail: string; issues?: Issue[] } {
  // The fast verdict first: `validateEnvelope` returns a new (empty) array for every valid Event.
  if (!fastValid(value)) {
    const issues = validateEnvelope(value);
    if (issues.length > 0) return { ok: false, status: 400, error: 'invalid-event', detail: issuesDetail(issues), issues };
  }
  const unsafe = unsafeInteger(value as Record<string, unknown>);
  if (unsafe) return { ok: false, status: 400, error: 'invalid-event', detail: issuesDetail([unsafe]), issues: [unsafe] };
  const type = (value as { type: string }).type;
  if (!allowCommands && isCommandType(type)) {
    return { ok: false, status: 403, error: 'unauthorized', detail: 'commands require the WebSocket binding (AEP-0004 §4.1)' };
  }
  return OK;
}

const OK = { ok: true } as const;

/** The envelope fast path's verdict; false (the full validator decides) when it throws. */
function fastValid(value: unknown): boolean {
  try {
    return envelopeFastValid(value);
  } catch {
    return false;
  }
}

/**
 * Numeric envelope attributes are exact integers (decided, docs/decisions.md "Relay authority"):
 * `seq`, `epoch` and integer extension attributes must not exceed Number.MAX_SAFE_INTEGER, or
 * positions and resume ids stop being exact (`epoch: 1e300` passes "is an integer").
 */
function unsafeInteger(ev: Record<string, unknown>): Issue | null {
  // for...in, not Object.keys: no array per Event (issue 19); inherited members are skipped.
  for (const k in ev) {
    if (!own(ev, k)) continue;
    const v = ev[k];
    if (typeof v !== 'number' || Number.isSafeInteger(v)) continue;
    const rule = k === 'seq' ? 'envelope.seq' : k === 'epoch' ? 'envelope.epoch' : 'envelope.ext-value';
    return {
      rule,
      path: `/${k}`,
      section: 'AEP-0001 §5.1',
      message: `${k} must be an exact integer within ±(2^53-1) (Number.MAX_SAFE_INTEGER); ${String(v).slice(0, 30)} is not`,
    };
  }
  return null;
}

/** Parse a body into Events; refuse the whole body on the first bad line (AEP-0003 §3.2 choice). */
export function parseBody(buf: Buffer, ndjson: boolean, maxEvents: number): { ok: true; events: Incoming[] } | { ok: false; err: BodyError } {
  const out: Incoming[] = [];
  const fail = (status: number, error: HttpErrorCode, detail: string, line?: number, issues?: Issue[]): { ok: false; err: BodyError } => {
    const body: Record<string, unknown> = { error, detail };
    if (line !== undefined) body['line'] = line;
    if (issues) body['issues'] = issues.slice(0, 20);
    return { ok: false, err: { status, body } };
  };
  if (ndjson) {
    let start = 0;
    let line = 0;
    while (start <= buf.length) {
      let end = buf.indexOf(0x0a, start);
      if (end < 0) end = buf.length;
      let stop = end;
      if (stop > start && buf[stop - 1] === 0x0d) stop--;
      const text = buf.toString('utf8', start, stop);
      if (stop > start && !(isSpace(text.charCodeAt(0)) && text.trim() === '')) {
        if (out.length >= maxEvents) return fail(413, 'payload-too-large', `batch holds more than maxBatchEvents=${maxEvents} Events`, line);
        let value: unknown;
        try {
          value = JSON.parse(text);
        } catch (e) {
          return fail(400, 'invalid-event', `line ${line} is not valid JSON: ${(e as Error).message}`, line);
        }
        if (!isObject(value)) return fail(400, 'invalid-event', `line ${line} is not a JSON object (AEP-0001 §5)`, line);
        const c = checkEvent(value, false);
        if (!c.ok) return fail(c.status, c.error, `line ${line}: ${c.detail}`, line, c.issues);
        // Fast path: a line without surrounding whitespace or `\r` is stored as is (its byte length is known).
        const plain = !isSpace(text.charCodeAt(0)) && !isSpace(text.charCodeAt(text.length - 1)) && text.indexOf('\r') < 0;
        const raw = plain ? text : rawFor(text.trim(), value);
        if (plain) out.push({ event: value as AepEvent, raw, bytes: stop - start, body: buf, at: start });
        else out.push({ event: value as AepEvent, raw, bytes: Buffer.byteLength(raw) });
      }
      line++;
      start = end + 1;
    }
    if (out.length === 0) return fail(400, 'invalid-event', 'the body holds no Event');
    return { ok: true, events: out };
  }
  const text = buf.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return fail(400, 'invalid-event', `body is not valid JSON: ${(e as Error).message}`);
  }
  if (Array.isArray(value)) {
    if (value.length === 0) return fail(400, 'invalid-event', 'the body holds no Event');
    if (value.length > maxEvents) return fail(413, 'payload-too-large', `batch holds more than maxBatchEvents=${maxEvents} Events`);
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      if (!isObject(v)) return fail(400, 'invalid-event', `element ${i} is not a JSON object (AEP-0001 §5)`, i);
      const c = checkEvent(v, false);
      if (!c.ok) return fail(c.status, c.error, `element ${i}: ${c.detail}`, i, c.issues);
      const raw = JSON.stringify(v);
      out.push({ event: v as AepEvent, raw, bytes: Buffer.byteLength(raw) });
    }
    return { ok: true, events: out };
  }
  if (!isObject(value)) return fail(400, 'invalid-event', 'body is not a JSON object (AEP-0001 §5)');
  const c = checkEvent(value, false);
  if (!c.ok) return fail(c.status, c.error, c.detail, undefined, c.issues);
  const raw = rawFor(text.trim(), value);
  out.push({ event: value as AepEvent, raw, bytes: Buffer.byteLength(raw) });
  return { ok: true, events: out };
}
