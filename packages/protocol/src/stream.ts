// Cross-event (stream) rules (AEP-0001 §7; AEP-0002 §2 conv. 5, §5.3, §7; AEP-0004 §3; AEP-0006).
// Incremental: push events one at a time; memory is bounded by live state (per-session positions,
// terminals, open attention requests) plus a bounded window of (source, id) fingerprints, never
// by the events themselves. Per-session state is keyed by (source, session) (AEP-0001 §5.2);
// dedupe by (source, id) (AEP-0001 §7.4).
import type { Issue } from './issue.js';
import { RULES, issue, type RuleId } from './rules.js';
import { envelopeFastValid, scopeClass } from './envelope.js';
import { validateEvent, type ValidateOptions } from './validate.js';
import { validateFormAnswer, indexFields, choiceIds, type FieldSpec } from './forms.js';

/** Options of {@link StreamValidator}. */
export interface StreamValidatorOptions {
  /**
   * How many (source, id) fingerprints are remembered for dedupe and id-conflict detection
   * (oldest forgotten first). Default 1,000,000 (about 100 MB worst case). A repeat older than
   * the window is not recognized as redelivery.
   */
  dedupeWindow?: number;
}

/** Default of {@link StreamValidatorOptions.dedupeWindow}. */
export const DEFAULT_DEDUPE_WINDOW = 1_000_000;

interface RequestInfo {
  /** Field index of a `kind: "form"` request (undefined otherwise). */
  fields: Map<string, FieldSpec> | undefined;
  /** Raw fields array for validateFormAnswer. */
  rawFields: unknown;
  /** Content fingerprint of its terminal, once closed. */
  terminal: number | undefined;
}

interface SessionState {
  hasPos: boolean;
  epoch: number;
  seq: number;
  ended: number | undefined;
  runTerminals: Map<string, number>;
  requests: Map<string, RequestInfo>;
  acks: Map<string, number>;
}


/**
 * Order- and content-sensitive 53-bit fingerprint of a JSON value (two 32-bit lanes). Equal JSON
 * values (same members in the same order) give equal fingerprints, so a differing fingerprint
 * proves different content. Iterative, so any nesting depth is safe.
 */
export function fingerprint(value: unknown): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  const feed = (c: number): void => {
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  };
  const feedString = (s: string): void => {
    feed(s.length);
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 2654435761);
      h2 = Math.imul(h2 ^ c, 1597334677);
    }
  };
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    switch (typeof v) {
      case 'string': feed(1); feedString(v); break;
      case 'number': feed(2); feedString(String(v)); break;
      case 'boolean': feed(v ? 3 : 4); break;
      case 'object':
        if (v === null) { feed(5); break; }
        if (v instanceof KeyMark) { feed(8); feedString(v.key); break; }
        if (Array.isArray(v)) {
          feed(6); feed(v.length);
          for (let i = v.length - 1; i >= 0; i--) stack.push(v[i]);
        } else {
          const keys = Object.keys(v);
          feed(7); feed(keys.length);
          for (let i = keys.length - 1; i >= 0; i--) {
            const k = keys[i]!;
            stack.push((v as Record<string, unknown>)[k]);
            stack.push(new KeyMark(k));
          }
        }
        break;
      default:
        feed(9);
    }
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

class KeyMark {
  constructor(readonly key: string) {}
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The cross-event rules of AEP 0.1, incremental. `push(event, index)` returns the stream issues
 * the event causes (single-event rules are validateEvent's job; events whose envelope is invalid
 * are skipped here); `end()` returns issues only decidable at the end (none in 0.1: zero
 * terminals is legal, AEP-0002 §2 conv. 5).
 */
export class StreamValidator {
  private readonly window: number;
  private readonly ids = new Map<string, number>();
  private readonly sessions = new Map<string, SessionState>();
  /** Live requests by bare `session` + request id, for foreign commands (AEP-0001 §7.4). */
  private readonly requestsBySessionName = new Map<string, RequestInfo>();

  constructor(opts: StreamValidatorOptions = {}) {
    const w = opts.dedupeWindow ?? DEFAULT_DEDUPE_WINDOW;
    this.window = Number.isInteger(w) && w > 0 ? w : DEFAULT_DEDUPE_WINDOW;
  }

  /** Number of (source, id) fingerprints currently held (for memory accounting). */
  get rememberedIds(): number {
    return this.ids.size;
  }

  /** Applies the stream rules to the next event; `index` is its position in the stream. */
  push(event: unknown, index: number): Issue[] {
    try {
      return this.pushUnsafe(event, index);
    } catch {
      return [];
    }
  }

  /** Issues decidable only at the end of the stream (none in AEP 0.1). */
  end(): Issue[] {
    return [];
  }

  private pushUnsafe(event: unknown, index: number): Issue[] {
    if (!envelopeFastValid(event)) return [];
    const e = event as Record<string, unknown>;
    const out: Issue[] = [];
    const add = (rule: RuleId, path: string, message: string): void => {
      out.push({ ...issue(rule, path, `${message} (${RULES[rule].meaning})`), index });
    };
    const source = e['source'] as string;
    const id = e['id'] as string;
    const type = e['type'] as string;
    const fp = fingerprint(e);
    const idKey = source + '\u0000' + id;
    const seen = this.ids.get(idKey);
    if (seen !== undefined) {
      if (seen !== fp) add('stream.id-conflict', '/id', `id "${id}" of source ${source} already named a different event`);
      // An identical repeat is redelivery: it was judged the first time (AEP-0001 §7.4).
      return out;
    }
    this.ids.set(idKey, fp);
    if (this.ids.size > this.window) {
      const oldest = this.ids.keys().next();
      if (!oldest.done) this.ids.delete(oldest.value);
    }
    const session = e['session'];
    if (typeof session !== 'string') return out;
    const cls = scopeClass(type);
    if (cls === 'foreign') {
      if (type === 'control.attention.respond') this.checkValuesCapture(e, this.requestsBySessionName.get(session + '\u0000' + String(e['subject'])), add);
      return out;
    }
    const sKey = source + '\u0000' + session;
    let st = this.sessions.get(sKey);
    if (st === undefined) {
      st = { hasPos: false, epoch: 0, seq: -1, ended: undefined, runTerminals: new Map(), requests: new Map(), acks: new Map() };
      this.sessions.set(sKey, st);
    }
    // (epoch, seq) ordering in emission order (AEP-0001 §7.2).
    const seq = e['seq'] as number;
    const epoch = (e['epoch'] as number | undefined) ?? 0;
    if (!st.hasPos) {
      st.hasPos = true; st.epoch = epoch; st.seq = seq;
    } else if (epoch < st.epoch) {
      add('stream.epoch-regression', '/epoch', `epoch ${epoch} after epoch ${st.epoch} in session "${session}" of ${source}`);
    } else if (epoch === st.epoch && seq === st.seq) {
      add('stream.position-duplicate', '/seq', `position (${epoch}, ${seq}) of session "${session}" is already taken by another event`);
    } else if (epoch === st.epoch && seq < st.seq) {
      add('stream.seq-regression', '/seq', `seq ${seq} after seq ${st.seq} in epoch ${epoch} of session "${session}"`);
    } else {
      st.epoch = epoch; st.seq = seq;
    }
    const subject = e['subject'];
    const data = e['data'];
    switch (type) {
      case 'run.finished': case 'run.failed': case 'run.cancelled': {
        const run = e['run'];
        if (typeof run !== 'string') break;
        const prev = st.runTerminals.get(run);
        if (prev === undefined) st.runTerminals.set(run, fp);
        else if (prev !== fp) add('stream.run-terminal-duplicate', '/type', `run "${run}" already reached a terminal; ${type} is a second one`);
        break;
      }
      case 'session.ended': {
        if (st.ended !== undefined) {
          if (st.ended !== fp) add('stream.session-ended-duplicate', '/type', `session "${session}" already has a different session.ended`);
          break;
        }
        st.ended = fp;
        for (const [reqId, req] of st.requests) {
          if (req.terminal === undefined) add('stream.attention-open-at-session-end', '', `attention request "${reqId}" has no attention.resolved or attention.timeout before session.ended`);
        }
        break;
      }
      case 'attention.requested': {
        const form = isObj(data) && data['kind'] === 'form' && Array.isArray(data['fields']);
        const info: RequestInfo = { fields: form ? indexFields(data['fields']) : undefined, rawFields: form ? data['fields'] : undefined, terminal: undefined };
        st.requests.set(id, info);
        this.requestsBySessionName.set(session + '\u0000' + id, info);
        break;
      }
      case 'attention.answered': {
        if (typeof subject !== 'string') break;
        const req = st.requests.get(subject);
        if (req?.fields !== undefined && isObj(data) && isObj(data['answer']) && isObj(data['answer']['values'])) {
          // Only the spec's MUST rules (strict: false): the hardening rules are the emitter's call.
          const gated = (e['capture'] ?? 'metadata') !== 'redacted' && e['capture'] !== 'full';
          for (const i of validateFormAnswer(req.rawFields, data['answer']['values'], { strict: false, basePath: '/data/answer/values' })) {
            if (i.rule === 'form.choice-forged') add(i.rule, i.path, i.message);
            if (i.rule === 'form.required-missing') {
              // Below `redacted` the emitter records values gated (AEP-0006 §5.2): a required
              // string field, or an `other` select answered with free text, is dropped from the
              // record, so its absence is not a violation. Structural entries survive gating.
              const f = req.fields.get(i.path.slice('/data/answer/values/'.length).replace(/~1/g, '/').replace(/~0/g, '~'));
              if (gated && f !== undefined && (f.type === 'string' || (f.type === 'select' && f.other === true))) continue;
              add(i.rule, i.path, i.message);
            }
          }
        }
        this.checkValuesCapture(e, req, add);
        break;
      }
      case 'attention.resolved': case 'attention.timeout': {
        if (typeof subject !== 'string') break;
        let req = st.requests.get(subject);
        if (req === undefined) {
          // The request is not in this stream (e.g. a partial recording): still remember the
          // terminal so a second, different one is caught.
          req = { fields: undefined, rawFields: undefined, terminal: undefined };
          st.requests.set(subject, req);
        }
        if (req.terminal === undefined) {
          req.terminal = fp;
          req.fields = undefined;
          req.rawFields = undefined;
          this.requestsBySessionName.delete(session + '\u0000' + subject);
        } else if (req.terminal !== fp) {
          add('stream.attention-terminal-duplicate', '/type', `attention request "${subject}" was already closed; ${type} is a second terminal`);
        }
        break;
      }
      case 'control.accepted': case 'control.rejected': {
        const cause = e['cause'];
        if (typeof cause !== 'string') break;
        const prev = st.acks.get(cause);
        if (prev === undefined) st.acks.set(cause, fp);
        else if (prev !== fp) add('stream.ack-conflict', '/type', `command "${cause}" already has a different ack from ${source}`);
        break;
      }
      default:
        break;
    }
    return out;
  }

  /**
   * Capture honesty of `answer.values` at `metadata` (AEP-0002 §5.3, AEP-0006 §5.2): with the
   * request's field_spec, a string entry survives only as a choice id of a select field.
   */
  private checkValuesCapture(e: Record<string, unknown>, req: RequestInfo | undefined, add: (rule: RuleId, path: string, message: string) => void): void {
    if (req?.fields === undefined) return;
    const capture = e['capture'] ?? 'metadata';
    if (capture !== 'metadata') return;
    const data = e['data'];
    if (!isObj(data) || !isObj(data['answer'])) return;
    const values = data['answer']['values'];
    if (!isObj(values)) return;
    for (const key of Object.keys(values)) {
      const f = req.fields.get(key);
      if (f === undefined) continue;
      const v = values[key];
      const path = `/data/answer/values/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      if (f.type === 'select') {
        // A forged choice on a closed select is form.choice-forged; free text on an `other`
        // select is the capture leak.
        if (f.other !== true) continue;
        const ids = choiceIds(f);
        const list = Array.isArray(v) ? v : [v];
        if (list.some((x) => typeof x === 'string' && !ids.has(x))) {
          add('capture.values-free-text', path, `"other" free text for field "${key}" at capture metadata`);
        }
      } else if (typeof v === 'string') {
        add('capture.values-free-text', path, `string entry for ${f.type} field "${key}" at capture metadata`);
      }
    }
  }
}

/**
 * Validates a whole stream: every event (validateEvent, with `index`) and the cross-event rules
 * (StreamValidator). Convenience for in-memory streams; `aep validate` streams instead.
 */
export function validateStream(events: Iterable<unknown>, opts: ValidateOptions & StreamValidatorOptions = {}): Issue[] {
  const sv = new StreamValidator(opts);
  const out: Issue[] = [];
  let index = 0;
  for (const e of events) {
    for (const i of validateEvent(e, opts)) out.push({ ...i, index });
    for (const i of sv.push(e, index)) out.push(i);
    index++;
  }
  out.push(...sv.end());
  return out;
}
