// Single-event validation (AEP-0001 §5, §8.2, §10; AEP-0002 §5): envelope schema, payload schema
// of registered types, capture honesty of the payload, and the subject rules of the attention
// lifecycle and of control.attention.respond. Returns issues; never throws.
import type { Issue } from './issue.js';
import { RULES, issue, type RuleId } from './rules.js';
import { envelopeFastValid } from './envelope.js';
import { captureRank } from './levels.js';
import { CAPTURE_TREES, type CaptureTree } from './generated/capture-trees.js';
import { TYPE_REGISTRY } from './generated/registry.js';
import { envelope as envelopeValidator, PAYLOAD_VALIDATORS, RULE_PATHS as RULE_PATHS_RAW } from './generated/validators.js';

/** An ajv error object (the subset we read). */
interface AjvError {
  instancePath: string;
  schemaPath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
  propertyName?: string;
}
type AjvValidate = ((data: unknown) => boolean) & { errors?: AjvError[] | null };

const ENVELOPE = envelopeValidator as unknown as AjvValidate;
const PAYLOADS = PAYLOAD_VALIDATORS as unknown as Record<string, AjvValidate>;
const RULE_PATHS = RULE_PATHS_RAW as unknown as Record<string, [string, string][]>;

/** Options of {@link validateEvent}. */
export interface ValidateOptions {
  /**
   * Emitter strictness (AEP-0001 §6, §10): also reject unregistered core-category types, which
   * consumers must tolerate but emitters must not produce. Default false (consumer view).
   */
  emitter?: boolean;
}

function ruleFor(table: readonly [string, string][] | undefined, err: AjvError, fallback: 'envelope' | 'payload'): RuleId {
  if (table) {
    for (const [prefix, rule] of table) {
      if (err.schemaPath === prefix || err.schemaPath.startsWith(prefix + '/')) return rule as RuleId;
    }
  }
  if (fallback === 'envelope') {
    if (err.schemaPath === '#/required') return 'envelope.required';
    return 'envelope.not-object';
  }
  switch (err.keyword) {
    case 'required':
      return 'payload.required';
    case 'type':
      return 'payload.type';
    case 'enum':
      return 'payload.enum';
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return 'payload.range';
    case 'format':
      return 'payload.format';
    default:
      return 'payload.schema';
  }
}

function pathOf(err: AjvError, base: string): string {
  let p = base + err.instancePath;
  if (err.keyword === 'required' && typeof err.params['missingProperty'] === 'string') {
    p += '/' + escapePointer(err.params['missingProperty']);
  } else if (err.propertyName !== undefined) {
    p += '/' + escapePointer(err.propertyName);
  }
  return p;
}

function escapePointer(s: string): string {
  return s.replace(/~/g, '~0').replace(/\//g, '~1');
}

function describe(rule: RuleId, err: AjvError, path: string): string {
  const where = path === '' ? 'event' : path;
  if (err.keyword === 'false schema') return `${where} is not allowed: ${RULES[rule].meaning}`;
  if (err.keyword === 'required') return `${where} is missing: ${RULES[rule].meaning}`;
  return `${where} ${err.message ?? 'is invalid'}: ${RULES[rule].meaning}`;
}

function mapErrors(
  errors: readonly AjvError[] | null | undefined,
  table: readonly [string, string][] | undefined,
  fallback: 'envelope' | 'payload',
  base: string,
  out: Issue[],
): void {
  if (!errors) return;
  const seen = new Set<string>();
  for (const err of errors) {
    // `if` and `propertyNames` errors only summarize the failure of a subschema reported separately.
    if (err.keyword === 'if' || err.keyword === 'propertyNames') continue;
    const rule = ruleFor(table, err, fallback);
    const path = pathOf(err, base);
    const k = rule + '\0' + path;
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(issue(rule, path, describe(rule, err, path)));
  }
}

/**
 * Envelope schema only (AEP-0001 §5): what a relay gates on (AEP-0003 §3.2). Never throws.
 * Returns `[]` for a valid envelope.
 */
export function validateEnvelope(e: unknown): Issue[] {
  // The fast path reads every member too: a getter or Proxy that throws is reported like any
  // other unreadable input instead of escaping (the relay and the bridges call this directly,
  // without validateEvent's catch).
  try {
    if (envelopeFastValid(e)) return [];
  } catch {
    return [issue('envelope.not-object', '', 'event could not be read as a JSON object')];
  }
  const out: Issue[] = [];
  try {
    ENVELOPE(e);
    mapErrors(ENVELOPE.errors, RULE_PATHS['envelope'], 'envelope', '', out);
  } catch {
    out.push(issue('envelope.not-object', '', 'event could not be read as a JSON object'));
  }
  if (out.length === 0) {
    // Cannot happen while the fast path and the schema agree (pinned by a property test); stay
    // on the safe side and report instead of silently accepting.
    out.push(issue('envelope.not-object', '', 'event rejected by the envelope fast path'));
  }
  return out;
}

/** Per registered type, everything validateEvent needs, behind one Map lookup (hot path). */
interface TypeInfo {
  validate: AjvValidate | undefined;
  rules: [string, string][] | undefined;
  tree: CaptureTree | undefined;
  /** 1 = attention lifecycle follower (AEP-0002 §7.1), 2 = control.attention.respond (AEP-0004 §5) */
  subject: 0 | 1 | 2;
}
const TYPE_INFO = new Map<string, TypeInfo>(
  TYPE_REGISTRY.map((r) => [
    r.type,
    {
      validate: PAYLOADS[r.type],
      rules: RULE_PATHS['payload_' + r.type.replace(/[^a-z0-9]/g, '_')],
      tree: CAPTURE_TREES[r.type],
      subject: ['attention.answered', 'attention.resolved', 'attention.timeout', 'attention.routed'].includes(r.type)
        ? 1
        : r.type === 'control.attention.respond'
          ? 2
          : 0,
    },
  ]),
);

/**
 * Validates one event: envelope schema, payload schema (only when `data` is present on a
 * registered type with a schema; AEP-0001 §10), capture honesty of `data` (AEP-0001 §8.2(a)),
 * subject rules (AEP-0002 §7.1, AEP-0004 §5). With `emitter: true` also rejects unregistered
 * core-category types. Never throws, whatever the input.
 */
export function validateEvent(e: unknown, opts?: ValidateOptions): Issue[] {
  try {
    return validateEventUnsafe(e, opts);
  } catch {
    return [issue('envelope.not-object', '', 'event could not be read as a JSON object')];
  }
}

function validateEventUnsafe(e: unknown, opts?: ValidateOptions): Issue[] {
  const out = validateEnvelope(e);
  if (typeof e !== 'object' || e === null || Array.isArray(e)) return out;
  const o = e as Record<string, unknown>;
  const type = o['type'];
  if (typeof type !== 'string') return out;
  const info = TYPE_INFO.get(type);
  if (opts?.emitter && info === undefined && !type.startsWith('x.') && !out.some((i) => i.rule === 'envelope.type-name')) {
    out.push(issue('type.unregistered', '/type', `type "${type}" is not a registered core type: ${RULES['type.unregistered'].meaning}`));
  }
  if (info === undefined) {
    if (o['data'] !== undefined && o['capture'] === 'none')
      out.push(issue('capture.data-at-none', '/data', `data is present at capture none: ${RULES['capture.data-at-none'].meaning}`));
    return out;
  }
  if (info.subject !== 0 && o['subject'] === undefined) {
    if (info.subject === 1) out.push(issue('attention.subject-required', '/subject', `${type} has no subject: ${RULES['attention.subject-required'].meaning}`));
    else out.push(issue('command.subject-required', '/subject', `${type} has no subject: ${RULES['command.subject-required'].meaning}`));
  }
  const data = o['data'];
  if (data === undefined) return out;
  const capture = o['capture'] === undefined ? 'metadata' : o['capture'];
  if (capture === 'none') {
    out.push(issue('capture.data-at-none', '/data', `data is present at capture none: ${RULES['capture.data-at-none'].meaning}`));
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return out;
  const validate = info.validate;
  if (validate === undefined) return out;
  if (!validate(data)) mapErrors(validate.errors, info.rules, 'payload', '/data', out);
  const rank = captureRank(capture);
  const tree = info.tree;
  if (tree && rank >= 1 && rank < 3) captureWalkData(data, tree, rank, out);
  return out;
}

// Segments of the member being walked below `/data` (keys and array indices); the JSON Pointer
// is built from them only when an issue is reported (the walk runs on every event).
const WALK: (string | number)[] = [];

function walkPath(key: string): string {
  let p = '/data';
  for (const seg of WALK) p += '/' + (typeof seg === 'number' ? String(seg) : escapePointer(seg));
  return `${p}/${escapePointer(key)}`;
}

/** Reports every member whose `x-aep-capture` is above the event's capture (recursive, bounded by the schema's depth). */
function captureWalkData(data: object, tree: CaptureTree, rank: number, out: Issue[]): void {
  // Setting `length` is a runtime call on every event; the walk leaves WALK empty (push/pop
  // pairs), so reset it only after a walk that threw half-way.
  if (WALK.length !== 0) WALK.length = 0;
  captureWalk(data, tree, rank, out);
}

function captureWalk(value: unknown, tree: CaptureTree, rank: number, out: Issue[]): void {
  if (Array.isArray(value)) {
    const items = tree.items;
    if (items?.properties !== undefined || items?.items !== undefined) {
      for (let i = 0; i < value.length; i++) {
        WALK.push(i);
        captureWalk(value[i], items, rank, out);
        WALK.pop();
      }
    }
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  const props = tree.properties;
  if (props === undefined) return;
  for (const k in value) {
    const sub = props[k];
    if (sub === undefined) continue;
    if (captureRank(sub.level) > rank) {
      const p = walkPath(k);
      out.push(
        issue(
          'capture.field-above-capture',
          p,
          `${p} needs capture >= ${sub.level} but the event declares ${rank === 1 ? 'metadata' : 'redacted'}: ${RULES['capture.field-above-capture'].meaning}`,
        ),
      );
      continue;
    }
    if (sub.properties !== undefined || sub.items !== undefined) {
      WALK.push(k);
      captureWalk((value as Record<string, unknown>)[k], sub, rank, out);
      WALK.pop();
    }
  }
}
