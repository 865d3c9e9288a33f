// Durations in the policy file and on the command line: `45s`, `15m`, `12h`, `7d`, `500ms`, or a
// bare number of milliseconds. Whole units only (no `1.5h`): a policy is read by people.

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** Milliseconds of a duration, or undefined when it is not one. */
export function parseDuration(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isSafeInteger(v) && v >= 0 ? v : undefined;
  if (typeof v !== 'string') return undefined;
  const m = /^(\d{1,12})(ms|s|m|h|d|w)$/.exec(v.trim());
  if (!m) return undefined;
  const n = Number(m[1]) * (UNIT_MS[m[2]!] ?? NaN);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** A duration for people: the largest whole unit (`90000` -> `90s`, `3600000` -> `1h`). */
export function formatDuration(ms: number): string {
  for (const [u, n] of [
    ['w', 604_800_000],
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1_000],
  ] as const) {
    if (ms >= n && ms % n === 0) return `${ms / n}${u}`;
  }
  return `${ms}ms`;
}
