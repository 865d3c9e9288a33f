// Cross-event (stream) rules (AEP-0001 §7; AEP-0002 §2 conv. 5, §5.3, §7; AEP-0004 §3; AEP-0006).
// Incremental: push events one at a time; memory is bounded by live state (per-session positions,
// terminals, open attention requests) plus a bounded window of (source, id) fingerprints, never
// by the events themselves. Per-session state is keyed by (source, session) (AEP-0001 §5.2);
// dedupe by (source, id) (AEP-0001 §7.4).
import type { Issue } from './issue.js';
import { RULES, issue, type RuleId } from './rules.js';
import { envelopeFastValid, scopeClass } from './envelope.js';
import { validateEvent, type ValidateOptions } from './validate.js';
import { validateFormAnswer, formAnswerMustHold, indexFields, choiceIds, type FieldSpec } from './forms.js';
import { KeyTable, keyHash, keyList, type KeyList } from './key-table.js';

export { keyHash } from './key-table.js';

/** Options of {@link StreamValidator}. */
export interface StreamValidatorOptions {
  /**
   * How many (source, id) fingerprints are remembered for dedupe and id-conflict detection
   * (oldest forgotten first). Default 1,000,000 (about 100 MB worst case). A repeat older than
   * the window is not recognized as redelivery.
   */
  dedupeWindow?: number;
  /**
   * Compare events by their raw JSON text (`push(e, i, { raw })`): an identical repeat must be
   * byte-identical, exactly AEP-0001 §7.4's redelivery; hashing is exact and cheap. Pass `raw`
   * for every event (missing text falls back to `JSON.stringify(event)`). Default false: a
   * structural fingerprint of the parsed value (see {@link fingerprint}).
   */
  rawFingerprints?: boolean;
}

/** Hints the caller may pass to {@link StreamValidator.push}. */
export interface PushHints {
  /** The envelope verdict the caller already has (skips re-checking the envelope). */
  envelopeValid?: boolean;
  /** The event's raw JSON text (used when the validator was built with `rawFingerprints`). */
  raw?: string;
  /**
   * The bytes `raw` was decoded from (UTF-8), as `bytes[start..end)`, when the caller read them
   * (`aep validate`): the fingerprint is then computed over them instead of encoding `raw` again.
   * `raw` must be their decoding; a range holding any non-ASCII byte is ignored (`raw` is used),
   * and so are bytes passed without `raw`.
   */
  bytes?: Uint8Array;
  start?: number;
  end?: number;
}

/** Default of {@link StreamValidatorOptions.dedupeWindow}. */
export const DEFAULT_DEDUPE_WINDOW = 1_000_000;

/** An open attention request (closed ones are only a terminal fingerprint in the closed units). */
interface RequestInfo {
  /** Field index of a `kind: "form"` request (undefined otherwise). */
  fields: Map<string, FieldSpec> | undefined;
  /** Raw fields array for validateFormAnswer. */
  rawFields: unknown;
  /** Order of the request among its session's requests (first seen first), for reports. */
  order: number;
}

interface SessionState {
  hasPos: boolean;
  epoch: number;
  seq: number;
  ended: number | undefined;
  /** Namespace of this session's closed units in the validator's closed-unit table. */
  readonly ns: number;
  /** Closed units, oldest first: run terminals (run -> fp), closed attention requests (id -> fp, order), acks (cause -> fp). */
  readonly runs: KeyList;
  readonly closed: KeyList;
  readonly acks: KeyList;
  /** Open attention requests. */
  requests: Map<string, RequestInfo>;
  /** Order number of the next request first seen in this session. */
  nextOrder: number;
}

/** Closed-unit kinds, the low two bits of a closed unit's namespace. */
const RUNS = 0;
const CLOSED_REQUESTS = 1;
const ACKS = 2;

/** The sessions of one source (session -> state), with the source's dedupe bookkeeping. */
class SourceState extends Map<string, SessionState> {
  /** Window entries naming this source. */
  refs = 0;
  /** The session looked up last, and its state (sources usually emit for one session at a time). */
  lastName = '\u0000';
  lastState: SessionState | undefined = undefined;
  constructor(
    readonly name: string,
    /** Slot number, used in the dedupe window instead of the source string. */ readonly slot: number,
  ) {
    super();
  }
}

// Fingerprint lanes: two 32-bit multiplicative hashes, combined into a 53-bit number.
let h1 = 0;
let h2 = 0;
function mix(c: number): void {
  h1 = Math.imul(h1 ^ c, 2654435761);
  h2 = Math.imul(h2 ^ c, 1597334677);
}

/** Strings up to this length are hashed in full; longer ones by length and samples. */
const FULL_STRING = 32;
/** Nesting deeper than this is summarized by a marker (no recursion limit issues). */
const MAX_DEPTH = 48;

function mixString(s: string): void {
  const n = s.length;
  mix(n);
  if (n <= FULL_STRING) {
    let i = 0;
    for (; i + 1 < n; i += 2) mix(s.charCodeAt(i) | (s.charCodeAt(i + 1) << 16));
    if (i < n) mix(s.charCodeAt(i));
    return;
  }
  // first 8 and last 8 characters, and 16 evenly spaced ones (two per mix)
  for (let i = 0; i < 8; i++) mix(s.charCodeAt(i) | (s.charCodeAt(n - 1 - i) << 16));
  const step = Math.floor(n / 17);
  for (let i = 1; i <= 16; i += 2) mix(s.charCodeAt(i * step) | (s.charCodeAt((i + 1) * step) << 16));
}

function mixValue(v: unknown, depth: number): void {
  switch (typeof v) {
    case 'string':
      mix(1);
      mixString(v);
      return;
    case 'number':
      mix(2);
      if (Number.isInteger(v) && v >= -2147483648 && v <= 2147483647) mix(v | 0);
      else mixString(String(v));
      return;
    case 'boolean':
      mix(v ? 3 : 4);
      return;
    case 'object': {
      if (v === null) {
        mix(5);
        return;
      }
      if (depth > MAX_DEPTH) {
        mix(10);
        return;
      }
      if (Array.isArray(v)) {
        mix(6);
        mix(v.length);
        for (let i = 0; i < v.length; i++) mixValue(v[i], depth + 1);
        return;
      }
      mix(7);
      for (const k in v) {
        mixString(k);
        mixValue((v as Record<string, unknown>)[k], depth + 1);
      }
      return;
    }
    default:
      mix(9);
  }
}

const encoder = new TextEncoder();
/** Characters encoded per step: bounds the scratch buffer whatever the line length. */
const CHUNK = 1 << 16;
const bytes = new Uint8Array(CHUNK * 3 + 8);
const words = new Int32Array(bytes.buffer);

/**
 * Exact 53-bit hash of the UTF-8 bytes of `text` (two 32-bit multiplicative lanes over 4-byte
 * words). Used for byte-identical redelivery checks on raw JSONL lines (AEP-0001 §7.4); about
 * a tenth of the cost of parsing the same text. Long texts are encoded in chunks into a fixed
 * 192 KiB scratch buffer (never split inside a surrogate pair).
 */
export function fingerprintText(text: string): number {
  let a = 0xdeadbeef ^ text.length;
  let b = 0x41c6ce57;
  for (let start = 0; start < text.length || start === 0;) {
    let end = Math.min(text.length, start + CHUNK);
    if (end < text.length) {
      const c = text.charCodeAt(end - 1);
      if (c >= 0xd800 && c <= 0xdbff) end--;
    }
    const written = encoder.encodeInto(start === 0 && end === text.length ? text : text.slice(start, end), bytes).written;
    const n = written >>> 2;
    for (let i = 0; i < n; i++) {
      const c = words[i]!;
      a = Math.imul(a ^ c, 2654435761);
      b = Math.imul(b ^ c, 1597334677);
    }
    for (let i = n << 2; i < written; i++) {
      const c = bytes[i]!;
      a = Math.imul(a ^ c, 2654435761);
      b = Math.imul(b ^ c, 1597334677);
    }
    if (end >= text.length) break;
    start = end;
  }
  a = Math.imul(a ^ (a >>> 16), 2246822507) ^ Math.imul(b ^ (b >>> 13), 3266489909);
  b = Math.imul(b ^ (b >>> 16), 2246822507) ^ Math.imul(a ^ (a >>> 13), 3266489909);
  return 4294967296 * (2097151 & b) + (a >>> 0);
}

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
let viewOf: Uint8Array | undefined;
let view: DataView | undefined;

/**
 * {@link fingerprintText} of the text `bytes[start..end)` decodes to, computed over the bytes
 * (no encoding step), or -1 when the range holds a non-ASCII byte. Equal by construction for an
 * ASCII range: its UTF-8 encoding is itself, one byte per UTF-16 unit, so the text is hashed in
 * the same 4-byte words (read in the platform's byte order, as the `Int32Array` over the
 * scratch buffer reads them) and 65,536-unit steps end on word boundaries. Pinned against
 * fingerprintText by a property test (test/stream.test.ts).
 */
export function fingerprintAscii(bytes: Uint8Array, start: number, end: number): number {
  if (viewOf !== bytes) {
    view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    viewOf = bytes;
  }
  const dv = view!;
  const len = end - start;
  let a = 0xdeadbeef ^ len;
  let b = 0x41c6ce57;
  let high = 0;
  const words = start + (len & ~3);
  let i = start;
  for (; i < words; i += 4) {
    const c = dv.getInt32(i, LITTLE_ENDIAN);
    high |= c;
    a = Math.imul(a ^ c, 2654435761);
    b = Math.imul(b ^ c, 1597334677);
  }
  for (; i < end; i++) {
    const c = bytes[i]!;
    high |= c;
    a = Math.imul(a ^ c, 2654435761);
    b = Math.imul(b ^ c, 1597334677);
  }
  if ((high & 0x80808080) !== 0) return -1;
  a = Math.imul(a ^ (a >>> 16), 2246822507) ^ Math.imul(b ^ (b >>> 13), 3266489909);
  b = Math.imul(b ^ (b >>> 16), 2246822507) ^ Math.imul(a ^ (a >>> 13), 3266489909);
  return 4294967296 * (2097151 & b) + (a >>> 0);
}

/**
 * Content fingerprint of a JSON value (53 bits), used to tell a redelivery (identical event)
 * from a conflict (same (source, id), other content; AEP-0001 §7.4) without keeping events.
 * Equal JSON values (same members in the same order) always give equal fingerprints, so a
 * differing fingerprint proves different content (no false conflict). Cost is bounded: strings
 * longer than 32 characters are sampled (length, first and last 8, 16 spaced characters) and
 * nesting below 48 levels is summarized, so two events differing only there are taken as equal
 * (docs/decisions.md). Never recurses deeper than 48 levels.
 */
export function fingerprint(value: unknown): number {
  h1 = 0xdeadbeef;
  h2 = 0x41c6ce57;
  mixValue(value, 0);
  const a = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  const b = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(a ^ (a >>> 13), 3266489909);
  return 4294967296 * (2097151 & b) + (a >>> 0);
}

/**
 * Per session, how many closed units of each kind (run terminals, acks, closed attention
 * requests) are remembered for duplicate detection; the oldest are forgotten beyond it, so memory
 * stays bounded on endless streams. When one more would exceed it, the oldest tenth (by the order
 * they closed) is forgotten at once (down to 90 %), so the eviction cost is paid once per thousand
 * units, not on every one. Open attention requests are live state: never evicted, not counted.
 */
export const CLOSED_PER_SESSION = 10_000;

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
  private readonly raw: boolean;
  /** The dedupe window: (source slot, id) -> content fingerprint of the last `window` distinct ids. */
  private readonly ids: KeyTable;
  /** The oldest-first list of the dedupe window's entries. */
  private readonly idList = keyList();
  /** Closed units of every session (see SessionState), namespaced by session and kind. */
  private readonly closedUnits = new KeyTable(0x7fffffff, { aux: true });
  /** Sessions created so far (numbers the closed-unit namespaces). */
  private sessionCount = 0;
  /** Per-validator hash seed, so crafted ids cannot be aimed at one probe chain. */
  private readonly seed = (Math.random() * 0x100000000) | 0;
  /**
   * source -> its slot number, live sessions and how many window entries name it (AEP-0001 §5.2:
   * per-session state keyed by (source, session)). A source without sessions leaves with its
   * last window entry, so this map is bounded by live sessions plus the window.
   */
  private readonly sessions = new Map<string, SourceState>();
  /** Reusable source slot numbers (sources that left). */
  private readonly freeSlots: number[] = [];
  private nextSlot = 0;
  /** Source state by slot number (for eviction). */
  private readonly sourceBySlot: (SourceState | undefined)[] = [];
  /** Live requests by bare `session` + request id, for foreign commands (AEP-0001 §7.4). */
  private readonly requestsBySessionName = new Map<string, Map<string, RequestInfo>>();
  /** Entries of `requestsBySessionName`. */
  private openRequestCount = 0;
  /** Issues of the event being pushed (allocated on the first one only). */
  private issues: Issue[] | undefined = undefined;
  private issueIndex = 0;

  constructor(opts: StreamValidatorOptions = {}) {
    const w = opts.dedupeWindow ?? DEFAULT_DEDUPE_WINDOW;
    this.window = Number.isInteger(w) && w > 0 ? w : DEFAULT_DEDUPE_WINDOW;
    this.raw = opts.rawFingerprints === true;
    this.ids = new KeyTable(this.window);
  }

  /** Number of (source, id) fingerprints currently held (for memory accounting). */
  get rememberedIds(): number {
    return this.ids.size;
  }

  /**
   * What the validator holds, for memory accounting (tests pin the bounds): window entries held
   * and allocated (at most the window), entries whose id is kept as a string (ids of more than 40
   * characters or with a character above U+00FF), sources remembered (those with sessions or
   * window entries), source slot numbers ever handed out (reused when a source leaves), and
   * requests open for foreign commands.
   */
  get footprint(): { ids: number; allocatedIds: number; stringIds: number; sources: number; sourceSlots: number; openRequests: number; closedUnits: number } {
    return {
      ids: this.ids.size,
      allocatedIds: this.ids.allocated,
      stringIds: this.ids.stringKeys,
      sources: this.sessions.size,
      sourceSlots: this.sourceBySlot.length,
      openRequests: this.openRequestCount,
      closedUnits: this.closedUnits.size,
    };
  }

  /**
   * Applies the stream rules to the next event; `index` is its position in the stream.
   * Events with an invalid envelope take no part in the stream rules. `hints` may pass the
   * envelope verdict the caller already has, and the raw text (see `rawFingerprints`).
   */
  push(event: unknown, index: number, hints?: PushHints): Issue[] {
    try {
      if (!(hints?.envelopeValid ?? envelopeFastValid(event))) return [];
      const fp = this.raw ? this.rawFingerprint(event, hints) : fingerprint(event);
      return this.pushUnsafe(event, index, fp);
    } catch {
      return [];
    }
  }

  /** fingerprintText of the event's raw text, over its bytes when the caller has them (ASCII). */
  private rawFingerprint(event: unknown, hints: PushHints | undefined): number {
    const bytes = hints?.bytes;
    if (bytes !== undefined && hints!.raw !== undefined) {
      const fp = fingerprintAscii(bytes, hints!.start ?? 0, hints!.end ?? bytes.length);
      if (fp >= 0) return fp;
    }
    return fingerprintText(hints?.raw ?? JSON.stringify(event));
  }

  /**
   * Prepares for about `events` more events (e.g. estimated from a file's size): the dedupe
   * window's index is sized once instead of doubling its way there. Changes no verdict.
   */
  reserve(events: number): void {
    if (Number.isFinite(events) && events > 0) this.ids.reserve(this.ids.size + Math.ceil(events));
  }

  /** Issues decidable only at the end of the stream (none in AEP 0.1). */
  end(): Issue[] {
    return [];
  }

  /** Remembers (source, id) -> fp, forgetting the oldest entry beyond the window. */
  private remember(src: SourceState, id: string, h: number, fp: number): void {
    src.refs++; // first, so evicting this source's own oldest entry cannot drop it
    if (this.idList.count === this.window) {
      const old = this.sourceBySlot[this.ids.removeOldest(this.idList)]!;
      if (--old.refs === 0 && old.size === 0) this.dropSource(old);
    }
    this.ids.add(this.idList, src.slot, id, h, fp);
  }

  private sourceState(source: string): SourceState {
    let st = this.sessions.get(source);
    if (st === undefined) {
      const slot = this.freeSlots.length > 0 ? this.freeSlots.pop()! : this.nextSlot++;
      st = new SourceState(source, slot);
      this.sessions.set(source, st);
      this.sourceBySlot[slot] = st;
    }
    return st;
  }

  private dropSource(st: SourceState): void {
    this.sessions.delete(st.name);
    this.sourceBySlot[st.slot] = undefined;
    this.freeSlots.push(st.slot);
  }

  /** The state of a session seen for the first time. */
  private newSession(src: SourceState, session: string): SessionState {
    const st: SessionState = {
      hasPos: false,
      epoch: 0,
      seq: -1,
      ended: undefined,
      ns: this.sessionCount++ * 4,
      runs: keyList(),
      closed: keyList(),
      acks: keyList(),
      requests: new Map(),
      nextOrder: 0,
    };
    src.set(session, st);
    return st;
  }

  /**
   * Sets (or with `info` undefined, deletes) the open request `id` of bare session name
   * `session`, for foreign commands. Keyed by the two strings separately: the stream rules have
   * just hashed both (a joined key was a new string to build and hash per request).
   */
  private openByName(session: string, id: string, info: RequestInfo | undefined): void {
    let byId = this.requestsBySessionName.get(session);
    if (info !== undefined) {
      if (byId === undefined) this.requestsBySessionName.set(session, (byId = new Map()));
      const before = byId.size;
      byId.set(id, info);
      this.openRequestCount += byId.size - before;
    } else if (byId !== undefined && byId.delete(id)) {
      this.openRequestCount--;
      if (byId.size === 0) this.requestsBySessionName.delete(session);
    }
  }

  /** Namespace and key hash of the closed unit `closedUnit` looked up last (for `close`). */
  private unitNs = 0;
  private unitHash = 0;

  /** The closed unit `key` of `kind` in session `st` (an entry of `closedUnits`), or -1. */
  private closedUnit(st: SessionState, kind: number, key: string): number {
    const ns = st.ns + kind;
    this.unitNs = ns;
    this.unitHash = keyHash(this.seed, ns, key);
    return this.closedUnits.find(ns, key, this.unitHash);
  }

  /**
   * Remembers the closed unit `key` that `closedUnit` was last asked for and did not find, with
   * its terminal's fingerprint (its key hash is not computed twice), forgetting the oldest tenth
   * of the session's units of that kind first when it holds CLOSED_PER_SESSION.
   */
  private close(list: KeyList, key: string, fp: number, order: number): void {
    if (list.count >= CLOSED_PER_SESSION) {
      const keep = CLOSED_PER_SESSION * 0.9 - 1;
      while (list.count > keep) this.closedUnits.removeOldest(list);
    }
    this.closedUnits.add(list, this.unitNs, key, this.unitHash, fp, order);
  }

  private add(rule: RuleId, path: string, message: string): void {
    (this.issues ??= []).push({ ...issue(rule, path, `${message} (${RULES[rule].meaning})`), index: this.issueIndex });
  }

  private pushUnsafe(event: unknown, index: number, fp: number): Issue[] {
    this.issues = undefined;
    this.issueIndex = index;
    this.check(event as Record<string, unknown>, fp);
    return this.issues ?? [];
  }

  private check(e: Record<string, unknown>, fp: number): void {
    const source = e['source'] as string;
    const id = e['id'] as string;
    const type = e['type'] as string;
    const src = this.sourceState(source);
    const h = keyHash(this.seed, src.slot, id);
    const seen = this.ids.find(src.slot, id, h);
    if (seen >= 0) {
      if (this.ids.value(seen) !== fp) this.add('stream.id-conflict', '/id', `id "${id}" of source ${source} already named a different event`);
      // An identical repeat is redelivery: it was judged the first time (AEP-0001 §7.4).
      return;
    }
    this.remember(src, id, h, fp);
    const session = e['session'];
    if (typeof session !== 'string') return;
    const cls = scopeClass(type);
    if (cls === 'foreign') {
      if (type === 'control.attention.respond') this.checkValuesCapture(e, this.requestsBySessionName.get(session)?.get(String(e['subject'])));
      return;
    }
    let st = src.lastName === session ? src.lastState : undefined;
    if (st === undefined) {
      st = src.get(session) ?? this.newSession(src, session);
      src.lastName = session;
      src.lastState = st;
    }
    // (epoch, seq) ordering in emission order (AEP-0001 §7.2).
    const seq = e['seq'] as number;
    const epoch = (e['epoch'] as number | undefined) ?? 0;
    if (!st.hasPos) {
      st.hasPos = true;
      st.epoch = epoch;
      st.seq = seq;
    } else if (epoch < st.epoch) {
      this.add('stream.epoch-regression', '/epoch', `epoch ${epoch} after epoch ${st.epoch} in session "${session}" of ${source}`);
    } else if (epoch === st.epoch && seq === st.seq) {
      this.add('stream.position-duplicate', '/seq', `position (${epoch}, ${seq}) of session "${session}" is already taken by another event`);
    } else if (epoch === st.epoch && seq < st.seq) {
      this.add('stream.seq-regression', '/seq', `seq ${seq} after seq ${st.seq} in epoch ${epoch} of session "${session}"`);
    } else {
      st.epoch = epoch;
      st.seq = seq;
    }
    const subject = e['subject'];
    const data = e['data'];
    switch (type) {
      case 'run.finished':
      case 'run.failed':
      case 'run.cancelled': {
        const run = e['run'];
        if (typeof run !== 'string') break;
        const unit = this.closedUnit(st, RUNS, run);
        if (unit < 0) this.close(st.runs, run, fp, 0);
        else if (this.closedUnits.value(unit) !== fp)
          this.add('stream.run-terminal-duplicate', '/type', `run "${run}" already reached a terminal; ${type} is a second one`);
        break;
      }
      case 'session.ended': {
        if (st.ended !== undefined) {
          if (st.ended !== fp) this.add('stream.session-ended-duplicate', '/type', `session "${session}" already has a different session.ended`);
          break;
        }
        st.ended = fp;
        // In the order the requests were first seen (a request re-opened after it closed keeps its place).
        const open = [...st.requests].sort((a, b) => a[1].order - b[1].order);
        for (const [reqId] of open) {
          this.add(
            'stream.attention-open-at-session-end',
            '',
            `attention request "${reqId}" has no attention.resolved or attention.timeout before session.ended`,
          );
        }
        break;
      }
      case 'attention.requested': {
        const form = isObj(data) && data['kind'] === 'form' && Array.isArray(data['fields']);
        const prev = st.requests.get(id);
        let order: number;
        if (prev !== undefined) order = prev.order;
        else {
          const unit = this.closedUnit(st, CLOSED_REQUESTS, id);
          order = unit >= 0 ? this.closedUnits.aux(unit) : st.nextOrder++;
        }
        const info: RequestInfo = { fields: form ? indexFields(data['fields']) : undefined, rawFields: form ? data['fields'] : undefined, order };
        st.requests.set(id, info);
        this.openByName(session, id, info);
        break;
      }
      case 'attention.answered': {
        if (typeof subject !== 'string') break;
        const req = st.requests.get(subject);
        // The full validator (pointers, messages) runs only when the allocation-free verdict of
        // the same two rules says something is wrong (issue 19; equivalence: forms-fast.test.ts).
        if (
          req?.fields !== undefined &&
          isObj(data) &&
          isObj(data['answer']) &&
          isObj(data['answer']['values']) &&
          !formAnswerMustHold(req.fields, data['answer']['values'])
        ) {
          // Only the spec's MUST rules (strict: false): the hardening rules are the emitter's call.
          const gated = (e['capture'] ?? 'metadata') !== 'redacted' && e['capture'] !== 'full';
          for (const i of validateFormAnswer(req.rawFields, data['answer']['values'], { strict: false, basePath: '/data/answer/values' })) {
            if (i.rule === 'form.choice-forged') this.add(i.rule, i.path, i.message);
            if (i.rule === 'form.required-missing') {
              // Below `redacted` the emitter records values gated (AEP-0006 §5.2): a required
              // string field, or an `other` select answered with free text, is dropped from the
              // record, so its absence is not a violation. Structural entries survive gating.
              const f = req.fields.get(i.path.slice('/data/answer/values/'.length).replace(/~1/g, '/').replace(/~0/g, '~'));
              if (gated && f !== undefined && (f.type === 'string' || (f.type === 'select' && f.other === true))) continue;
              this.add(i.rule, i.path, i.message);
            }
          }
        }
        this.checkValuesCapture(e, req);
        break;
      }
      case 'attention.resolved':
      case 'attention.timeout': {
        if (typeof subject !== 'string') break;
        const req = st.requests.get(subject);
        const unit = this.closedUnit(st, CLOSED_REQUESTS, subject);
        if (req !== undefined || unit < 0) {
          // Closing an open request, or one not in this stream (e.g. a partial recording): still
          // remember the terminal so a second, different one is caught.
          if (req !== undefined) st.requests.delete(subject);
          if (unit >= 0) {
            // Re-opened after it closed (its id left the dedupe window): it keeps its place.
            this.closedUnits.setValue(unit, fp);
          } else this.close(st.closed, subject, fp, req !== undefined ? req.order : st.nextOrder++);
          this.openByName(session, subject, undefined);
        } else if (this.closedUnits.value(unit) !== fp) {
          this.add('stream.attention-terminal-duplicate', '/type', `attention request "${subject}" was already closed; ${type} is a second terminal`);
        }
        break;
      }
      case 'control.accepted':
      case 'control.rejected': {
        const cause = e['cause'];
        if (typeof cause !== 'string') break;
        const unit = this.closedUnit(st, ACKS, cause);
        if (unit < 0) this.close(st.acks, cause, fp, 0);
        else if (this.closedUnits.value(unit) !== fp) this.add('stream.ack-conflict', '/type', `command "${cause}" already has a different ack from ${source}`);
        break;
      }
      default:
        break;
    }
    return;
  }

  /**
   * Capture honesty of `answer.values` at `metadata` (AEP-0002 §5.3, AEP-0006 §5.2): with the
   * request's field_spec, a string entry survives only as a choice id of a select field.
   */
  private checkValuesCapture(e: Record<string, unknown>, req: RequestInfo | undefined): void {
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
          this.add('capture.values-free-text', path, `"other" free text for field "${key}" at capture metadata`);
        }
      } else if (typeof v === 'string') {
        this.add('capture.values-free-text', path, `string entry for ${f.type} field "${key}" at capture metadata`);
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
    let envelopeValid = true;
    for (const i of validateEvent(e, opts)) {
      if (i.rule.startsWith('envelope.')) envelopeValid = false;
      out.push({ ...i, index });
    }
    for (const i of sv.push(e, index, { envelopeValid })) out.push(i);
    index++;
  }
  out.push(...sv.end());
  return out;
}
