// Resume tokens (AEP-0001 §7.6, AEP-0003 §7): `{session}:{epoch}:{seq}`, the SSE `Last-Event-ID`.
import { AepError } from './errors.js';

/** A resume position: deliver strictly after `(epoch, seq)` of `session`. */
export interface ResumePosition {
  session: string;
  epoch: number;
  seq: number;
}

const UINT = /^(?:0|[1-9][0-9]*)$/;

function uint(s: string): number | undefined {
  if (!UINT.test(s)) return undefined;
  const n = Number(s);
  return Number.isSafeInteger(n) ? n : undefined;
}

/**
 * Parses `{session}:{epoch}:{seq}` from the right, so a session id may itself contain `:`
 * (session ids are arbitrary non-empty strings, AEP-0001 §5.1). `epoch` and `seq` are canonical
 * decimal integers ≥ 0 within the safe-integer range. Returns `undefined` for anything else.
 */
export function parseResumeToken(s: unknown): ResumePosition | undefined {
  if (typeof s !== 'string') return undefined;
  const j = s.lastIndexOf(':');
  if (j <= 0) return undefined;
  const i = s.lastIndexOf(':', j - 1);
  if (i <= 0) return undefined;
  const session = s.slice(0, i);
  const epoch = uint(s.slice(i + 1, j));
  const seq = uint(s.slice(j + 1));
  if (epoch === undefined || seq === undefined) return undefined;
  return { session, epoch, seq };
}

/**
 * Formats a resume position as `{session}:{epoch}:{seq}`. Throws `AepError('AEP_RESUME_INVALID')`
 * for an empty session or an epoch/seq that is not a safe integer ≥ 0 (a caller bug).
 */
export function formatResumeToken(p: ResumePosition): string {
  if (typeof p.session !== 'string' || p.session === '')
    throw new AepError('AEP_RESUME_INVALID', 'resume token: session must be a non-empty string (AEP-0001 §7.6)');
  for (const [name, v] of [
    ['epoch', p.epoch],
    ['seq', p.seq],
  ] as const) {
    if (!Number.isSafeInteger(v) || v < 0) throw new AepError('AEP_RESUME_INVALID', `resume token: ${name} must be an integer ≥ 0 (AEP-0001 §7.6)`);
  }
  return `${p.session}:${p.epoch}:${p.seq}`;
}
