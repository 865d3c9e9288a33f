// Capture enforcement (issue 12 item 1; AEP-0001 §8.2, AEP-0003 §6.4): the relay does not
// trust the capture level a sender declares.
//
// 1. At ingest, `makeHonest` re-gates an Event to its *declared* level before it is stored or
//    fanned out: members annotated above that level are removed, `answer.values` below
//    `redacted` keeps only what the request's field spec proves structural, and every string a
//    `redacted` Event may carry as free text goes through the §9.4 pipeline (idempotent, so an
//    honest Event comes out as the very same object and keeps its exact bytes).
// 2. At fan-out, `gateFor` down-levels to the subscriber's ceiling (`downlevel` of
//    @aep/protocol) and, below `full`, also removes every member the payload schema does not
//    annotate (fail closed; a deliberate tightening of AEP-0001 §8.2 step 6, which counts
//    unannotated members as `metadata`: dropping more is always legal, §8.1 step 5).
// Decision and reasons: docs/decisions.md "Relay authority (issue 12)".
import { CAPTURE_TREES, captureRank, downlevel, gateFormValues, redact, structuralValues } from '@aep/protocol';
import type { CaptureLevel, CaptureTree } from '@aep/protocol';
import { isObject, own } from './util.js';

const REDACTED = 2;
const FULL = 3;
const LEVEL: Readonly<Record<string, number>> = { none: 0, metadata: 1, redacted: 2, full: 3 };

/** Field specs of the request an answer refers to, when the relay holds it. */
export type FieldsOf = (ev: Record<string, unknown>) => readonly unknown[] | undefined;

function treeOf(type: unknown): CaptureTree | undefined {
  return typeof type === 'string' && Object.hasOwn(CAPTURE_TREES, type) ? CAPTURE_TREES[type] : undefined;
}

function levelOf(t: CaptureTree): number {
  return LEVEL[t.level] ?? FULL;
}

/** Declared capture rank (absent = metadata; not a level = full, the conservative reading). */
export function declaredRank(ev: Record<string, unknown>): number {
  const c = Object.hasOwn(ev, 'capture') ? ev['capture'] : 'metadata';
  const r = captureRank(c);
  return r < 0 ? FULL : r;
}

/** Copy with `data` replaced (or removed when `data` is undefined), keeping key order. */
function withData(ev: Record<string, unknown>, data: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(ev)) {
    if (k === 'data') {
      if (data !== undefined) out[k] = data;
    } else out[k] = ev[k];
  }
  return out;
}

/** Set an own property (also `__proto__`, which plain assignment would not create). */
function put(o: Record<string, unknown>, k: string, v: unknown): void {
  if (k === '__proto__') Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  else o[k] = v;
}

/**
 * Rebuild an object only when a member changes: `next(key, value)` returns the new value, or
 * undefined to drop the member. Returns `value` itself (no allocation) when nothing changed.
 */
function mapMembers<A>(value: Record<string, unknown>, next: (key: string, v: unknown, a: A) => unknown, a: A): Record<string, unknown> {
  let out: Record<string, unknown> | null = null;
  for (const k in value) {
    if (!own(value, k)) continue;
    const v = value[k];
    const nv = next(k, v, a);
    if (out === null) {
      if (nv === v) continue;
      out = membersBefore(value, k);
    }
    if (nv !== undefined) put(out, k, nv);
  }
  return out ?? value;
}

/**
 * A new object with the own members of `value` that come before `stop` (the start of a lazy
 * copy). Keys are walked with `for...in` and `Object.hasOwn` instead of `Object.keys`: same
 * keys, same order, no array per object on the ingest path (issue 19, the fan-out's garbage).
 */
function membersBefore(value: Record<string, unknown>, stop: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k in value) {
    if (k === stop) break;
    if (own(value, k)) put(out, k, value[k]);
  }
  return out;
}

/** True when `value` has no own enumerable member (no array allocated). */
function noMembers(value: Record<string, unknown>): boolean {
  for (const k in value) if (own(value, k)) return false;
  return true;
}

/**
 * `arr.map((v) => f(v, a, b))`, but `arr` itself (no allocation) when every element maps to
 * itself. `f` gets its context as arguments, so callers pass module-level functions: no closure
 * per array on the ingest path (issue 19, the fan-out's garbage).
 */
function mapItems<A, B>(arr: readonly unknown[], f: (v: unknown, a: A, b: B) => unknown, a: A, b: B): unknown[] {
  let out: unknown[] | null = null;
  for (let i = 0; i < arr.length; i++) {
    const v = arr[i];
    const nv = f(v, a, b);
    if (out === null) {
      if (nv === v) continue;
      out = arr.slice(0, i);
    }
    out.push(nv);
  }
  return out ?? (arr as unknown[]);
}

/**
 * `redact` (pure, default options) memoized for short strings: the text an emitter repeats on
 * every `redacted` Event (form prompts, labels, tool names) runs the §9.4 regex pipeline once,
 * not per Event (issue 19 profile: ~6 % of the ingest thread). Same result by construction;
 * bounded (cleared when full).
 */
const REDACT_MEMO = new Map<string, string>();
const REDACT_MEMO_MAX = 8192;
function redactMemo(text: string): string {
  if (text.length > 512) return redact(text);
  const hit = REDACT_MEMO.get(text);
  if (hit !== undefined) return hit;
  const out = redact(text);
  if (REDACT_MEMO.size >= REDACT_MEMO_MAX) REDACT_MEMO.clear();
  REDACT_MEMO.set(text, out);
  return out;
}

/** Run the §9.4 text pipeline over every string in a value (keys untouched); same reference when nothing changed. */
function redactStrings(v: unknown): unknown {
  if (typeof v === 'string') {
    const r = redactMemo(v);
    // Unchanged text keeps the received string itself (=== keeps the raw bytes, see makeHonest).
    return r === v ? v : r;
  }
  if (Array.isArray(v)) {
    return mapItems(v, redactStrings, undefined, undefined);
  }
  if (isObject(v)) return mapMembers(v, redactMember, undefined);
  return v;
}

const redactMember = (_k: string, x: unknown): unknown => redactStrings(x);

/** Choice ids by select field id, from a request's field specs. */
function choiceIds(fields: readonly unknown[]): Map<string, Set<string>> {
  const ids = new Map<string, Set<string>>();
  for (const f of fields) {
    if (!isObject(f) || typeof f['id'] !== 'string' || f['type'] !== 'select' || !Array.isArray(f['choices'])) continue;
    ids.set(
      f['id'],
      new Set(
        (f['choices'] as unknown[])
          .filter(isObject)
          .map((c) => c['id'])
          .filter((x): x is string => typeof x === 'string'),
      ),
    );
  }
  return ids;
}
const NO_CHOICES = new Map<string, Set<string>>();

/** Strings of `answer.values` that are choice ids of their select field (structural, never redacted). */
function valuesAtRedacted(values: unknown, fields: readonly unknown[] | undefined): unknown {
  if (!isObject(values)) return values;
  return mapMembers(values, valueAtRedacted, fields === undefined ? NO_CHOICES : choiceIds(fields));
}

/** One member of `answer.values` at `redacted`: choice ids kept, other text through §9.4. */
function valueAtRedacted(k: string, v: unknown, ids: Map<string, Set<string>>): unknown {
  const choices = ids.get(k);
  if (typeof v === 'string') {
    if (choices !== undefined && choices.has(v)) return v;
    const r = redactMemo(v);
    return r === v ? v : r;
  }
  if (Array.isArray(v)) return mapItems(v, itemAtRedacted, choices, undefined);
  return v;
}

function itemAtRedacted(x: unknown, choices: Set<string> | undefined): unknown {
  return typeof x === 'string' && choices !== undefined && choices.has(x) ? x : redactStrings(x);
}

interface HonestCtx {
  declared: number;
  fields: readonly unknown[] | undefined;
  /** The honest value keeps a member no annotation covers (its raw rank is then `full`). */
  unannotated: boolean;
}

/** Prune one value to the declared level (step 1 above); same reference when already honest. */
function honestValue(value: unknown, tree: CaptureTree, ctx: HonestCtx): unknown {
  if (Array.isArray(value)) {
    if (!tree.items) return value;
    const items = tree.items;
    return mapItems(value, honestValue, items, ctx);
  }
  if (!isObject(value) || !tree.properties) return value;
  // The hot ingest path: an inlined lazy copy (no closure, no allocation for an honest object).
  const props = tree.properties;
  let out: Record<string, unknown> | null = null;
  for (const key in value) {
    if (!own(value, key)) continue;
    const v = value[key];
    const child = Object.hasOwn(props, key) ? props[key] : undefined;
    const nv = child ? honestMember(v, child, ctx) : v; // unannotated: kept here, gated at fan-out
    if (child === undefined) ctx.unannotated = true;
    if (out === null) {
      if (nv === v) continue;
      out = membersBefore(value, key);
    }
    if (nv !== undefined) put(out, key, nv);
  }
  return out ?? value;
}

/** True when `annotatedOnly(value, tree)` would remove something (no allocation). */
function hasUnannotated(value: unknown, tree: CaptureTree): boolean {
  if (Array.isArray(value)) {
    if (!tree.items) return false;
    for (let i = 0; i < value.length; i++) if (hasUnannotated(value[i], tree.items)) return true;
    return false;
  }
  if (!isObject(value) || !tree.properties) return false;
  const props = tree.properties;
  for (const key in value) {
    if (!own(value, key)) continue;
    const child = Object.hasOwn(props, key) ? props[key] : undefined;
    if (child === undefined) return true;
    if ((child.properties !== undefined || child.items !== undefined) && hasUnannotated(value[key], child)) return true;
  }
  return false;
}

/** One annotated member at the declared level: itself, a gated copy, or undefined (removed). */
function honestMember(v: unknown, child: CaptureTree, ctx: HonestCtx): unknown {
  const lvl = levelOf(child);
  if (lvl > ctx.declared) return undefined; // annotated above what the Event claims: the lie
  if (child.exception === 'values') return notWalked(honestValues(v, ctx), child, ctx);
  if (child.exception) return notWalked(ctx.declared === REDACTED ? redactStrings(v) : v, child, ctx);
  if (lvl === REDACTED && ctx.declared === REDACTED) return notWalked(redactStrings(v), child, ctx);
  if (child.properties === undefined && child.items === undefined) return v;
  return honestValue(v, child, ctx);
}

/** `answer.values` at the declared level (the `values` exception); undefined: removed. */
function honestValues(v: unknown, ctx: HonestCtx): unknown {
  const nv = ctx.declared < REDACTED ? (ctx.fields ? gateFormValues(ctx.fields, v, 'metadata') : structuralValues(v)) : valuesAtRedacted(v, ctx.fields);
  // Nothing was dropped or rewritten: keep the original object (and so the raw bytes).
  if (nv === v) return v;
  if (isObject(nv) && isObject(v) && Object.keys(nv).length === Object.keys(v).length && Object.keys(v).every((k) => nv[k] === v[k])) return v;
  return Object.keys(nv as object).length === 0 && !isObject(v) ? undefined : nv;
}

/**
 * A member kept (or rewritten) without `honestValue` walking its annotations: the raw rank
 * (`ctx.unannotated`) still has to know whether it holds something no annotation covers.
 */
function notWalked(nv: unknown, child: CaptureTree, ctx: HonestCtx): unknown {
  if (nv !== undefined && !ctx.unannotated && (child.properties !== undefined || child.items !== undefined) && hasUnannotated(nv, child))
    ctx.unannotated = true;
  return nv;
}

/**
 * The Event made honest for its declared capture, or `ev` itself (===) when it already is.
 * `ranked`, when given, receives `rawRank` of the result, found in the same walk (issue 19: the
 * ingest path walked the payload a second time for it).
 * `none` carries no `data`; `full` carries anything; in between, members annotated above the
 * declared level are removed, `answer.values` is gated with the request's fields (the hop
 * rule when the relay does not hold the request), and at `redacted` the free text passes the
 * §9.4 pipeline. Members without an annotation are left to `gateFor` (they reach only `full`).
 */
export function makeHonest(ev: Record<string, unknown>, fieldsOf?: FieldsOf, ranked?: { rank: number }): Record<string, unknown> {
  if (!Object.hasOwn(ev, 'data')) {
    if (ranked) ranked.rank = declaredRank(ev);
    return ev;
  }
  const declared = declaredRank(ev);
  if (declared === 0) {
    if (ranked) ranked.rank = 0;
    return withData(ev, undefined);
  }
  if (declared === FULL) {
    if (ranked) ranked.rank = FULL;
    return ev;
  }
  const tree = treeOf(ev['type']);
  const data = ev['data'];
  if (!tree || !tree.properties || !isObject(data)) {
    if (ranked) ranked.rank = isObject(data) && noMembers(data) ? declared : FULL;
    return ev;
  }
  const needsFields = ev['type'] === 'attention.answered' || ev['type'] === 'control.attention.respond';
  const ctx: HonestCtx = { declared, fields: needsFields && fieldsOf ? fieldsOf(ev) : undefined, unannotated: false };
  const out = honestValue(data, tree, ctx);
  if (ranked) ranked.rank = ctx.unannotated ? FULL : declared;
  return out === data ? ev : withData(ev, out);
}

/** Remove every member the payload schema does not annotate; same reference when there is none. */
function annotatedOnly(value: unknown, tree: CaptureTree): unknown {
  if (Array.isArray(value)) {
    if (!tree.items) return value;
    const items = tree.items;
    return mapItems(value, annotatedOnly, items, undefined);
  }
  // A node without `properties` annotates its whole value (a leaf, `answer.values`, free-form metadata).
  if (!isObject(value) || !tree.properties) return value;
  const props = tree.properties;
  let out: Record<string, unknown> | null = null;
  for (const key in value) {
    if (!own(value, key)) continue;
    const v = value[key];
    const child = Object.hasOwn(props, key) ? props[key] : undefined;
    const nv = child === undefined ? undefined : child.properties === undefined && child.items === undefined ? v : annotatedOnly(v, child);
    if (out === null) {
      if (nv === v) continue;
      out = membersBefore(value, key);
    }
    if (nv !== undefined) put(out, key, nv);
  }
  return out ?? value;
}

/** `ev` without unannotated `data` members (a type without an annotated schema loses its whole `data`). */
export function dropUnannotated(ev: Record<string, unknown>): Record<string, unknown> {
  if (!Object.hasOwn(ev, 'data')) return ev;
  const data = ev['data'];
  const tree = treeOf(ev['type']);
  if (!tree || !tree.properties || noMembers(tree.properties) || !isObject(data)) {
    return isObject(data) && noMembers(data) ? ev : withData(ev, undefined);
  }
  const out = annotatedOnly(data, tree);
  return out === data ? ev : withData(ev, out);
}

/**
 * The lowest ceiling rank at which `ev` (already honest) is delivered as received: its declared
 * rank, or `full` when it carries members no annotation covers.
 */
export function rawRank(ev: Record<string, unknown>): number {
  const d = declaredRank(ev);
  if (d === FULL) return FULL;
  return dropUnannotated(ev) === ev ? d : FULL;
}

/** What a subscriber with `ceiling` receives (step 2 above); `ev` itself when nothing changes. */
export function gateFor(ev: Record<string, unknown>, ceiling: CaptureLevel): Record<string, unknown> {
  const out = downlevel(ev, ceiling);
  return captureRank(ceiling) >= FULL ? out : dropUnannotated(out);
}
