// Looking a request up on the relay, and the approval rule for an answer to it (contract C1).
// Loaded lazily (imports @aep/protocol and the SDK).
import { approvalProof, approvalView, mapTextAnswer, optionEffect, type ApprovalView } from '@aep/protocol';
import type { WireEvent } from '@aep/client';
import { CliError } from './errors.js';
import { mapClientError } from './relay.js';
import { oneLine, incompleteReason } from './render.js';

/**
 * The `attention.requested` event with this id as the relay delivers it to this reader (one
 * replay-only SSE read: `from=all`, `live=0`, filter type+id), or `undefined`.
 */
export async function findRequest(url: string, token: string | undefined, requestId: string): Promise<WireEvent | undefined> {
  const client = await import('@aep/client/node');
  let found: WireEvent | undefined;
  try {
    const sub = client.subscribe(
      {
        url,
        ...(token ? { token } : {}),
        filter: { type: 'attention.requested', id: requestId },
        from: 'all',
        live: false,
        transport: 'sse',
        reconnect: { maxAttempts: 0 },
      },
      (e) => {
        if (e.id === requestId && typeof e.session === 'string') found ??= e;
      },
    );
    await sub.done;
  } catch (err) {
    mapClientError(err, url);
  }
  return found;
}

/** Like {@link findRequest}, but a missing request is `AEP_CLI_UNKNOWN_REQUEST`. */
export async function requireRequest(url: string, token: string | undefined, requestId: string): Promise<WireEvent> {
  const e = await findRequest(url, token, requestId);
  if (!e)
    throw new CliError(
      'AEP_CLI_UNKNOWN_REQUEST',
      `no attention request ${oneLine(requestId)} is held by the relay (check the id with aep inbox, or pass --session)`,
    );
  return e;
}

/** The option an answer would apply: `option`, or the option its text maps to (AEP-0008 §1). */
export function appliedOption(data: Record<string, unknown>, answer: { option?: string; text?: string }): string | undefined {
  if (answer.option !== undefined) return answer.option;
  if (answer.text === undefined || !Array.isArray(data['options'])) return undefined;
  return mapTextAnswer(data, answer.text).option;
}

/** True when an answer lets the action run: its (mapped) option's effect is `allow` on a request that needs approval. */
export function isPermissive(event: WireEvent, view: ApprovalView, answer: { option?: string; text?: string }): boolean {
  if (!view.required) return false;
  const data = event.data !== null && typeof event.data === 'object' ? event.data : {};
  const option = appliedOption(data, answer);
  return option !== undefined && optionEffect(option) === 'allow';
}

/**
 * The approval rule for a non-interactive answer (docs/decisions.md "CLI (issues 11, 12, 14)"):
 * a permissive answer needs the complete text to have reached this terminal (else
 * `AEP_CLI_APPROVAL_INCOMPLETE`) and `--digest` equal to its approval digest, the one printed
 * under the complete text by `respond --show` and `inbox` (missing: `AEP_CLI_APPROVAL_UNSEEN`;
 * different: `AEP_CLI_APPROVAL_CHANGED`). Returns the `approvalproof` to send, or `undefined`
 * when the answer is not permissive (deny never needs a proof).
 */
export function proofFor(event: WireEvent, answer: { option?: string; text?: string }, digest: string | undefined, aep: string): string | undefined {
  const view = approvalView(event);
  if (!isPermissive(event, view, answer)) return undefined;
  const id = oneLine(event.id);
  if (!view.complete || view.text === undefined) {
    throw new CliError(
      'AEP_CLI_APPROVAL_INCOMPLETE',
      `request ${id} cannot be allowed from here: ${incompleteReason(event, view)}. Deny it (--option deny), or answer on the agent's machine`,
    );
  }
  if (digest === undefined) {
    throw new CliError(
      'AEP_CLI_APPROVAL_UNSEEN',
      `allowing request ${id} needs --digest: read the complete text with "${aep} respond ${id} --show" and pass the approval digest printed under it`,
    );
  }
  if (digest.trim().toLowerCase() !== view.digest) {
    throw new CliError(
      'AEP_CLI_APPROVAL_CHANGED',
      `--digest ${oneLine(digest)} is not the approval digest of request ${id}: the text you read is not what this request would run; read it again with "${aep} respond ${id} --show"`,
    );
  }
  return approvalProof(event.id, view.text);
}
