// "A person approves only what they can see" (docs/security.md, docs/decisions.md "Approvals").
//
// A permission request whose decision lets something run carries its complete input as the
// *approval text*: the exact text the emitter will act on (for Claude Code's Bash the command;
// otherwise the tool input as JSON), placed verbatim in `data.prompt` at the level the event was
// emitted at, plus the extension attribute `approvaldigest` = §9.3 digest of that text, computed
// on the original (before any redaction). The attribute is structural (a hash, like
// `args_digest`) and survives every down-level; the text does not:
//
// - at `full` the prompt is the approval text verbatim -> digest matches -> complete;
// - at `redacted` the prompt went through the §9.4 pipeline: complete only if the pipeline
//   changed nothing (no secret, no home path, no PII in it);
// - at `metadata` (emitted, or down-levelled by a hop) the prompt is synthesized -> incomplete.
//
// A surface offers a permissive option (Allow) only when `approvalView(event).complete`, and
// sends with it the extension attribute `approvalproof` = approvalProof(requestId, text), which
// can only be computed by someone holding the complete text. The emitter refuses a permissive
// answer (nack `invalid`) whose proof does not match its own text: an answerer whose copy was
// cut, folded, redacted or down-levelled cannot allow, whatever surface it uses.
import { canonicalJson, digest, sha256Hex } from './sha256.js';

/** Extension attribute on `attention.requested`: §9.3 digest of the complete approval text. */
export const APPROVAL_DIGEST_ATTR = 'approvaldigest';
/** Extension attribute on `control.attention.respond`: proof that the answerer held the complete text. */
export const APPROVAL_PROOF_ATTR = 'approvalproof';

/** Option ids whose effect is to let the action run (case-insensitive). */
export const PERMISSIVE_OPTION_IDS: readonly string[] = [
  'allow',
  'allow_always',
  'allow_session',
  'always',
  'approve',
  'accept',
  'yes',
  'grant',
  'permit',
  'continue',
  'proceed',
  'ok',
];
/** Option ids whose effect is to refuse (case-insensitive); same list as the AEP-0008 refusing ids. */
export const REFUSING_EFFECT_IDS: readonly string[] = ['deny', 'reject', 'no', 'decline', 'refuse', 'disallow', 'block', 'cancel', 'abort', 'stop'];

/** The effect of choosing an option, read from its structural `id` (never from its label). */
export type OptionEffect = 'allow' | 'deny' | 'other';

/** §9.3 digest of an approval text (32 hex chars). */
export function approvalDigest(text: string): string {
  return digest(text);
}

/** The proof an answerer sends with a permissive answer: binds the request id to the complete text. */
export function approvalProof(requestId: string, text: string): string {
  return sha256Hex(canonicalJson(['aep-approval-proof', requestId, text])).slice(0, 32);
}

/** True when `proof` is the proof for this request id and approval text (constant-shape compare). */
export function checkApprovalProof(requestId: string, text: string, proof: unknown): boolean {
  if (typeof proof !== 'string' || proof.length !== 32) return false;
  const want = approvalProof(requestId, text);
  let diff = 0;
  for (let i = 0; i < 32; i++) diff |= want.charCodeAt(i) ^ proof.charCodeAt(i);
  return diff === 0;
}

/** What an option does, from its id: `allow`, `deny` or `other`. */
export function optionEffect(id: string): OptionEffect {
  const k = id.trim().toLowerCase();
  if (PERMISSIVE_OPTION_IDS.includes(k)) return 'allow';
  if (REFUSING_EFFECT_IDS.includes(k)) return 'deny';
  return 'other';
}

/** The effect a label *claims* (first word, case-insensitive), used only to flag contradictions. */
export function labelEffect(label: string): OptionEffect {
  const word = /^[\s"'([{]*([A-Za-z_]+)/.exec(label)?.[1]?.toLowerCase() ?? '';
  return word === '' ? 'other' : optionEffect(word);
}

/** One option as a surface must show it: agent-supplied label next to the effect of its id. */
export interface OptionView {
  id: string;
  label: string;
  effect: OptionEffect;
  /** The label claims the opposite effect of the id ("Deny" on id `allow`): show a warning. */
  contradicts: boolean;
  /** False for a permissive option whose complete input the viewer does not hold. */
  offer: boolean;
}

/** What a surface may show and offer for one `attention.requested` event. */
export interface ApprovalView {
  /** The request declares an approval text (`approvaldigest` is present). */
  required: boolean;
  /** The viewer holds the complete approval text (its digest equals the declared one). */
  complete: boolean;
  /** The approval text when complete (the prompt, verbatim; render it through `visibleText`). */
  text?: string;
  /** The declared digest. */
  digest?: string;
  /** The request's options with their effects; permissive ones carry `offer:false` when incomplete. */
  options: OptionView[];
  /** At least one option's label contradicts its id. */
  flagged: boolean;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * What a surface may show and offer for an `attention.requested` event as the viewer received
 * it. `kind:"permission"` requests without `approvaldigest` are treated as incomplete (fail
 * closed): a permissive option is never offered unless the complete input is in hand.
 */
export function approvalView(event: unknown): ApprovalView {
  const ev = isObject(event) ? event : {};
  const data = isObject(ev['data']) ? ev['data'] : {};
  const declared = ev[APPROVAL_DIGEST_ATTR];
  const required = typeof declared === 'string' || data['kind'] === 'permission';
  const prompt = typeof data['prompt'] === 'string' ? data['prompt'] : undefined;
  const complete = typeof declared === 'string' && prompt !== undefined && approvalDigest(prompt) === declared;
  const options: OptionView[] = [];
  let flagged = false;
  if (Array.isArray(data['options'])) {
    for (const o of data['options'] as unknown[]) {
      if (!isObject(o) || typeof o['id'] !== 'string') continue;
      const label = typeof o['label'] === 'string' ? o['label'] : o['id'];
      const effect = optionEffect(o['id']);
      const claimed = labelEffect(label);
      const contradicts = claimed !== 'other' && effect !== claimed;
      if (contradicts) flagged = true;
      options.push({ id: o['id'], label, effect, contradicts, offer: !(required && !complete && effect !== 'deny') });
    }
  }
  const view: ApprovalView = { required, complete, options, flagged };
  if (complete) view.text = prompt;
  if (typeof declared === 'string') view.digest = declared;
  return view;
}
