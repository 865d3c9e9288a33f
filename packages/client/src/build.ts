// Event construction helpers for the SDK. Envelopes are built by @aep/protocol's EventBuilder
// (monotonic ULIDs, per-session seq/epoch, defaults omitted, emitter-mode validation).
import { captureRank } from '@aep/protocol';
import type { CaptureLevel, Issue } from '@aep/protocol';
import { redact } from './proto.js';
import type { RedactOptions } from './proto.js';
import type { CommandDecision } from './types.js';

/** The lower of a requested capture (default `metadata`) and the ceiling (AEP-0003 §9.1). */
export function clampCapture(requested: CaptureLevel | undefined, ceiling: CaptureLevel): CaptureLevel {
  const r = requested ?? 'metadata';
  return captureRank(r) <= captureRank(ceiling) ? r : ceiling;
}

/** True when `level` may carry free text (`redacted`+, AEP-0001 §8.2). */
export function textAllowed(level: CaptureLevel): boolean {
  return captureRank(level) >= captureRank('redacted');
}

/**
 * `control.rejected` payload (AEP-0004 §3). `detail` is `[redacted]`: only at `redacted`+ and
 * through the §9.4 pipeline. `issues` is a project extension member (the payload is open):
 * `rule`, `path`, `section` are structural and travel at any level; `message` only at `redacted`+.
 */
export function ackData(decision: Extract<CommandDecision, { status: 'rejected' }>, capture: CaptureLevel, ro?: RedactOptions): Record<string, unknown> {
  const out: Record<string, unknown> = { reason: decision.reason };
  const text = textAllowed(capture);
  if (decision.detail !== undefined && text) out['detail'] = capture === 'full' ? decision.detail : redact(decision.detail, ro);
  if (decision.issues && decision.issues.length > 0) {
    out['issues'] = decision.issues.map((i: Issue) => {
      const o: Record<string, unknown> = { rule: i.rule, path: i.path, section: i.section };
      if (text) o['message'] = capture === 'full' ? i.message : redact(i.message, ro);
      return o;
    });
  }
  return out;
}
