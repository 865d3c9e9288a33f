// Capture gating of answers (AEP-0002 §5.3, AEP-0006): which entries of a form's
// `values`, and which members of an `answer`, may ride at a given capture level.
import type { CaptureLevel } from './levels.js';
import { captureRank } from './levels.js';
import { choiceIds, indexFields } from './forms.js';
import type { FieldSpec } from './forms.js';
import { redact, setOwn } from './redact.js';
import type { RedactOptions } from './redact.js';

const REDACTED_RANK = 2;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** True when an entry is structurally typed for its field: a finite number for `number`, a boolean for `boolean`. */
function typedStructural(f: FieldSpec, v: unknown): boolean {
  return f.type === 'number' ? typeof v === 'number' && Number.isFinite(v) : typeof v === 'boolean';
}

/** True when every element of `v` (a string, or an array) is one of the select's choice ids. */
function allChoiceIds(f: FieldSpec, v: unknown): boolean {
  if (Array.isArray(v)) {
    for (const el of v) if (!isChoiceId(f, el)) return false;
    return true;
  }
  return isChoiceId(f, v);
}

/** Linear scan: choice lists are short, and this avoids building a Set per call. */
function isChoiceId(f: FieldSpec, el: unknown): boolean {
  if (typeof el !== 'string' || !Array.isArray(f.choices)) return false;
  for (const c of f.choices as unknown[]) {
    if (c !== null && typeof c === 'object' && (c as { id?: unknown }).id === el) return true;
  }
  return false;
}

/**
 * Gates a form's `values` at a capture ceiling with the request's `fields` — AEP-0002 §5.3
 * exactly: keys without a field are dropped at every level; `number`/`boolean` entries and
 * select entries whose every element is a choice id are structural and kept at every level this
 * function handles (`none` included: removing `data` is the caller's job); `string` entries and
 * select free text (`other`) are kept only at `redacted`+. Project hardening: a `number`/
 * `boolean` entry whose JSON type does not match (e.g. a string) is treated as free text.
 * An unknown ceiling gates like `metadata`. Returns a new object; never mutates; never throws.
 */
export function gateFormValues(fields: readonly FieldSpec[] | unknown, values: unknown, ceiling: CaptureLevel): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!isPlainObject(values)) return out;
  const textOK = captureRank(ceiling) >= REDACTED_RANK;
  const byId = indexFields(fields);
  for (const key of Object.keys(values)) {
    const f = byId.get(key);
    if (!f) continue;
    const v = values[key];
    let keep: boolean;
    if (f.type === 'number' || f.type === 'boolean') keep = textOK || typedStructural(f, v);
    else if (f.type === 'select') keep = allChoiceIds(f, v) || textOK;
    else keep = textOK; // string fields, and unknown field types (conservative)
    if (keep) setOwn(out, key, v);
  }
  return out;
}

/**
 * The hop rule for `answer.values` without the request's `field_spec` (AEP-0001 §8.2 step 7,
 * 03 §5.3): keep only entries whose value is a JSON number or boolean. Returns a new object.
 */
export function structuralValues(values: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!isPlainObject(values)) return out;
  for (const key of Object.keys(values)) {
    const v = values[key];
    if ((typeof v === 'number' && Number.isFinite(v)) || typeof v === 'boolean') setOwn(out, key, v);
  }
  return out;
}

/** An attention answer (`attention.answered.answer`, `control.attention.respond.answer`). */
export interface AttentionAnswer {
  /** An `options[].id` ([metadata]). */
  option?: string;
  /** Free text ([redacted]). */
  text?: string;
  /** Form answers ([metadata*], type-dependent). */
  values?: Record<string, unknown>;
}

/** Options of {@link gateAnswer}. */
export interface GateAnswerOptions {
  /** The request's `fields` (form answers). Without them `values` is gated by the hop rule (numbers and booleans only below `redacted`). */
  fields?: readonly FieldSpec[];
  /** Options for the AEP-0003 §9.4 pipeline applied to free text at `redacted`. */
  redaction?: RedactOptions;
}

/**
 * Builds the `answer` an emitter records on `attention.answered` at capture level `capture`
 * (AEP-0002 §5.3, AEP-0003 §9): `option` is structural and always kept; `text` only at
 * `redacted`+ (through the §9.4 pipeline at `redacted`, verbatim at `full`); `values` gated by
 * {@link gateFormValues} (with `fields`) or {@link structuralValues} (without), and at
 * `redacted` its free-text entries (strings that are not choice ids) are redacted — without
 * `fields` every string entry counts as free text, since a choice id cannot be told apart. At `none`
 * the caller omits `data` altogether; this returns the structural answer. Never mutates.
 */
export function gateAnswer(answer: unknown, capture: CaptureLevel, opts: GateAnswerOptions = {}): AttentionAnswer {
  const out: AttentionAnswer = {};
  if (!isPlainObject(answer)) return out;
  const rank = captureRank(capture);
  const textOK = rank >= REDACTED_RANK;
  const redacting = capture === 'redacted';
  if (typeof answer['option'] === 'string') out.option = answer['option'];
  if (typeof answer['text'] === 'string' && textOK) out.text = redacting ? redact(answer['text'], opts.redaction) : answer['text'];
  if (answer['values'] !== undefined) {
    let values: Record<string, unknown>;
    if (opts.fields) values = gateFormValues(opts.fields, answer['values'], capture);
    else values = textOK ? { ...(isPlainObject(answer['values']) ? answer['values'] : {}) } : structuralValues(answer['values']);
    if (redacting) values = redactFreeValues(values, opts.fields, opts.redaction);
    out.values = values;
  }
  return out;
}

/** At `redacted`: pass every free-text entry (a string that is not a choice id of its field) through the pipeline. */
function redactFreeValues(values: Record<string, unknown>, fields: readonly FieldSpec[] | undefined, ro: RedactOptions | undefined): Record<string, unknown> {
  const byId = indexFields(fields);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(values)) {
    const v = values[key];
    const f = byId.get(key);
    const ids = f && f.type === 'select' ? choiceIds(f) : new Set<string>();
    const one = (el: unknown) => (typeof el === 'string' && !ids.has(el) ? redact(el, ro) : el);
    setOwn(out, key, Array.isArray(v) ? v.map(one) : one(v));
  }
  return out;
}
