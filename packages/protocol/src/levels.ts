// Ordered levels of the two envelope enums that carry a total order.
// AEP-0001 §8.1 (severity) and §8.2 (capture); defaults from AEP-0001 §5.1.

/** Capture levels, ordered `none < metadata < redacted < full` (AEP-0001 §8.2). */
export const CAPTURE_LEVELS = ['none', 'metadata', 'redacted', 'full'] as const;
/** One of the four capture levels. */
export type CaptureLevel = (typeof CAPTURE_LEVELS)[number];
/** Default capture when the attribute is absent (AEP-0001 §5.1). */
export const DEFAULT_CAPTURE: CaptureLevel = 'metadata';

/** Severity levels, ordered `debug < … < critical` (AEP-0001 §8.1). */
export const SEVERITIES = ['debug', 'info', 'notice', 'warning', 'error', 'critical'] as const;
/** One of the six severity levels. */
export type Severity = (typeof SEVERITIES)[number];
/** Default severity when the attribute is absent (AEP-0001 §5.1). */
export const DEFAULT_SEVERITY: Severity = 'info';

// Ranks by own-property lookup only: a Map has no prototype chain, so names such as `toString`,
// `constructor` or `__proto__` are not levels (a plain-object lookup would find
// Object.prototype members and let them pass as a level).
const SEVERITY_RANK: ReadonlyMap<string, number> = new Map(SEVERITIES.map((l, i) => [l, i]));

/**
 * Rank of a capture level (0..3, the index in CAPTURE_LEVELS), or -1 for anything that is not a
 * level. Compared, not looked up: it runs for every gated member and every member the capture
 * walk visits (issue 19), and comparisons with the four names admit nothing else either.
 */
export function captureRank(level: unknown): number {
  return level === 'metadata' ? 1 : level === 'redacted' ? 2 : level === 'full' ? 3 : level === 'none' ? 0 : -1;
}

/** Rank of a severity (0..5), or -1 for anything that is not a level. */
export function severityRank(level: unknown): number {
  return typeof level === 'string' ? (SEVERITY_RANK.get(level) ?? -1) : -1;
}

/** True when `value` is one of the four capture levels. */
export function isCaptureLevel(value: unknown): value is CaptureLevel {
  return captureRank(value) >= 0;
}

/** True when `value` is one of the six severities. */
export function isSeverity(value: unknown): value is Severity {
  return severityRank(value) >= 0;
}
