// What a person approving sees (contract C1, docs/decisions.md "Approvals" and "Web inbox
// (issues 11, 14)"). Pure: the view the request card renders, and the proof a permissive
// answer carries. The rules themselves live in @aep/protocol (`approvalView`, `visibleText`,
// `approvalProof`); this module only decides how the inbox presents them.
import { APPROVAL_DIGEST_ATTR, APPROVAL_PROOF_ATTR, approvalProof, approvalView, visibleText } from '@aep/protocol';
import type { ApprovalView, OptionView } from '@aep/protocol';
import type { WireEvent } from './store.js';
import { captureOf } from './store.js';

/** Above this many lines the approval text is collapsed behind "show all N lines" (never cut). */
export const COLLAPSE_LINES = 12;

/** Why Allow is not offered for an approval request. */
export type IncompleteWhy = 'withheld' | 'no-digest' | 'altered';

/** Everything the request card needs to show an approval honestly. */
export interface ApprovalCard {
  view: ApprovalView;
  /** The options as shown (a permission request without `options` gets Allow/Deny, C1 rules applied). */
  options: OptionView[];
  /** The text as displayed: the prompt through `visibleText` (newlines kept, controls visible). */
  shown: string;
  /** Number of lines of `shown`. */
  lines: number;
  /** True when `shown` differs from the prompt (invisible or control characters were made visible). */
  rewritten: boolean;
  /** Set when the request needs an approval text and the viewer does not hold it complete. */
  why?: IncompleteWhy;
}

/** The inbox's own sentence for why Allow is not offered (the person must know what is missing). */
export function whyText(why: IncompleteWhy, capture: string): string {
  switch (why) {
    case 'withheld':
      return `the input is not delivered at capture level ${capture}: the text above is synthesized, not what would run`;
    case 'no-digest':
      return 'the agent did not attach the digest of the complete input (approvaldigest), so nothing here proves the text above is all of it';
    case 'altered':
      return "the input was redacted or changed on the way (it does not match the agent's digest): the text above is not exactly what would run";
  }
}

/** Build the card of a request: C1's `approvalView`, with Allow/Deny supplied for a bare permission request. */
export function approvalCard(e: WireEvent): ApprovalCard {
  const data = e.data ?? {};
  const bare = data['kind'] === 'permission' && !(Array.isArray(data['options']) && data['options'].length > 0);
  // A permission request without options is answered allow/deny (decisions.md "Web inbox"):
  // run the same rules on those two, so Allow is gated exactly like an agent-supplied one.
  const subject = bare
    ? {
        ...e,
        data: {
          ...data,
          options: [
            { id: 'allow', label: 'Allow' },
            { id: 'deny', label: 'Deny' },
          ],
        },
      }
    : e;
  const view = approvalView(subject);
  const prompt = typeof data['prompt'] === 'string' ? data['prompt'] : '';
  const shown = visibleText(prompt);
  const card: ApprovalCard = { view, options: view.options, shown, lines: shown.split('\n').length, rewritten: shown !== prompt };
  if (view.required && !view.complete) {
    const cap = captureOf(e);
    card.why =
      cap === 'metadata' || cap === 'none' || typeof data['prompt'] !== 'string'
        ? 'withheld'
        : typeof e[APPROVAL_DIGEST_ATTR] !== 'string'
          ? 'no-digest'
          : 'altered';
  }
  return card;
}

/**
 * Attach the approval proof to a command answering `request` with an option of this effect
 * (C1: every answer that is not a refusal carries it when the text is held complete; a refusal
 * never needs one). Returns the command.
 */
export function withProof<T extends Record<string, unknown>>(cmd: T, request: WireEvent, card: ApprovalCard, effect: OptionView['effect']): T {
  if (effect !== 'deny' && card.view.complete && card.view.text !== undefined) {
    (cmd as Record<string, unknown>)[APPROVAL_PROOF_ATTR] = approvalProof(request.id, card.view.text);
  }
  return cmd;
}
