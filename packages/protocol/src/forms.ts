// AEP-0006 structured input requests: the `field_spec` shape and answer validation
// (AEP-0002 §5.3 MUST-reject rule; brief 03 §2-§4). Pure; never throws on any input.
import type { Issue } from './issue.js';

/** One choice of a `select` field (AEP-0002 §5.2 `field_spec.choices[]`). */
export interface FormChoice {
  /** Structural id, carried in `answer.values` ([metadata]). */
  id: string;
  /** Display text ([metadata*]: placeholder at `metadata`). */
  label: string;
}

/** One flat, typed form field (AEP-0002 §5.2 `field_spec`, AEP-0006). */
export interface FieldSpec {
  /** Key of the answer in `answer.values`; structural. */
  id: string;
  type: 'string' | 'number' | 'boolean' | 'select';
  /** Question text ([metadata*]). */
  label: string;
  /** The answer must be present in `values` (default false). */
  required?: boolean;
  /** Select only: several choices may be picked, the answer is an array (default false). */
  multi?: boolean;
  /** Select only: a free-text answer is acceptable in place of a choice id (default false). */
  other?: boolean;
  /** Select only (REQUIRED there): the closed choice list. */
  choices?: FormChoice[];
  /** Number only: inclusive lower bound. */
  min?: number;
  /** Number only: inclusive upper bound. */
  max?: number;
}

/** A form answer: flat map `field_spec.id` → value (AEP-0002 §5.3 `answer.values`). */
export type FormValues = Record<string, unknown>;

/**
 * Rule ids reported by {@link validateFormAnswer}. The first two are the spec's MUST-reject
 * rule (AEP-0002 §5.3 / AEP-0006: nack `invalid`); the rest are documented project hardening
 * (brief 03 §4 "Other mismatches … a reasonable hardening"), see docs/rules.md.
 */
export const FORM_RULES = {
  'form.required-missing': { section: 'AEP-0002 §5.3 (AEP-0006) rule 1', meaning: 'a field with `required: true` has no entry in `values`', must: true },
  'form.choice-forged': { section: 'AEP-0002 §5.3 (AEP-0006) rule 2', meaning: 'a select without `other` answered with a string (or array element) that is not one of its choice ids; any non-string select entry also fails', must: true },
  'form.values-not-object': { section: 'AEP-0002 §5.3', meaning: '`values` is not a JSON object', must: true },
  'form.type-mismatch': { section: 'AEP-0006 (project hardening)', meaning: 'the JSON type of an entry does not match its field type (string/number/boolean, or a multi select not given an array)', must: false },
  'form.out-of-range': { section: 'AEP-0006 (project hardening)', meaning: 'a number entry is below `min` or above `max`', must: false },
  'form.array-for-single': { section: 'AEP-0006 (project hardening)', meaning: 'an array answers a select without `multi: true`', must: false },
  'form.duplicate-choice': { section: 'AEP-0006 (project hardening)', meaning: 'a multi select array names the same entry twice', must: false },
  'form.unknown-key': { section: 'AEP-0006 (project hardening)', meaning: 'a `values` key matches no `field_spec.id`', must: false },
} as const;

/** A rule id of {@link FORM_RULES}. */
export type FormRule = keyof typeof FORM_RULES;

/** Options of {@link validateFormAnswer}. */
export interface ValidateFormAnswerOptions {
  /**
   * `true` (default, what an emitter runs before accepting an answer): MUST rules plus the
   * hardening rules. `false`: only the spec's MUST rules (what a recorded-stream validator may
   * flag as a conformance failure).
   */
  strict?: boolean;
  /** JSON pointer prefix for issue paths (e.g. `/data/answer/values`); default `""`. */
  basePath?: string;
}

function ptr(base: string, ...parts: (string | number)[]): string {
  return base + parts.map((p) => '/' + String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('');
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * Index of the usable fields of a request by id (first wins; duplicates are a producer bug,
 * brief 03 §2). Entries that are not objects with a string `id` are ignored.
 */
export function indexFields(fields: unknown): Map<string, FieldSpec> {
  const map = new Map<string, FieldSpec>();
  if (!Array.isArray(fields)) return map;
  for (const f of fields) {
    if (isPlainObject(f) && typeof f['id'] === 'string' && !map.has(f['id'])) map.set(f['id'], f as unknown as FieldSpec);
  }
  return map;
}

/** The set of string choice ids of a select field. */
export function choiceIds(field: FieldSpec): Set<string> {
  const ids = new Set<string>();
  if (Array.isArray(field.choices)) {
    for (const c of field.choices as unknown[]) if (isPlainObject(c) && typeof c['id'] === 'string') ids.add(c['id']);
  }
  return ids;
}

/**
 * Validates a form answer against the request's `fields` (AEP-0002 §5.3, AEP-0006). Returns
 * issues with stable rule ids ({@link FORM_RULES}); an empty list means the emitter may accept.
 * MUST rules: `form.required-missing`, `form.choice-forged` (also `form.values-not-object`).
 * Hardening (on unless `strict: false`): type mismatch, out of range, array for a single
 * select, duplicates in a multi select, unknown keys. Never throws.
 */
export function validateFormAnswer(fields: readonly FieldSpec[] | unknown, values: unknown, opts: ValidateFormAnswerOptions = {}): Issue[] {
  const strict = opts.strict !== false;
  const base = opts.basePath ?? '';
  const issues: Issue[] = [];
  const add = (rule: FormRule, path: string, message: string) => issues.push({ rule, path, message, section: FORM_RULES[rule].section });
  if (!isPlainObject(values)) {
    add('form.values-not-object', base, 'form.values-not-object: `values` must be a JSON object keyed by field id (AEP-0002 §5.3)');
    return issues;
  }
  const byId = indexFields(fields);
  const has = (k: string) => Object.prototype.hasOwnProperty.call(values, k);

  for (const f of byId.values()) {
    if (f.required === true && !has(f.id)) {
      add('form.required-missing', ptr(base, f.id), `form.required-missing: required field "${f.id}" has no entry in values (AEP-0002 §5.3 rule 1)`);
    }
  }

  for (const key of Object.keys(values)) {
    const v = values[key];
    const f = byId.get(key);
    const path = ptr(base, key);
    if (!f) {
      if (strict) add('form.unknown-key', path, `form.unknown-key: "${key}" matches no field id (project hardening)`);
      continue;
    }
    switch (f.type) {
      case 'number':
        if (typeof v !== 'number' || !Number.isFinite(v)) {
          if (strict) add('form.type-mismatch', path, `form.type-mismatch: field "${key}" is a number field; got ${jsonType(v)} (project hardening)`);
        } else if (strict && ((typeof f.min === 'number' && v < f.min) || (typeof f.max === 'number' && v > f.max))) {
          add('form.out-of-range', path, `form.out-of-range: ${v} is outside [${f.min ?? '-∞'}, ${f.max ?? '∞'}] of field "${key}" (project hardening)`);
        }
        break;
      case 'boolean':
        if (typeof v !== 'boolean' && strict) add('form.type-mismatch', path, `form.type-mismatch: field "${key}" is a boolean field; got ${jsonType(v)} (project hardening)`);
        break;
      case 'string':
        if (typeof v !== 'string' && strict) add('form.type-mismatch', path, `form.type-mismatch: field "${key}" is a string field; got ${jsonType(v)} (project hardening)`);
        break;
      case 'select':
        checkSelect(f, key, v, path, strict, add);
        break;
      default:
        // Unknown field type (schema-invalid request): nothing can be checked; the gate treats it as text.
        break;
    }
  }
  return issues;
}

function checkSelect(f: FieldSpec, key: string, v: unknown, path: string, strict: boolean, add: (rule: FormRule, path: string, message: string) => void): void {
  const ids = choiceIds(f);
  const other = f.other === true;
  const multi = f.multi === true;
  const checkElement = (el: unknown, p: string) => {
    // Rule 2 (as the spec-derived validator applies it): a non-string entry fails even with `other`.
    if (typeof el !== 'string') {
      add('form.choice-forged', p, `form.choice-forged: select field "${key}" answered with ${jsonType(el)}; choice ids are strings (AEP-0002 §5.3 rule 2)`);
    } else if (!other && !ids.has(el)) {
      add('form.choice-forged', p, `form.choice-forged: "${el}" is not a choice id of select field "${key}", which has no \`other\` (AEP-0002 §5.3 rule 2)`);
    }
  };
  if (Array.isArray(v)) {
    if (!multi && strict) add('form.array-for-single', path, `form.array-for-single: select field "${key}" is not multi; got an array (project hardening)`);
    const seen = new Set<unknown>();
    v.forEach((el, i) => {
      checkElement(el, `${path}/${i}`);
      if (strict && typeof el === 'string') {
        if (seen.has(el)) add('form.duplicate-choice', `${path}/${i}`, `form.duplicate-choice: "${el}" appears twice in multi select field "${key}" (project hardening)`);
        seen.add(el);
      }
    });
    return;
  }
  checkElement(v, path);
  if (multi && strict && typeof v === 'string') {
    add('form.type-mismatch', path, `form.type-mismatch: multi select field "${key}" must be answered with an array (project hardening)`);
  }
}

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'number') return Number.isFinite(v) ? 'a number' : 'a non-finite number';
  if (typeof v === 'object') return 'an object';
  return `a ${typeof v}`;
}

/**
 * Answer options every `kind:"form"` request accepts without declaring them in `data`
 * (docs/decisions.md "Declining a form"): the Annex A pins fix `data` member for member, so a
 * form never lists decline/cancel as `options`; every surface still offers both.
 * `decline` = the person explicitly refuses to answer (MCP `action:"decline"`);
 * `cancel` = the person dismisses the request without an answer (MCP `action:"cancel"`).
 */
export const FORM_DECLINE_OPTION = 'decline';
/** See {@link FORM_DECLINE_OPTION}. */
export const FORM_CANCEL_OPTION = 'cancel';
/** Both answer options a form accepts without declaring them. */
export const FORM_REFUSAL_OPTIONS: readonly string[] = [FORM_DECLINE_OPTION, FORM_CANCEL_OPTION];
