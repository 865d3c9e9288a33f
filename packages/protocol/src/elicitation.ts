// MCP elicitation <-> AEP form mapping (AEP-0002 Annex A pin, AEP-0002 Annex A; AEP-0006).
// Shared by the MCP bridge (`aep mcp wrap`) and the Claude Code adapter's Elicitation hook.
// Pure: no I/O, no `node:` imports, no dependency on the MCP SDK (the shapes are restated here
// from the MCP specification revisions 2025-06-18 and 2025-11-25).
import type { CaptureLevel } from './levels.js';
import { captureRank } from './levels.js';
import type { Issue } from './issue.js';
import { redact as redactPipeline } from './redact.js';
import { FORM_RULES, VALUES_PATH, codePointLength, isStringFormat, matchesFormat, pointer } from './forms.js';
import type { FieldConstraints, FormConstraints, FormRule, StringFormat } from './forms.js';

/** One AEP choice of a `select` field (AEP-0006 field_spec `choices[]`). */
export interface ElicitationFormChoice {
  /** The MCP enum value (structural id, carried back in `values`). */
  id: string;
  /** Display name at `redacted`+, the enum value itself at `metadata` ([metadata*]). */
  label: string;
}

/** One AEP field produced from an MCP `requestedSchema` property (AEP-0006 §2). */
export interface ElicitationFormField {
  /** The MCP property key. */
  id: string;
  type: 'string' | 'number' | 'boolean' | 'select';
  /** Property title (or description, or key) at `redacted`+, the key at `metadata`. */
  label: string;
  /** True when the key is listed in `required[]`; always present (AEP-0002 Annex A pin). */
  required: boolean;
  /** Only on multi-select (`type:"array"`) properties. */
  multi?: true;
  choices?: ElicitationFormChoice[];
  min?: number;
  max?: number;
}

/** The `data` of the `attention.requested(kind:"form")` event built from an elicitation. */
export interface ElicitationFormData {
  kind: 'form';
  prompt: string;
  fields: ElicitationFormField[];
  respond_via: ['control'];
}

/** How a field's AEP value maps back to MCP `content` (type restoration). */
export type ElicitationValueKind = 'string' | 'number' | 'integer' | 'boolean' | 'enum' | 'multi-enum';

/** Per field id: the MCP property key and the MCP value kind to restore. */
export type ElicitationFieldMap = Record<string, { key: string; kind: ElicitationValueKind }>;

/** Options of {@link elicitationToForm}. */
export interface ElicitationToFormOptions {
  /** The emitting agent's name, used in the structural prompt at `metadata`. */
  agent: string;
  /** The capture level the event will carry (AEP-0003 §9.5: the level really applied). */
  capture: CaptureLevel;
  /**
   * The AEP-0003 §9.4 redaction pipeline applied to free text (prompt, labels) at `redacted`.
   * Default: the protocol's `redact` with its default options.
   */
  redact?: (text: string) => string;
}

/**
 * Result of {@link elicitationToForm}: the form data, or why the schema cannot be mapped.
 * `constraints` holds, per field id, what the schema requires beyond the `field_spec`
 * (integer-ness, string lengths and format, item counts): hand it to the emitter's answer check
 * (`validateFormAnswer(fields, values, { constraints })`, `requestAttention({ constraints })`)
 * so an answer the server would refuse is nacked before it is accepted.
 */
export type ElicitationToFormResult =
  { ok: true; data: ElicitationFormData; fieldMap: ElicitationFieldMap; constraints: FormConstraints } | { ok: false; reason: string };

/** An MCP `content` value (ElicitResult, 2025-11-25). */
export type ElicitationContentValue = string | number | boolean | string[];

/** Section cited by issues about MCP content (the MCP revision that defines the shapes). */
const MCP_SECTION = 'MCP 2025-11-25 elicitation (requestedSchema)';

// Keywords that constrain values in ways an AEP form cannot present and this mapping does not
// check: a schema using them is "unsupported", so the caller falls back instead of collecting an
// answer the server would then refuse.
const UNSUPPORTED_KEYWORDS = [
  'pattern',
  'multipleOf',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'const',
  'not',
  'allOf',
  'anyOf',
  'if',
  'then',
  'else',
  '$ref',
  'properties',
  'additionalProperties',
  'uniqueItems',
  'contains',
  'patternProperties',
  'dependentRequired',
  'dependentSchemas',
  'prefixItems',
  'minProperties',
  'maxProperties',
] as const;

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isStringArray(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((x) => typeof x === 'string');
}

// Own data property even for the key "__proto__" (a property key is server-chosen text).
function setOwn<T>(obj: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

function hasDuplicates(list: readonly string[]): boolean {
  return new Set(list).size !== list.length;
}

function optNumber(p: Json, key: string): number | undefined | null {
  const v = p[key];
  if (v === undefined) return undefined;
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

interface ParsedChoice {
  id: string;
  title: string | undefined;
}

/** Parse `{const,title}` lists (titled single `oneOf`, titled multi `items.anyOf`). */
function parseTitledList(list: unknown, where: string): ParsedChoice[] | string {
  if (!Array.isArray(list) || list.length === 0) return `${where} must be a non-empty array of {const, title}`;
  const out: ParsedChoice[] = [];
  for (const item of list) {
    if (!isObject(item) || typeof item['const'] !== 'string') return `${where} items must be {const: string, title: string}`;
    const title = item['title'];
    if (title !== undefined && typeof title !== 'string') return `${where} item titles must be strings`;
    out.push({ id: item['const'], title });
  }
  if (hasDuplicates(out.map((c) => c.id))) return `${where} has duplicate const values`;
  return out;
}

interface ParsedField {
  key: string;
  kind: ElicitationValueKind;
  label: string;
  choices?: ParsedChoice[];
  min?: number;
  max?: number;
  constraints?: FieldConstraints;
}

/** Parse one property of a flat `requestedSchema`; a string return is the unsupported reason. */
function parseProperty(key: string, p: unknown): ParsedField | string {
  const at = `property "${key}"`;
  if (!isObject(p)) return `${at} is not an object schema`;
  for (const kw of UNSUPPORTED_KEYWORDS) {
    if (kw in p) return `${at} uses "${kw}", which an AEP form cannot express`;
  }
  const title = p['title'];
  const description = p['description'];
  if (title !== undefined && typeof title !== 'string') return `${at} has a non-string title`;
  if (description !== undefined && typeof description !== 'string') return `${at} has a non-string description`;
  // Decision (docs/decisions.md, MCP bridge): label = title, else description, else the key.
  const label = typeof title === 'string' && title.trim() !== '' ? title : typeof description === 'string' && description.trim() !== '' ? description : key;
  const type = p['type'];
  const dflt = p['default'];
  switch (type) {
    case 'boolean':
      if (dflt !== undefined && typeof dflt !== 'boolean') return `${at}: default must be a boolean`;
      return { key, kind: 'boolean', label };
    case 'number':
    case 'integer': {
      const min = optNumber(p, 'minimum');
      const max = optNumber(p, 'maximum');
      if (min === null || max === null) return `${at}: minimum/maximum must be finite numbers`;
      if (min !== undefined && max !== undefined && min > max) return `${at}: minimum is greater than maximum`;
      if (dflt !== undefined && (typeof dflt !== 'number' || !Number.isFinite(dflt))) return `${at}: default must be a number`;
      const f: ParsedField = { key, kind: type, label };
      if (min !== undefined) f.min = min;
      if (max !== undefined) f.max = max;
      if (type === 'integer') f.constraints = { integer: true };
      return f;
    }
    case 'string': {
      const hasEnum = 'enum' in p;
      const hasOneOf = 'oneOf' in p;
      if (hasEnum && hasOneOf) return `${at} has both "enum" and "oneOf"; ambiguous choice list`;
      if (dflt !== undefined && typeof dflt !== 'string') return `${at}: default must be a string`;
      if (hasOneOf) {
        const choices = parseTitledList(p['oneOf'], `${at} oneOf`);
        if (typeof choices === 'string') return choices;
        return { key, kind: 'enum', label, choices };
      }
      if (hasEnum) {
        const values = p['enum'];
        if (!isStringArray(values) || values.length === 0) return `${at}: enum must be a non-empty array of strings`;
        if (hasDuplicates(values)) return `${at}: enum has duplicate values`;
        const names = p['enumNames'];
        if (names !== undefined && (!isStringArray(names) || names.length !== values.length)) {
          return `${at}: enumNames must be strings, one per enum value`;
        }
        return { key, kind: 'enum', label, choices: values.map((id, i) => ({ id, title: names?.[i] })) };
      }
      const minLength = optNumber(p, 'minLength');
      const maxLength = optNumber(p, 'maxLength');
      if (minLength === null || maxLength === null) return `${at}: minLength/maxLength must be finite numbers`;
      const format = p['format'];
      if (format !== undefined && !isStringFormat(format)) {
        return `${at}: format ${JSON.stringify(format)} is not one of email, uri, date, date-time`;
      }
      const c: FieldConstraints = {};
      if (minLength !== undefined) c.minLength = minLength;
      if (maxLength !== undefined) c.maxLength = maxLength;
      if (format !== undefined) c.format = format as StringFormat;
      return Object.keys(c).length > 0 ? { key, kind: 'string', label, constraints: c } : { key, kind: 'string', label };
    }
    case 'array': {
      const items = p['items'];
      if (!isObject(items)) return `${at}: an array property needs "items" (a multi-select enum)`;
      const minItems = optNumber(p, 'minItems');
      const maxItems = optNumber(p, 'maxItems');
      if (minItems === null || maxItems === null) return `${at}: minItems/maxItems must be finite numbers`;
      if (dflt !== undefined && !isStringArray(dflt)) return `${at}: default must be an array of strings`;
      const c: FieldConstraints = {};
      if (minItems !== undefined) c.minItems = minItems;
      if (maxItems !== undefined) c.maxItems = maxItems;
      const counted = Object.keys(c).length > 0 ? { constraints: c } : {};
      if ('anyOf' in items) {
        if ('enum' in items) return `${at}: items has both "enum" and "anyOf"; ambiguous choice list`;
        const choices = parseTitledList(items['anyOf'], `${at} items.anyOf`);
        if (typeof choices === 'string') return choices;
        return { key, kind: 'multi-enum', label, choices, ...counted };
      }
      if (items['type'] === 'string' && isStringArray(items['enum']) && items['enum'].length > 0) {
        const values = items['enum'];
        if (hasDuplicates(values)) return `${at}: items.enum has duplicate values`;
        return { key, kind: 'multi-enum', label, choices: values.map((id) => ({ id, title: undefined })), ...counted };
      }
      return `${at}: array items must be a string enum or an anyOf of {const, title}`;
    }
    default:
      return `${at} has unsupported type ${JSON.stringify(type)} (flat string, number, integer, boolean or enum only)`;
  }
}

interface ParsedSchema {
  fields: ParsedField[];
  required: Set<string>;
}

function parseSchema(schema: unknown): ParsedSchema | string {
  if (!isObject(schema)) return 'requestedSchema is not an object';
  if (schema['type'] !== 'object') return 'requestedSchema.type must be "object"';
  const props = schema['properties'];
  if (!isObject(props)) return 'requestedSchema.properties must be an object';
  const req = schema['required'];
  if (req !== undefined && !isStringArray(req)) return 'requestedSchema.required must be an array of strings';
  const required = new Set(req ?? []);
  for (const k of required) {
    if (!Object.prototype.hasOwnProperty.call(props, k)) return `requestedSchema.required names "${k}", which is not a property`;
  }
  const fields: ParsedField[] = [];
  for (const [key, p] of Object.entries(props)) {
    if (key === '') return 'requestedSchema has an empty property key';
    const f = parseProperty(key, p);
    if (typeof f === 'string') return f;
    fields.push(f);
  }
  return { fields, required };
}

/**
 * Map an MCP `elicitation/create` (form mode) to the `data` of one
 * `attention.requested(kind:"form")` event (AEP-0002 Annex A pin):
 * field id = property key, choice id = enum value; labels = title / `enumNames` / `oneOf` or
 * `anyOf` titles / the value; `integer`/`number` -> `number` with `minimum`/`maximum` as `min`/`max`;
 * `required[]` -> `required:true`, others `required:false`; no `other` (MCP enums are closed);
 * `respond_via:["control"]`. At `redacted`+ the prompt is the `message` (through `redact` at
 * `redacted`); at `metadata` (and `none`, whose `data` the envelope builder removes) the prompt is
 * `"{agent} requests input ({n} fields)"` and every label degrades to its property key or enum
 * value (AEP-0002 §5.3 [metadata*]). URL mode and unmappable schemas return `{ok:false, reason}`.
 */
export function elicitationToForm(params: unknown, opts: ElicitationToFormOptions): ElicitationToFormResult {
  if (!isObject(params)) return { ok: false, reason: 'elicitation params are not an object' };
  const mode = params['mode'];
  if (mode !== undefined && mode !== 'form') return { ok: false, reason: `elicitation mode ${JSON.stringify(mode)} is not form mode` };
  const message = params['message'];
  if (typeof message !== 'string') return { ok: false, reason: 'elicitation message must be a string' };
  const parsed = parseSchema(params['requestedSchema']);
  if (typeof parsed === 'string') return { ok: false, reason: parsed };
  const rank = captureRank(opts.capture);
  if (rank < 0) return { ok: false, reason: `capture ${JSON.stringify(opts.capture)} is not a capture level` };
  const textOK = rank >= captureRank('redacted');
  const pipeline = opts.capture === 'redacted' ? (opts.redact ?? ((s: string) => redactPipeline(s))) : (s: string) => s;
  const text = (real: string, placeholder: string): string => (textOK ? pipeline(real) : placeholder);
  const fields: ElicitationFormField[] = [];
  const fieldMap: ElicitationFieldMap = {};
  const constraints: Record<string, FieldConstraints> = {};
  for (const f of parsed.fields) {
    const out: ElicitationFormField = {
      id: f.key,
      type: f.kind === 'integer' ? 'number' : f.kind === 'enum' || f.kind === 'multi-enum' ? 'select' : f.kind,
      label: text(f.label, f.key),
      required: parsed.required.has(f.key),
    };
    if (f.kind === 'multi-enum') out.multi = true;
    if (f.choices) out.choices = f.choices.map((c) => ({ id: c.id, label: text(c.title ?? c.id, c.id) }));
    if (f.min !== undefined) out.min = f.min;
    if (f.max !== undefined) out.max = f.max;
    fields.push(out);
    setOwn(fieldMap, f.key, { key: f.key, kind: f.kind });
    if (f.constraints) setOwn(constraints, f.key, f.constraints);
  }
  const prompt = text(message, `${opts.agent} requests input (${fields.length} fields)`);
  return { ok: true, data: { kind: 'form', prompt, fields, respond_via: ['control'] }, fieldMap, constraints };
}

function toInteger(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  if (typeof v === 'string' && /^\s*-?\d+\s*$/.test(v)) {
    const n = Number(v);
    return Number.isSafeInteger(n) ? n : undefined;
  }
  return undefined;
}

function toNumber(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v.trim() !== '') {
    const n = Number(v);
    return Number.isFinite(n) ? n : undefined;
  }
  return undefined;
}

function toBoolean(v: unknown): boolean | undefined {
  if (typeof v === 'boolean') return v;
  if (v === 'true') return true;
  if (v === 'false') return false;
  return undefined;
}

/** Options of {@link formValuesToElicitationContent}. */
export interface FormValuesToContentOptions {
  /**
   * Fill a property's `default` when the answer omits it (MCP 2025-11-25 `applyDefaults`; an AEP
   * responder never saw the pre-filled value, so an omitted field means "no change"). Default true.
   */
  applyDefaults?: boolean;
}

/**
 * Map a validated AEP form answer (`answer.values`) back to MCP `ElicitResult.content` for the
 * given `requestedSchema`, restoring MCP types: integers stay integers (an integral string is
 * parsed), numbers, booleans (`"true"`/`"false"` accepted), single-select enum values and
 * multi-select string arrays (a lone string becomes a one-element array). Keys that are not
 * properties are left out. A value that cannot be restored to its property's type (3.5 for an
 * integer, `"maybe"` for a boolean) is kept as given, so {@link validateElicitationContent}
 * says what is wrong with it instead of reporting it missing, and it is never silently dropped
 * (issue 13). The caller validates first (the emitter does, with the constraints
 * {@link elicitationToForm} returns). Never throws.
 */
export function formValuesToElicitationContent(
  schema: unknown,
  values: unknown,
  opts: FormValuesToContentOptions = {},
): Record<string, ElicitationContentValue> {
  const out: Record<string, ElicitationContentValue> = {};
  const parsed = parseSchema(schema);
  if (typeof parsed === 'string') return out;
  const vals: Json = isObject(values) ? values : {};
  const props = (schema as Json)['properties'] as Json;
  for (const f of parsed.fields) {
    let v: unknown = Object.prototype.hasOwnProperty.call(vals, f.key) ? vals[f.key] : undefined;
    if (v === undefined && opts.applyDefaults !== false) {
      const p = props[f.key];
      if (isObject(p)) v = p['default'];
    }
    if (v === undefined || v === null) continue;
    let r: ElicitationContentValue | undefined;
    switch (f.kind) {
      case 'integer':
        r = toInteger(v);
        break;
      case 'number':
        r = toNumber(v);
        break;
      case 'boolean':
        r = toBoolean(v);
        break;
      case 'string':
      case 'enum':
        r = typeof v === 'string' ? v : Array.isArray(v) && v.length === 1 && typeof v[0] === 'string' ? v[0] : undefined;
        break;
      case 'multi-enum':
        r = typeof v === 'string' ? [v] : isStringArray(v) ? [...v] : undefined;
        break;
    }
    setOwn(out, f.key, r !== undefined ? r : (v as ElicitationContentValue));
  }
  return out;
}

/** Options of {@link validateElicitationContent}. */
export interface ValidateElicitationContentOptions {
  /** JSON pointer prefix of issue paths; default `/data/answer/values` (one issue shape everywhere). */
  basePath?: string;
}

function rangeText(f: { min?: number; max?: number }): string {
  if (f.min !== undefined && f.max !== undefined) return `from ${f.min} to ${f.max}`;
  return f.min !== undefined ? `of at least ${f.min}` : `of at most ${String(f.max)}`;
}

/**
 * Check MCP `content` (after {@link formValuesToElicitationContent}) against the
 * `requestedSchema`: required keys, JSON types, integer-ness, `minimum`/`maximum`,
 * `minLength`/`maxLength` (code points), `format`, enum membership and `minItems`/`maxItems`.
 * Issues carry the same rule ids, paths (`/data/answer/values/<key>`) and kind of message as
 * `validateFormAnswer` with the constraints of {@link elicitationToForm} (`form.*`, rows of
 * `RULES`), so both give the same verdict; an unmappable schema gives `mcp-elicitation.schema`.
 * Messages never repeat a submitted value. Prefer passing the constraints to the emitter's
 * answer check; this remains for callers that validate content. Never throws.
 */
export function validateElicitationContent(schema: unknown, content: unknown, opts: ValidateElicitationContentOptions = {}): Issue[] {
  const base = typeof opts.basePath === 'string' ? opts.basePath : VALUES_PATH;
  const parsed = parseSchema(schema);
  if (typeof parsed === 'string')
    return [
      {
        rule: 'mcp-elicitation.schema',
        path: base,
        message: `mcp-elicitation.schema: the requestedSchema cannot be mapped to a form: ${parsed}`,
        section: MCP_SECTION,
      },
    ];
  const issues: Issue[] = [];
  const add = (rule: FormRule, key: string, message: string) =>
    issues.push({ rule, path: pointer(base, key), message: `${rule}: ${message}`, section: FORM_RULES[rule].section });
  const c: Json = isObject(content) ? content : {};
  const props = (schema as Json)['properties'] as Json;
  for (const f of parsed.fields) {
    const p = props[f.key] as Json;
    const k = f.key;
    const v = Object.prototype.hasOwnProperty.call(c, k) ? c[k] : undefined;
    if (v === undefined) {
      if (parsed.required.has(k)) add('form.required-missing', k, `required field "${k}" has no entry in values (AEP-0002 §5.3 rule 1)`);
      continue;
    }
    const n = (name: string): number | undefined => {
      const x = p[name];
      return typeof x === 'number' && Number.isFinite(x) ? x : undefined;
    };
    switch (f.kind) {
      case 'integer':
      case 'number': {
        if (typeof v !== 'number' || !Number.isFinite(v)) {
          add('form.type-mismatch', k, `field "${k}" is a number field and its entry is not a number`);
          break;
        }
        if (f.kind === 'integer' && !Number.isInteger(v))
          add('form.not-integer', k, `field "${k}" takes whole numbers only and its entry has a fractional part`);
        const below = f.min !== undefined && v < f.min;
        if (below || (f.max !== undefined && v > f.max))
          add('form.out-of-range', k, `field "${k}" takes numbers ${rangeText(f)}, and its entry is ${below ? 'below' : 'above'} that`);
        break;
      }
      case 'boolean':
        if (typeof v !== 'boolean') add('form.type-mismatch', k, `field "${k}" is a boolean field and its entry is not a boolean`);
        break;
      case 'string': {
        if (typeof v !== 'string') {
          add('form.type-mismatch', k, `field "${k}" is a string field and its entry is not a string`);
          break;
        }
        const minLength = n('minLength');
        const maxLength = n('maxLength');
        const len = minLength !== undefined || maxLength !== undefined ? codePointLength(v) : 0;
        if (minLength !== undefined && len < minLength) add('form.too-short', k, `field "${k}" needs at least ${minLength} characters`);
        if (maxLength !== undefined && len > maxLength) add('form.too-long', k, `field "${k}" takes at most ${maxLength} characters`);
        const format = p['format'];
        if (isStringFormat(format) && !matchesFormat(format, v)) add('form.format', k, `field "${k}" must be a valid ${format}`);
        break;
      }
      case 'enum':
        if (typeof v !== 'string' || !f.choices?.some((ch) => ch.id === v)) {
          add(
            'form.choice-forged',
            k,
            `the entry of select field "${k}" is not one of its choice ids, and the field takes no other text (AEP-0002 §5.3 rule 2)`,
          );
        }
        break;
      case 'multi-enum': {
        if (!isStringArray(v)) {
          add('form.type-mismatch', k, `multi select field "${k}" must be answered with an array of choice ids`);
          break;
        }
        if (!v.every((x) => f.choices?.some((ch) => ch.id === x)))
          add('form.choice-forged', k, `an element of multi select field "${k}" is not one of its choice ids (AEP-0002 §5.3 rule 2)`);
        const minItems = n('minItems');
        const maxItems = n('maxItems');
        if (minItems !== undefined && v.length < minItems) add('form.too-few-choices', k, `field "${k}" needs at least ${minItems} choices`);
        if (maxItems !== undefined && v.length > maxItems) add('form.too-many-choices', k, `field "${k}" takes at most ${maxItems} choices`);
        break;
      }
    }
  }
  return issues;
}
