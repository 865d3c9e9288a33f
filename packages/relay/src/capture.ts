// Capture enforcement (issue 12 item 1; AEP-0001 §8.2; brief 01 §8, 05 §11): the relay does not
// trust the capture level a sender declares.
//
// 1. At ingest, `makeHonest` re-gates an Event to its *declared* level before it is stored or
//    fanned out: members annotated above that level are removed, `answer.values` below
//    `redacted` keeps only what the request's field spec proves structural, and every string a
//    `redacted` Event may carry as free text goes through the §9.4 pipeline (idempotent, so an
//    honest Event comes out as the very same object and keeps its exact bytes).
// 2. At fan-out, `gateFor` down-levels to the subscriber's ceiling (`downlevel` of
//    @aep/protocol) and, below `full`, also removes every member the payload schema does not
//    annotate (fail closed; a deliberate tightening of brief 01 §8.1 step 6, which counts
//    unannotated members as `metadata`: dropping more is always legal, §8.1 step 5).
// Decision and reasons: docs/decisions.md "Relay authority (issue 12)".
import { CAPTURE_TREES, captureRank, downlevel, gateFormValues, redact, structuralValues } from '@aep/protocol';
import type { CaptureLevel, CaptureTree } from '@aep/protocol';
import { isObject } from './util.js';

const REDACTED = 2;
const FULL = 3;
const LEVEL: Readonly<Record<string, number>> = { none: 0, metadata: 1, redacted: 2, full: 3 };

/** Field specs of the request an answer refers to, when the relay holds it. */
export type FieldsOf = (ev: Record<string, unknown>) => readonly unknown[] | undefined;

function treeOf(type: unknown): CaptureTree | undefined {
  return typeof type === 'string' && Object.prototype.hasOwnProperty.call(CAPTURE_TREES, type) ? CAPTURE_TREES[type] : undefined;
}

function levelOf(t: CaptureTree): number {
  return LEVEL[t.level] ?? FULL;
}

/** Declared capture rank (absent = metadata; not a level = full, the conservative reading). */
export function declaredRank(ev: Record<string, unknown>): number {
  const c = Object.prototype.hasOwnProperty.call(ev, 'capture') ? ev['capture'] : 'metadata';
  const r = captureRank(c);
  return r < 0 ? FULL : r;
}

/** Copy with `data` replaced (or removed when `data` is undefined), keeping key order. */
function withData(ev: Record<string, unknown>, data: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(ev)) {
    if (k === 'data') { if (data !== undefined) out[k] = data; } else out[k] = ev[k];
  }
  return out;
}

/** Run the §9.4 text pipeline over every string in a value (keys untouched); same reference when nothing changed. */
function redactStrings(v: unknown): unknown {
  if (typeof v === 'string') return redact(v);
  if (Array.isArray(v)) {
    let changed = false;
    const out = v.map((x) => { const y = redactStrings(x); if (y !== x) changed = true; return y; });
    return changed ? out : v;
  }
  if (isObject(v)) {
    let changed = false;
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v)) {
      const y = redactStrings(v[k]);
      if (y !== v[k]) changed = true;
      Object.defineProperty(out, k, { value: y, enumerable: true, writable: true, configurable: true });
    }
    return changed ? out : v;
  }
  return v;
}

/** Strings of `answer.values` that are choice ids of their select field (structural, never redacted). */
function valuesAtRedacted(values: unknown, fields: readonly unknown[] | undefined): unknown {
  if (!isObject(values)) return values;
  const ids = new Map<string, Set<string>>();
  for (const f of fields ?? []) {
    if (!isObject(f) || typeof f['id'] !== 'string' || f['type'] !== 'select' || !Array.isArray(f['choices'])) continue;
    ids.set(f['id'], new Set((f['choices'] as unknown[]).filter(isObject).map((c) => c['id']).filter((x): x is string => typeof x === 'string')));
  }
  let changed = false;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(values)) {
    const v = values[k];
    const choices = ids.get(k);
    const isChoice = (x: unknown) => typeof x === 'string' && choices !== undefined && choices.has(x);
    let y: unknown = v;
    if (typeof v === 'string' && !isChoice(v)) y = redact(v);
    else if (Array.isArray(v)) {
      let arrChanged = false;
      const arr = v.map((x) => { if (isChoice(x)) return x; const r = redactStrings(x); if (r !== x) arrChanged = true; return r; });
      if (arrChanged) y = arr;
    }
    if (y !== v) changed = true;
    Object.defineProperty(out, k, { value: y, enumerable: true, writable: true, configurable: true });
  }
  return changed ? out : values;
}

interface HonestCtx { declared: number; fields: readonly unknown[] | undefined }

/** Prune one value to the declared level (step 1 above); same reference when already honest. */
function honestValue(value: unknown, tree: CaptureTree, ctx: HonestCtx): unknown {
  if (Array.isArray(value)) {
    if (!tree.items) return value;
    let changed = false;
    const out = value.map((v) => { const p = honestValue(v, tree.items!, ctx); if (p !== v) changed = true; return p; });
    return changed ? out : value;
  }
  if (!isObject(value) || !tree.properties) return value;
  const props = tree.properties;
  let changed = false;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const v = value[key];
    const child = Object.prototype.hasOwnProperty.call(props, key) ? props[key] : undefined;
    let nv: unknown = v;
    if (child) {
      const lvl = levelOf(child);
      if (lvl > ctx.declared) nv = undefined; // annotated above what the Event claims: the lie
      else if (child.exception === 'values') {
        nv = ctx.declared < REDACTED
          ? (ctx.fields ? gateFormValues(ctx.fields, v, 'metadata') : structuralValues(v))
          : valuesAtRedacted(v, ctx.fields);
        // Nothing was dropped or rewritten: keep the original object (and so the raw bytes).
        if (isObject(nv) && isObject(v) && Object.keys(nv).length === Object.keys(v).length && Object.keys(v).every((k) => (nv as Record<string, unknown>)[k] === v[k])) nv = v;
      } else if (child.exception) nv = ctx.declared === REDACTED ? redactStrings(v) : v;
      else if (lvl === REDACTED && ctx.declared === REDACTED) nv = redactStrings(v);
      else nv = honestValue(v, child, ctx);
    }
    if (nv === undefined) { changed = true; continue; }
    if (nv !== v) changed = true;
    Object.defineProperty(out, key, { value: nv, enumerable: true, writable: true, configurable: true });
  }
  return changed ? out : value;
}

/**
 * The Event made honest for its declared capture, or `ev` itself (===) when it already is.
 * `none` carries no `data`; `full` carries anything; in between, members annotated above the
 * declared level are removed, `answer.values` is gated with the request's fields (the hop
 * rule when the relay does not hold the request), and at `redacted` the free text passes the
 * §9.4 pipeline. Members without an annotation are left to `gateFor` (they reach only `full`).
 */
export function makeHonest(ev: Record<string, unknown>, fieldsOf?: FieldsOf): Record<string, unknown> {
  if (!Object.prototype.hasOwnProperty.call(ev, 'data')) return ev;
  const declared = declaredRank(ev);
  if (declared === 0) return withData(ev, undefined);
  if (declared === FULL) return ev;
  const tree = treeOf(ev['type']);
  const data = ev['data'];
  if (!tree || !tree.properties || !isObject(data)) return ev;
  const needsFields = ev['type'] === 'attention.answered' || ev['type'] === 'control.attention.respond';
  const out = honestValue(data, tree, { declared, fields: needsFields && fieldsOf ? fieldsOf(ev) : undefined });
  return out === data ? ev : withData(ev, out);
}

/** Remove every member the payload schema does not annotate; same reference when there is none. */
function annotatedOnly(value: unknown, tree: CaptureTree): unknown {
  if (Array.isArray(value)) {
    if (!tree.items) return value;
    let changed = false;
    const out = value.map((v) => { const p = annotatedOnly(v, tree.items!); if (p !== v) changed = true; return p; });
    return changed ? out : value;
  }
  // A node without `properties` annotates its whole value (a leaf, `answer.values`, free-form metadata).
  if (!isObject(value) || !tree.properties) return value;
  const props = tree.properties;
  let changed = false;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const child = Object.prototype.hasOwnProperty.call(props, key) ? props[key] : undefined;
    if (!child) { changed = true; continue; }
    const v = value[key];
    const nv = annotatedOnly(v, child);
    if (nv !== v) changed = true;
    Object.defineProperty(out, key, { value: nv, enumerable: true, writable: true, configurable: true });
  }
  return changed ? out : value;
}

/** `ev` without unannotated `data` members (a type without an annotated schema loses its whole `data`). */
export function dropUnannotated(ev: Record<string, unknown>): Record<string, unknown> {
  if (!Object.prototype.hasOwnProperty.call(ev, 'data')) return ev;
  const data = ev['data'];
  const tree = treeOf(ev['type']);
  if (!tree || !tree.properties || Object.keys(tree.properties).length === 0 || !isObject(data)) {
    return isObject(data) && Object.keys(data).length === 0 ? ev : withData(ev, undefined);
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

