// Form logic of the inbox, pure: the draft a person is editing, the `answer.values` it becomes
// (AEP-0006 §3), the command envelope that carries it (AEP-0004 §2), the capture level that
// envelope must claim, and mapping validation issues back onto fields. Validation itself is the
// shared `validateFormAnswer` from @aep/protocol: the same rules the emitter applies.
import { redactValue, ulid, validateFormAnswer } from '@aep/protocol';
import type { FieldSpec, WireEvent } from './store.js';
import { captureOf } from './store.js';

/** What the person has entered for one field (kept as typed, converted on submit). */
export interface FieldDraft {
  text?: string;
  checked?: boolean;
  picked?: string[];
  otherOn?: boolean;
  otherText?: string;
}

/** A draft for a whole form: field id → entry. */
export type FormDraft = Record<string, FieldDraft>;

/** One problem to show, attached to a field id when it names one. */
export interface ShownIssue {
  field?: string;
  message: string;
  rule?: string;
}

/** The `fields` of a form request, keeping only well-formed specs (a producer bug never crashes the UI). */
export function fieldsOf(e: WireEvent): FieldSpec[] {
  const raw = e.data?.['fields'];
  if (!Array.isArray(raw)) return [];
  const out: FieldSpec[] = [];
  for (const f of raw) {
    if (typeof f !== 'object' || f === null) continue;
    const o = f as Record<string, unknown>;
    if (typeof o['id'] !== 'string' || typeof o['type'] !== 'string') continue;
    const spec: FieldSpec = { id: o['id'], type: o['type'], label: typeof o['label'] === 'string' ? o['label'] : o['id'] };
    if (o['required'] === true) spec.required = true;
    if (o['multi'] === true) spec.multi = true;
    if (o['other'] === true) spec.other = true;
    if (typeof o['min'] === 'number') spec.min = o['min'];
    if (typeof o['max'] === 'number') spec.max = o['max'];
    if (Array.isArray(o['choices'])) {
      spec.choices = [];
      for (const c of o['choices']) {
        if (typeof c !== 'object' || c === null) continue;
        const co = c as Record<string, unknown>;
        if (typeof co['id'] !== 'string') continue;
        spec.choices.push({ id: co['id'], label: typeof co['label'] === 'string' ? co['label'] : co['id'] });
      }
    }
    out.push(spec);
  }
  return out;
}

/** True when the request's content is withheld at its capture level: labels are placeholders (AEP-0006 §5.1). */
export function contentWithheld(e: WireEvent): boolean {
  const c = captureOf(e);
  return c === 'metadata' || c === 'none';
}

/** Convert a draft to `answer.values`: one entry per answered field; unanswered fields are absent (AEP-0006 §3). */
export function draftToValues(fields: readonly FieldSpec[], draft: FormDraft): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const f of fields) {
    const d = draft[f.id] ?? {};
    switch (f.type) {
      case 'string':
        if (d.text !== undefined && d.text !== '') values[f.id] = d.text;
        break;
      case 'number':
        if (d.text !== undefined && d.text.trim() !== '') {
          const n = Number(d.text);
          // A non-number is sent as typed so the emitter's check (and ours) names it.
          values[f.id] = Number.isFinite(n) ? n : d.text;
        }
        break;
      case 'boolean':
        values[f.id] = d.checked === true;
        break;
      case 'select': {
        const picked = (d.picked ?? []).filter((id) => f.choices?.some((c) => c.id === id));
        const other = f.other && d.otherOn && d.otherText !== undefined && d.otherText !== '' ? d.otherText : undefined;
        if (f.multi) {
          const arr: string[] = [...picked];
          if (other !== undefined) arr.push(other);
          if (arr.length > 0) values[f.id] = arr;
        } else if (other !== undefined && d.otherOn) {
          values[f.id] = other;
        } else if (picked[0] !== undefined) {
          values[f.id] = picked[0];
        }
        break;
      }
      default:
        // Unknown field type (future spec): offer a text box and send what was typed.
        if (d.text !== undefined && d.text !== '') values[f.id] = d.text;
    }
  }
  return values;
}

/** True when `values` carries free text: a string field, or select text that is not a choice id (AEP-0006 §5.2). */
export function carriesFreeText(fields: readonly FieldSpec[], values: Record<string, unknown>): boolean {
  for (const [k, v] of Object.entries(values)) {
    const f = fields.find((x) => x.id === k);
    if (!f) return true;
    if (f.type === 'number' && typeof v === 'number') continue;
    if (f.type === 'boolean' && typeof v === 'boolean') continue;
    if (f.type === 'select') {
      const ids = new Set((f.choices ?? []).map((c) => c.id));
      const list = Array.isArray(v) ? v : [v];
      if (list.every((x) => typeof x === 'string' && ids.has(x))) continue;
    }
    return true;
  }
  return false;
}

/**
 * A person-readable sentence for a rule id of the shared form check (protocol FORM_RULES), with
 * the field's constraints. Unknown rules fall back to the message the emitter or check gave.
 */
export function humanMessage(rule: string | undefined, field: FieldSpec | undefined, fallback: string | undefined): string {
  switch (rule) {
    case 'form.required-missing':
      return 'This question is required: answer it before sending.';
    case 'form.choice-forged':
      return 'Pick one of the listed choices.';
    case 'form.out-of-range': {
      const lo = field?.min;
      const hi = field?.max;
      return lo !== undefined && hi !== undefined
        ? `Enter a number from ${lo} to ${hi}.`
        : lo !== undefined
          ? `Enter a number of at least ${lo}.`
          : hi !== undefined
            ? `Enter a number of at most ${hi}.`
            : 'The number is out of range.';
    }
    case 'form.type-mismatch':
      return field?.type === 'number' ? 'Enter a number.' : field?.type === 'boolean' ? 'Answer yes or no.' : 'This answer has the wrong type.';
    case 'form.array-for-single':
      return 'Pick only one choice.';
    case 'form.duplicate-choice':
      return 'A choice is picked twice.';
    case 'form.unknown-key':
      return 'An answer names a question this form does not have.';
    default:
      return fallback ?? rule ?? 'invalid';
  }
}

/** The field a JSON pointer names: the segment after `values`, else the first segment (`/{fieldId}/…`). */
function fieldFromPath(path: string, fields: readonly FieldSpec[]): string | undefined {
  const segs = path
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const ids = new Set(fields.map((f) => f.id));
  const i = segs.lastIndexOf('values');
  const cand = i >= 0 ? segs[i + 1] : segs[0];
  return cand !== undefined && ids.has(cand) ? cand : undefined;
}

/** Run the shared protocol check (the emitter's rules) and attach each issue to its field. */
export function checkValues(fields: readonly FieldSpec[], values: Record<string, unknown>): ShownIssue[] {
  let issues: { rule: string; path: string; message: string }[];
  try {
    issues = validateFormAnswer(fields as never, values as never) as { rule: string; path: string; message: string }[];
  } catch {
    return [];
  }
  return issues.map((i) => {
    const f = fieldFromPath(i.path, fields);
    const out: ShownIssue = {
      message: humanMessage(
        i.rule,
        fields.find((x) => x.id === f),
        i.message,
      ),
      rule: i.rule,
    };
    if (f !== undefined) out.field = f;
    return out;
  });
}

/**
 * Issues carried by an emitter's `control.rejected`: a structured `issues` array when the emitter
 * adds one (`{path, message, rule?}` items), and always the `detail` text when present.
 */
export function rejectionIssues(ack: Record<string, unknown>, fields: readonly FieldSpec[]): ShownIssue[] {
  const data = (typeof ack['data'] === 'object' && ack['data'] !== null ? ack['data'] : {}) as Record<string, unknown>;
  const out: ShownIssue[] = [];
  if (Array.isArray(data['issues'])) {
    for (const it of data['issues']) {
      if (typeof it !== 'object' || it === null) continue;
      const o = it as Record<string, unknown>;
      const f = typeof o['path'] === 'string' ? fieldFromPath(o['path'], fields) : typeof o['field'] === 'string' ? o['field'] : undefined;
      const rule = typeof o['rule'] === 'string' ? o['rule'] : undefined;
      // The emitter's message is agent-authored text (and absent at `metadata`): the rule id is
      // what the inbox explains in its own words.
      const s: ShownIssue = {
        message: humanMessage(
          rule,
          fields.find((x) => x.id === f),
          typeof o['message'] === 'string' ? o['message'] : undefined,
        ),
      };
      if (rule !== undefined) s.rule = rule;
      if (f !== undefined) s.field = f;
      out.push(s);
    }
  }
  return out;
}

/** Identity the inbox uses as a foreign emitter of commands (AEP-0001 §5.2). */
export function senderSource(host: string): string {
  return `aep://${host || 'localhost'}/agent/aep-inbox`;
}

/**
 * The capture level a command carrying `answer` must claim (AEP-0001 §8, AEP-0003 §9.5: the
 * level really applied). Structure only: `metadata`. Free text: `redacted` when the AEP-0003 §9.4
 * pipeline leaves it unchanged (so the claim is true), else `full`: the person's words are sent
 * verbatim, because the agent must receive exactly what was typed, and observers whose ceiling
 * is below `full` get the text dropped by the relay's down-level instead of seeing a secret.
 */
export function commandCapture(answer: Record<string, unknown>, freeText: boolean): 'metadata' | 'redacted' | 'full' {
  if (!freeText) return 'metadata';
  return JSON.stringify(redactValue(answer)) === JSON.stringify(answer) ? 'redacted' : 'full';
}

/** Build a `control.attention.respond` command for a request (AEP-0004 §2, AEP-0002 §7). */
export function buildRespond(
  request: WireEvent,
  answer: Record<string, unknown>,
  capture: 'metadata' | 'redacted' | 'full',
  host: string,
): Record<string, unknown> & { id: string; session: string } {
  const cmd: Record<string, unknown> & { id: string; session: string } = {
    aep: '0.1',
    id: ulid(),
    type: 'control.attention.respond',
    subject: request.id,
    cause: request.id,
    time: new Date().toISOString(),
    source: senderSource(host),
    agent: 'aep-inbox',
    session: request.session ?? '',
  };
  // `metadata` is the default and is omitted (AEP-0001 §5.1: absent optional attributes are omitted).
  if (capture !== 'metadata') cmd['capture'] = capture;
  cmd['data'] = { answer };
  return cmd;
}
