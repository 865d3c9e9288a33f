// The emitter-side attention engine (AEP-0002 §7, AEP-0004 §5.3, AEP-0006, AEP-0008).
import type { EmitterConnection } from './emitter.js';
import type { Answer, AttentionEngineOptions, AttentionPromise, AttentionRequestInput } from './types.js';

/**
 * Raises attention requests on an {@link EmitterConnection} and settles them: validates
 * `control.attention.respond` answers (nack `invalid` keeps the request pending), records
 * `attention.answered` (values gated to the event's capture) and `attention.resolved`, emits
 * `attention.timeout` on expiry and `attention.resolved{dismissed}` on dismissal/shutdown.
 */
export class AttentionEngine {
  constructor(readonly connection: EmitterConnection, readonly options: AttentionEngineOptions = {}) {}
  /** Emit `attention.requested`; the promise settles with the validated answer, a timeout or a dismissal. */
  requestAttention(input: AttentionRequestInput): AttentionPromise { void input; throw new Error('not implemented'); }
  /** Dismiss a pending request (`attention.resolved{dismissed}`); false when not pending. */
  dismiss(requestId: string, reason?: string): boolean { void requestId; void reason; return false; }
  /** Record an answer that arrived out of band (`via:"oob"`, AEP-0008 §2), validated like a control answer. Returns the issues (empty = applied). */
  answerOutOfBand(requestId: string, answer: Answer, by?: string): { ok: boolean; issues: import('@aep/protocol').Issue[] } { void requestId; void answer; void by; return { ok: false, issues: [] }; }
  /** Ids of pending requests (optionally of one session), oldest first. */
  pending(session?: string): string[] { void session; return []; }
  /** Dismiss every pending request of `session` then emit `session.ended` (AEP-0002 §7.2). */
  endSession(session: string, data?: Record<string, unknown>): void { void session; void data; }
  /** Dismiss all pending requests (before the caller ends its sessions) and stop handling commands. */
  async shutdown(): Promise<void> {}
}
