// AEP-0006 structured input requests: the `field_spec` shape and answer validation
// (AEP-0002 §5.3 MUST-reject rule; AEP-0002 §5.2, §5.3). Pure; never throws on any input.
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
 * (AEP-0002 §5.3 "Other mismatches … a reasonable hardening"), see docs/rules.md. The last six
 * check the {@link FieldConstraints} a caller passes as data (constraints of an upstream schema,
 * e.g. MCP `requestedSchema`, that a `field_spec` cannot carry). Every id is also a row of
 * `RULES` (rules.ts).
 */
export const FORM_RULES = {
  'form.required-missing': { section: 'AEP-0002 §5.3 (AEP-0006) rule 1', meaning: 'a field with `required: true` has no entry in `values`', must: true },
  'form.choice-forged': {
    section: 'AEP-0002 §5.3 (AEP-0006) rule 2',
    meaning: 'a select without `other` answered with a string (or array element) that is not one of its choice ids; any non-string select entry also fails',
    must: true,
  },
  'form.values-not-object': { section: 'AEP-0002 §5.3', meaning: '`values` is not a JSON object', must: true },
  'form.type-mismatch': {
    section: 'AEP-0006 (project hardening)',
    meaning: 'the JSON type of an entry does not match its field type (string/number/boolean, or a multi select not given an array)',
    must: false,
  },
  'form.out-of-range': { section: 'AEP-0006 (project hardening)', meaning: 'a number entry is below `min` or above `max`', must: false },
  'form.array-for-single': { section: 'AEP-0006 (project hardening)', meaning: 'an array answers a select without `multi: true`', must: false },
  'form.duplicate-choice': { section: 'AEP-0006 (project hardening)', meaning: 'a multi select array names the same entry twice', must: false },
  'form.unknown-key': { section: 'AEP-0006 (project hardening)', meaning: 'a `values` key matches no `field_spec.id`', must: false },
  'form.not-integer': {
    section: 'AEP-0006 (field constraints)',
    meaning: 'a number entry of a field constrained to integers has a fractional part',
    must: false,
  },
  'form.too-short': { section: 'AEP-0006 (field constraints)', meaning: "a string entry has fewer code points than the field's `minLength`", must: false },
  'form.too-long': { section: 'AEP-0006 (field constraints)', meaning: "a string entry has more code points than the field's `maxLength`", must: false },
  'form.format': {
    section: 'AEP-0006 (field constraints)',
    meaning: "a string entry does not match the field's `format` (email, uri, date, date-time)",
    must: false,
  },
  'form.too-few-choices': {
    section: 'AEP-0006 (field constraints)',
    meaning: "a multi select entry names fewer choices than the field's `minItems`",
    must: false,
  },
  'form.too-many-choices': {
    section: 'AEP-0006 (field constraints)',
    meaning: "a multi select entry names more choices than the field's `maxItems`",
    must: false,
  },
} as const;

/** A rule id of {@link FORM_RULES}. */
export type FormRule = keyof typeof FORM_RULES;

/** String formats a {@link FieldConstraints} may name (the MCP elicitation set). */
export type StringFormat = 'email' | 'uri' | 'date' | 'date-time';

/**
 * Constraints on one field that a `field_spec` cannot carry (AEP-0006 §2 defers regex/format
 * constraints), passed as data by the emitter that knows them, e.g. from an MCP
 * `requestedSchema` ({@link elicitationToForm} returns them). Each applies only to entries of
 * the matching JSON type (a mistyped entry is already `form.type-mismatch`):
 * `integer` to number fields, `minLength`/`maxLength` (Unicode code points, as JSON Schema
 * counts) and `format` to string fields, `minItems`/`maxItems` to multi selects.
 */
export interface FieldConstraints {
  /** The number must be an integer (MCP `type: "integer"`). */
  integer?: boolean;
  /** Minimum length in code points. */
  minLength?: number;
  /** Maximum length in code points. */
  maxLength?: number;
  /** The string must match this format. */
  format?: StringFormat;
  /** A multi select names at least this many choices. */
  minItems?: number;
  /** A multi select names at most this many choices. */
  maxItems?: number;
}

/** Per field id: its {@link FieldConstraints}. Keys are looked up as own properties only. */
export type FormConstraints = Readonly<Record<string, FieldConstraints>>;

/** The JSON pointer every form answer issue starts with (a pointer into the command or `attention.answered`). */
export const VALUES_PATH = '/data/answer/values';

/** Options of {@link validateFormAnswer}. */
export interface ValidateFormAnswerOptions {
  /**
   * `true` (default, what an emitter runs before accepting an answer): MUST rules plus the
   * hardening rules and the constraints. `false`: only the spec's MUST rules (what a
   * recorded-stream validator may flag as a conformance failure).
   */
  strict?: boolean;
  /** JSON pointer prefix for issue paths; default {@link VALUES_PATH} (`/data/answer/values`). */
  basePath?: string;
  /** Constraints beyond the `field_spec`, per field id (checked when `strict`). */
  constraints?: FormConstraints;
}

/** JSON pointer of `parts` under `base` (RFC 6901 escaping). */
export function pointer(base: string, ...parts: (string | number)[]): string {
  return base + parts.map((p) => '/' + String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('');
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * Index of the usable fields of a request by id (first wins; duplicates are a producer bug,
 * AEP-0002 §5.2). Entries that are not objects with a string `id` are ignored.
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

// Deliberately simple format checks (an upstream server re-validates; these spare the person a
// round trip that would end in an error there). Shared with validateElicitationContent.
const FORMAT_RE: Readonly<Record<StringFormat, RegExp>> = {
  email: /^[^\s@]+@[^\s@]+$/,
  uri: /^[A-Za-z][A-Za-z0-9+.-]*:[^\s]*$/,
  date: /^\d{4}-\d{2}-\d{2}$/,
  'date-time': /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:\d{2})$/,
};

/** True when `text` matches `format`; an unknown format name matches nothing. */
export function matchesFormat(format: string, text: string): boolean {
  const re = Object.prototype.hasOwnProperty.call(FORMAT_RE, format) ? FORMAT_RE[format as StringFormat] : undefined;
  return re !== undefined && re.test(text);
}

/** True for a format name {@link matchesFormat} knows. */
export function isStringFormat(format: unknown): format is StringFormat {
  return typeof format === 'string' && Object.prototype.hasOwnProperty.call(FORMAT_RE, format);
}

/** Length in Unicode code points (JSON Schema `minLength`/`maxLength`). */
export function codePointLength(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

function constraintsOf(all: FormConstraints | undefined, id: string): FieldConstraints | undefined {
  if (all === undefined || all === null || typeof all !== 'object') return undefined;
  if (!Object.prototype.hasOwnProperty.call(all, id)) return undefined;
  const c = (all as Record<string, unknown>)[id];
  return isPlainObject(c) ? (c as FieldConstraints) : undefined;
}

const finite = (n: unknown): n is number => typeof n === 'number' && Number.isFinite(n);

type Add = (rule: FormRule, path: string, message: string) => void;

/**
 * Validates a form answer against the request's `fields` (AEP-0002 §5.3, AEP-0006) and, when
 * given, the caller's per-field `constraints`. Returns issues with stable rule ids
 * ({@link FORM_RULES}, all rows of `RULES`); an empty list means the emitter may accept.
 * MUST rules: `form.required-missing`, `form.choice-forged` (also `form.values-not-object`).
 * Hardening (on unless `strict: false`): type mismatch, out of range, array for a single
 * select, duplicates in a multi select, unknown keys, and the constraints.
 *
 * Paths are JSON pointers under `basePath` (default `/data/answer/values`): `…/<field id>`,
 * `…/<field id>/<index>` for an array element, and `basePath` itself for the object as a whole
 * and for keys that match no field. Messages name the rule and the field and say what is wrong;
 * they never repeat a submitted value or an unknown key (docs/decisions.md "One answer path":
 * a rejection travels to every subscriber of the session). Never throws.
 */
export function validateFormAnswer(fields: readonly FieldSpec[] | unknown, values: unknown, opts: ValidateFormAnswerOptions = {}): Issue[] {
  const strict = opts.strict !== false;
  const base = typeof opts.basePath === 'string' ? opts.basePath : VALUES_PATH;
  const issues: Issue[] = [];
  const add: Add = (rule, path, message) => issues.push({ rule, path, message, section: FORM_RULES[rule].section });
  if (!isPlainObject(values)) {
    add('form.values-not-object', base, 'form.values-not-object: `values` must be a JSON object keyed by field id (AEP-0002 §5.3)');
    return issues;
  }
  const byId = indexFields(fields);
  const has = (k: string) => Object.prototype.hasOwnProperty.call(values, k);

  for (const f of byId.values()) {
    if (f.required === true && !has(f.id)) {
      add('form.required-missing', pointer(base, f.id), `form.required-missing: required field "${f.id}" has no entry in values (AEP-0002 §5.3 rule 1)`);
    }
  }

  let unknown = 0;
  for (const key of Object.keys(values)) {
    const v = values[key];
    const f = byId.get(key);
    if (!f) {
      unknown++;
      continue;
    }
    const path = pointer(base, key);
    const c = strict ? constraintsOf(opts.constraints, key) : undefined;
    switch (f.type) {
      case 'number':
        if (!finite(v)) {
          if (strict)
            add('form.type-mismatch', path, `form.type-mismatch: field "${key}" is a number field and its entry is ${jsonType(v)} (project hardening)`);
          break;
        }
        if (c?.integer === true && !Number.isInteger(v)) {
          add('form.not-integer', path, `form.not-integer: field "${key}" takes whole numbers only and its entry has a fractional part`);
        }
        if (strict && ((finite(f.min) && v < f.min) || (finite(f.max) && v > f.max))) {
          add(
            'form.out-of-range',
            path,
            `form.out-of-range: field "${key}" takes numbers ${rangeText(f)}, and its entry is ${finite(f.min) && v < f.min ? 'below' : 'above'} that (project hardening)`,
          );
        }
        break;
      case 'boolean':
        if (typeof v !== 'boolean' && strict)
          add('form.type-mismatch', path, `form.type-mismatch: field "${key}" is a boolean field and its entry is ${jsonType(v)} (project hardening)`);
        break;
      case 'string':
        if (typeof v !== 'string') {
          if (strict)
            add('form.type-mismatch', path, `form.type-mismatch: field "${key}" is a string field and its entry is ${jsonType(v)} (project hardening)`);
          break;
        }
        if (c) checkString(key, v, path, c, add);
        break;
      case 'select':
        checkSelect(f, key, v, path, strict, c, add);
        break;
      default:
        // Unknown field type (schema-invalid request): nothing can be checked; the gate treats it as text.
        break;
    }
  }
  if (unknown > 0 && strict) {
    // The keys themselves are submitted text: the issue points at `values` and names none of them.
    add(
      'form.unknown-key',
      base,
      `form.unknown-key: ${unknown === 1 ? 'one key' : `${unknown} keys`} of values ${unknown === 1 ? 'matches' : 'match'} no field id of the request (project hardening)`,
    );
  }
  return issues;
}

/**
 * Fast verdict of the two MUST rules (AEP-0002 §5.3 rules 1 and 2) over an already indexed
 * request (`byId` = {@link indexFields} of its fields): true exactly when
 * `validateFormAnswer(fields, values, { strict: false })` reports neither
 * `form.required-missing` nor `form.choice-forged`. No allocation (no pointer, no choice-id
 * set): the stream validator runs it on every recorded answer and calls the full validator only
 * when it says false, so its issues are still the full validator's (issue 19). The equivalence
 * is pinned by a fast-check property in test/forms-fast.test.ts.
 */
export function formAnswerMustHold(byId: ReadonlyMap<string, FieldSpec>, values: Record<string, unknown>): boolean {
  for (const f of byId.values()) {
    if (f.required === true && !Object.prototype.hasOwnProperty.call(values, f.id)) return false;
  }
  for (const key of Object.keys(values)) {
    const f = byId.get(key);
    if (f === undefined || f.type !== 'select') continue;
    const v = values[key];
    const other = f.other === true;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) if (!choiceOk(f, other, v[i])) return false;
    } else if (!choiceOk(f, other, v)) {
      return false;
    }
  }
  return true;
}

/** {@link checkSelect}'s rule 2 for one element, without building the choice-id set. */
function choiceOk(f: FieldSpec, other: boolean, el: unknown): boolean {
  if (typeof el !== 'string') return false;
  if (other) return true;
  const choices = f.choices as unknown;
  if (!Array.isArray(choices)) return false;
  for (let i = 0; i < choices.length; i++) {
    const c: unknown = choices[i];
    if (isPlainObject(c) && c['id'] === el) return true;
  }
  return false;
}

function rangeText(f: FieldSpec): string {
  if (finite(f.min) && finite(f.max)) return `from ${f.min} to ${f.max}`;
  return finite(f.min) ? `of at least ${f.min}` : `of at most ${String(f.max)}`;
}

function checkString(key: string, v: string, path: string, c: FieldConstraints, add: Add): void {
  const len = finite(c.minLength) || finite(c.maxLength) ? codePointLength(v) : 0;
  if (finite(c.minLength) && len < c.minLength) add('form.too-short', path, `form.too-short: field "${key}" needs at least ${c.minLength} characters`);
  if (finite(c.maxLength) && len > c.maxLength) add('form.too-long', path, `form.too-long: field "${key}" takes at most ${c.maxLength} characters`);
  if (c.format !== undefined && !matchesFormat(String(c.format), v))
    add('form.format', path, `form.format: field "${key}" must be a valid ${isStringFormat(c.format) ? c.format : 'value of its format'}`);
}

function checkSelect(f: FieldSpec, key: string, v: unknown, path: string, strict: boolean, c: FieldConstraints | undefined, add: Add): void {
  const ids = choiceIds(f);
  const other = f.other === true;
  const multi = f.multi === true;
  const checkElement = (el: unknown, p: string) => {
    // Rule 2 (as the spec-derived validator applies it): a non-string entry fails even with `other`.
    if (typeof el !== 'string') {
      add('form.choice-forged', p, `form.choice-forged: select field "${key}" is answered with ${jsonType(el)}; choice ids are strings (AEP-0002 §5.3 rule 2)`);
    } else if (!other && !ids.has(el)) {
      add(
        'form.choice-forged',
        p,
        `form.choice-forged: the entry of select field "${key}" is not one of its choice ids, and the field takes no other text (AEP-0002 §5.3 rule 2)`,
      );
    }
  };
  if (Array.isArray(v)) {
    if (!multi && strict)
      add('form.array-for-single', path, `form.array-for-single: select field "${key}" takes one choice; its entry is an array (project hardening)`);
    const seen = new Set<unknown>();
    v.forEach((el, i) => {
      checkElement(el, `${path}/${i}`);
      if (strict && typeof el === 'string') {
        if (seen.has(el))
          add(
            'form.duplicate-choice',
            `${path}/${i}`,
            `form.duplicate-choice: multi select field "${key}" names the same entry twice (element ${i}) (project hardening)`,
          );
        seen.add(el);
      }
    });
    if (multi && c) {
      if (finite(c.minItems) && v.length < c.minItems)
        add('form.too-few-choices', path, `form.too-few-choices: field "${key}" needs at least ${c.minItems} choices`);
      if (finite(c.maxItems) && v.length > c.maxItems)
        add('form.too-many-choices', path, `form.too-many-choices: field "${key}" takes at most ${c.maxItems} choices`);
    }
    return;
  }
  checkElement(v, path);
  if (multi && strict && typeof v === 'string') {
    add('form.type-mismatch', path, `form.type-mismatch: multi select field "${key}" must be answered with an array (project hardening)`);
  }
}

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (v === undefined) return 'undefined';
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
