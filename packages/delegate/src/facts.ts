// What a rule may see of a request: structural facts only (issue 18; AEP-0002 §8 "never
// auto-answer on content alone"). The delegate reads at capture `metadata`, where the prompt is
// synthesized and every label is a placeholder, and this module does not even read them: it
// takes ids, types, flags, numbers, the `approvaldigest` extension attribute and the envelope's
// provenance. No member that can hold authored text (prompt, labels, context, answer text) is
// ever copied into the facts, so no rule, engine or log line can depend on one.
import { APPROVAL_DIGEST_ATTR } from '@aep/protocol';

/** Attention kinds (AEP-0002 §5.3). */
export type RequestKind = 'permission' | 'input' | 'auth' | 'review' | 'form' | 'other';

const KINDS: readonly RequestKind[] = ['permission', 'input', 'auth', 'review', 'form', 'other'];

/** One form field as a rule sees it (AEP-0006 `field_spec` without its label). */
export interface FieldFacts {
  id: string;
  type: 'string' | 'number' | 'boolean' | 'select';
  required: boolean;
  multi: boolean;
  other: boolean;
  /** Choice ids in order (select only; labels are never read). */
  choices: string[];
  min?: number;
  max?: number;
}

/** The structural facts of one `attention.requested` event. */
export interface RequestFacts {
  /** The request id (the lifecycle's subject). */
  id: string;
  session: string;
  agent: string;
  source: string;
  kind: RequestKind;
  /** The envelope `subject`: for a permission request the tool name (AEP-0002 §7 step 1). */
  tool?: string;
  severity: string;
  /** The `approvaldigest` extension attribute (contract C1), when present and well formed. */
  digest?: string;
  /** Option ids in order (labels are never read). */
  options: string[];
  fields: FieldFacts[];
  /** `respond_via` when declared. */
  respondVia?: string[];
  /** The request `time` in epoch ms (emitter-asserted; `NaN` when unparseable). */
  time: number;
  /** `expires_at` in epoch ms, when declared and parseable. */
  expiresAt?: number;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const DIGEST_RE = /^[0-9a-f]{32}$/;

/**
 * The facts of an `attention.requested` event, or undefined when it is not one this delegate
 * can reason about (no session, no data, unknown kind). Reads ids, types, flags and numbers
 * only; never `prompt`, a label, `context` or any other member.
 */
export function requestFacts(event: unknown): RequestFacts | undefined {
  if (!isObject(event) || event['type'] !== 'attention.requested') return undefined;
  const id = event['id'];
  const session = event['session'];
  const agent = event['agent'];
  const source = event['source'];
  if (typeof id !== 'string' || typeof session !== 'string' || typeof agent !== 'string' || typeof source !== 'string') return undefined;
  const data = isObject(event['data']) ? event['data'] : undefined;
  const kind = data?.['kind'];
  if (typeof kind !== 'string' || !(KINDS as readonly string[]).includes(kind)) return undefined;
  const facts: RequestFacts = {
    id,
    session,
    agent,
    source,
    kind: kind as RequestKind,
    severity: typeof event['severity'] === 'string' ? event['severity'] : 'info',
    options: [],
    fields: [],
    time: typeof event['time'] === 'string' ? Date.parse(event['time']) : NaN,
  };
  if (typeof event['subject'] === 'string') facts.tool = event['subject'];
  const digest = event[APPROVAL_DIGEST_ATTR];
  if (typeof digest === 'string' && DIGEST_RE.test(digest)) facts.digest = digest;
  if (Array.isArray(data?.['options'])) {
    for (const o of data['options'] as unknown[]) if (isObject(o) && typeof o['id'] === 'string') facts.options.push(o['id']);
  }
  if (Array.isArray(data?.['fields'])) {
    for (const f of data['fields'] as unknown[]) {
      const ff = fieldFacts(f);
      if (ff) facts.fields.push(ff);
    }
  }
  const via = data?.['respond_via'];
  if (Array.isArray(via)) facts.respondVia = via.filter((v): v is string => typeof v === 'string');
  const exp = data?.['expires_at'];
  if (typeof exp === 'string' && Number.isFinite(Date.parse(exp))) facts.expiresAt = Date.parse(exp);
  return facts;
}

function fieldFacts(f: unknown): FieldFacts | undefined {
  if (!isObject(f) || typeof f['id'] !== 'string') return undefined;
  const type = f['type'];
  if (type !== 'string' && type !== 'number' && type !== 'boolean' && type !== 'select') return undefined;
  const out: FieldFacts = {
    id: f['id'],
    type,
    required: f['required'] === true,
    multi: type === 'select' && f['multi'] === true,
    other: type === 'select' && f['other'] === true,
    choices: [],
  };
  if (type === 'select' && Array.isArray(f['choices'])) {
    for (const c of f['choices'] as unknown[]) if (isObject(c) && typeof c['id'] === 'string') out.choices.push(c['id']);
  }
  if (type === 'number') {
    if (typeof f['min'] === 'number' && Number.isFinite(f['min'])) out.min = f['min'];
    if (typeof f['max'] === 'number' && Number.isFinite(f['max'])) out.max = f['max'];
  }
  return out;
}

/** True when the request can be answered over the control bus (AEP-0008 §2: `respond_via`). */
export function answerableByControl(f: RequestFacts): boolean {
  return f.respondVia === undefined || f.respondVia.includes('control');
}
