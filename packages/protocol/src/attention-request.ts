// Emitter-side construction of `attention.requested` data at a capture level (AEP-0002 §5.3,
// AEP-0003 §9.2, AEP-0006 capture gating; AEP-0002 §5.3, AEP-0003 §9).
import type { CaptureLevel } from './levels.js';
import { captureRank } from './levels.js';
import type { FieldSpec } from './forms.js';
import { redact, setOwn } from './redact.js';
import type { RedactOptions } from './redact.js';

/** `attention.requested.kind` (AEP-0002 §5.3; `form` from AEP-0006). */
export type AttentionKind = 'permission' | 'input' | 'auth' | 'review' | 'form' | 'other';

/** One closed choice of a request (`options[]`). */
export interface AttentionOption {
  id: string;
  label: string;
}

/** What an emitter knows about a request, with real text, before capture gating. */
export interface AttentionRequestInput {
  kind: AttentionKind;
  /** The real prompt (model/hook text). */
  prompt: string;
  options?: readonly AttentionOption[];
  /** Only with `kind: "form"`. */
  fields?: readonly FieldSpec[];
  expires_at?: string;
  respond_via?: readonly ('control' | 'oob')[];
  /** Supporting context; `full` capture only. */
  context?: Record<string, unknown>;
}

/** The `data` of `attention.requested` as built by {@link buildAttentionRequestData}. */
export interface AttentionRequestedData {
  kind: AttentionKind;
  prompt: string;
  options?: AttentionOption[];
  fields?: FieldSpec[];
  expires_at?: string;
  respond_via?: ('control' | 'oob')[];
  context?: Record<string, unknown>;
}

/** Options of {@link buildAttentionRequestData}. */
export interface BuildAttentionRequestOptions {
  /** The emitting agent (envelope `agent`), used by the default prompt synthesis. */
  agent?: string;
  /** The envelope `subject` (an identifier), used by the default prompt synthesis. */
  subject?: string;
  /** A caller-supplied structural synthesis for `metadata` (e.g. `"claude-code asks 2 questions"`). Must use structure only. */
  synthesize?: (input: AttentionRequestInput) => string;
  /** Label placeholder at `metadata`: the item's `id` (default, what a hop produces) or its 1-based `index`. */
  placeholder?: 'id' | 'index';
  /** Options for the AEP-0003 §9.4 pipeline applied to prompt and labels at `redacted`. */
  redaction?: RedactOptions;
}

/**
 * The structural prompt of AEP-0003 §9.2: `"{agent} requests {kind}: {subject}"`, or
 * `"{agent} requests {kind}"` when there is no subject. Uses identifiers only.
 */
export function synthesizePrompt(agent: string, kind: string, subject?: string): string {
  return subject !== undefined && subject !== '' ? `${agent} requests ${kind}: ${subject}` : `${agent} requests ${kind}`;
}

/**
 * Builds `attention.requested` `data` for an emitter at capture level `capture`
 * (AEP-0002 §5.3 [metadata*], AEP-0003 §9.2/§9.4, AEP-0006):
 * - `metadata`: `prompt` synthesized from structure (default {@link synthesizePrompt} with
 *   `opts.agent`/`opts.subject`, or `opts.synthesize`); every option, field and choice label is a
 *   structural placeholder (the item's id, or its 1-based index string); no `context`.
 * - `redacted`: prompt and labels through the §9.4 pipeline ({@link redact}); no `context`.
 * - `full`: verbatim, `context` included.
 * - `none`: returns `undefined` (the event carries no `data`, AEP-0001 §8.2).
 * Ids, types, `required`, `multi`, `other`, `min`, `max`, `expires_at`, `respond_via` are kept
 * at every level. Only known members are copied. Never mutates the input.
 */
export function buildAttentionRequestData(
  input: AttentionRequestInput,
  capture: CaptureLevel,
  opts: BuildAttentionRequestOptions = {},
): AttentionRequestedData | undefined {
  const rank = captureRank(capture);
  if (rank <= 0) return undefined;
  const meta = rank === 1;
  const full = rank === 3;
  const text = (s: string) => (full ? s : redact(s, opts.redaction));
  const label = (item: { id: string; label: string }, index: number) =>
    meta ? (opts.placeholder === 'index' ? String(index + 1) : String(item.id)) : text(String(item.label));

  const prompt = meta ? (opts.synthesize ? opts.synthesize(input) : synthesizePrompt(opts.agent ?? 'agent', input.kind, opts.subject)) : text(input.prompt);
  const data: AttentionRequestedData = { kind: input.kind, prompt };
  if (input.options) data.options = input.options.map((o, i) => ({ id: o.id, label: label(o, i) }));
  if (input.fields) {
    data.fields = input.fields.map((f, i) => {
      const out: FieldSpec = { id: f.id, type: f.type, label: label(f, i) };
      if (f.required !== undefined) out.required = f.required;
      if (f.multi !== undefined) out.multi = f.multi;
      if (f.other !== undefined) out.other = f.other;
      if (f.choices) out.choices = f.choices.map((c, j) => ({ id: c.id, label: label(c, j) }));
      if (f.min !== undefined) out.min = f.min;
      if (f.max !== undefined) out.max = f.max;
      return out;
    });
  }
  if (input.expires_at !== undefined) data.expires_at = input.expires_at;
  if (input.respond_via) data.respond_via = [...input.respond_via];
  if (full && input.context !== undefined) data.context = input.context;
  return data;
}

function isObj(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * `attention.requested` data an emitter was handed ready-made (e.g. a mapping's pinned shape),
 * made honest for `capture: "redacted"` (AEP-0003 §9.4/§9.5, issue 12): `prompt`, every
 * `options[].label`, `fields[].label` and `fields[].choices[].label` pass through the §9.4
 * pipeline (idempotent, so text that already went through it with the same options is
 * unchanged), and `context` (`full` only) is removed. Every other member is copied as is.
 * Returns a new object; never mutates; never throws.
 */
export function redactAttentionRequestData(data: Readonly<Record<string, unknown>>, opts?: RedactOptions): Record<string, unknown> {
  const text = (v: unknown) => (typeof v === 'string' ? redact(v, opts) : v);
  const labelled = (list: unknown, inner?: (item: Record<string, unknown>) => Record<string, unknown>) =>
    Array.isArray(list)
      ? list.map((item: unknown) => {
          if (!isObj(item)) return item;
          const out: Record<string, unknown> = { ...item };
          if ('label' in out) out['label'] = text(out['label']);
          return inner ? inner(out) : out;
        })
      : list;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(data)) {
    if (key === 'context') continue;
    const v = data[key];
    if (key === 'prompt') out[key] = text(v);
    else if (key === 'options') out[key] = labelled(v);
    else if (key === 'fields') out[key] = labelled(v, (f) => ('choices' in f ? { ...f, choices: labelled(f['choices']) } : f));
    else setOwn(out, key, v); // an own member even for the key __proto__
  }
  return out;
}
