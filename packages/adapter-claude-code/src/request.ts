// A held hook's request as the attention engine takes it (issue 13: the engine alone decides
// answers, from what it is given as data): the mapped `data`, the fields and the schema's
// constraints, a permission's options and approval text, and answers.ts as the translation hook.
// Pure; the daemon and the tests build requests with it, so both wire the engine the same way.
import type { AttentionKind, AttentionRequestInput } from '@aep/client';
import type { HookAnswer } from './answers.js';
import { translateAnswer } from './answers.js';
import type { AttentionSpec } from './mapping/types.js';

/** The AEP kind of each answerable hook (mapper.ts). */
const KIND: Record<AttentionSpec['hook'], AttentionKind> = { ask: 'form', permission: 'permission', elicitation: 'form' };

/** Correlation resolved by the emitter (refs -> event ids) and the wait. */
export interface EngineRequestExtras {
  subject?: string;
  cause?: string;
  expiresInMs?: number;
}

/**
 * The engine input of `spec`: decline/cancel are not listed (every form accepts them, contract
 * C2); a permission carries its approval text (contract C1: the engine sets `approvaldigest` and
 * refuses an allow without a valid `approvalproof`).
 */
export function engineRequest(spec: AttentionSpec, extras: EngineRequestExtras = {}): AttentionRequestInput {
  const r = spec.request;
  const input: AttentionRequestInput = {
    session: r.session,
    kind: KIND[spec.hook],
    data: r.data ?? {},
    capture: r.capture,
    validate: (answer: HookAnswer) => translateAnswer(spec, answer),
  };
  if (r.severity) input.severity = r.severity;
  if (extras.subject !== undefined) input.subject = extras.subject;
  if (extras.cause !== undefined) input.cause = extras.cause;
  if (r.run) input.run = r.run;
  if (spec.fields) input.fields = spec.fields;
  if (spec.constraints) input.constraints = spec.constraints;
  if (spec.hook === 'permission') input.options = spec.options ?? [];
  if (spec.approvalText !== undefined) input.approvalText = spec.approvalText;
  if (extras.expiresInMs !== undefined) input.expiresInMs = extras.expiresInMs;
  return input;
}
