// Time facts of a decision: day of week and minute of day in the policy's time zone, and how
// long a request has been pending (from its `time`, emitter-asserted like AEP-0002 `latency_ms`).

/** Day (0 = Sunday) and minute since midnight of `now` in `timezone` (`local`, `UTC`, or IANA). */
export function localClock(now: number, timezone: string): { day: number; minute: number } {
  const d = new Date(now);
  if (timezone === 'local') return { day: d.getDay(), minute: d.getHours() * 60 + d.getMinutes() };
  const parts = new Intl.DateTimeFormat('en-US', { timeZone: timezone, weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).formatToParts(
    d,
  );
  const get = (t: string) => parts.find((p) => p.type === t)?.value ?? '';
  const day = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'].indexOf(get('weekday'));
  return { day: day < 0 ? 0 : day, minute: (Number(get('hour')) % 24) * 60 + Number(get('minute')) };
}

/** How long a request has been pending at `now`: from its `time`, else from when it was first seen; never negative. */
export function pendingMs(now: number, requestTime: number, firstSeen: number): number {
  const start = Number.isFinite(requestTime) ? requestTime : firstSeen;
  return Math.max(0, now - start);
}

/** The next minute boundary after `now` (when a time-of-day window can change). */
export function nextMinute(now: number): number {
  return now - (now % 60_000) + 60_000;
}

export const DAY_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;

export function minuteText(m: number): string {
  return `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
}
