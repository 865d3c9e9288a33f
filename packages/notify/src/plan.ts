// When to notify (pure): the sends planned for one pending request on one track, with quiet
// hours applied. The notifier's scheduler and `aep notify --dry-run` use the same function, so
// what the dry run prints is what the notifier does.
import type { QuietWindow } from './config.js';

/** One planned send. */
export interface PlannedSend {
  /** When it goes out (ms since the epoch), after quiet hours. */
  at: number;
  /** When it was due before quiet hours moved it. */
  due: number;
  reason: 'first' | 'reminder' | 'escalation';
  /** Index among the track's sends (0 = first). */
  index: number;
}

/** What one track does for a request (a rule's channel, or one of its escalations). */
export interface TrackTiming {
  afterMs: number;
  repeatMs?: number;
  maxRepeats: number;
  escalation: boolean;
  quiet: boolean;
}

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(tz: string | undefined): Intl.DateTimeFormat {
  const key = tz ?? '';
  let f = formatters.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { ...(tz ? { timeZone: tz } : {}), hourCycle: 'h23', weekday: 'short', hour: '2-digit', minute: '2-digit' });
    formatters.set(key, f);
  }
  return f;
}

const WEEKDAYS: Record<string, number> = { Sun: 0, Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6 };

/** Local weekday (0 = Sunday) and minute of the day of `t` in `tz` (local zone when absent). */
export function wallClock(t: number, tz?: string): { day: number; minute: number } {
  let day = 0;
  let hour = 0;
  let minute = 0;
  for (const p of formatter(tz).formatToParts(new Date(t))) {
    if (p.type === 'weekday') day = WEEKDAYS[p.value] ?? 0;
    else if (p.type === 'hour') hour = Number(p.value) % 24;
    else if (p.type === 'minute') minute = Number(p.value);
  }
  return { day, minute: hour * 60 + minute };
}

/** True when `t` falls inside `w`. Overnight windows (from > to) belong to the day they start on. */
export function inWindow(t: number, w: QuietWindow): boolean {
  const { day, minute } = wallClock(t, w.tz);
  const startsOn = (d: number) => w.days === undefined || w.days.includes(d);
  if (w.from < w.to) return startsOn(day) && minute >= w.from && minute < w.to;
  return (startsOn(day) && minute >= w.from) || (startsOn((day + 6) % 7) && minute < w.to);
}

/** True when `t` is inside any quiet window. */
export function isQuiet(t: number, quiet: readonly QuietWindow[]): boolean {
  return quiet.some((w) => inWindow(t, w));
}

/** The first instant at or after `t` outside every quiet window (at most 8 days ahead). */
export function quietEnd(t: number, quiet: readonly QuietWindow[]): number {
  if (quiet.length === 0 || !isQuiet(t, quiet)) return t;
  // Walk minute boundaries: windows are minute-aligned in every zone we support.
  let m = Math.floor(t / 60_000) * 60_000 + 60_000;
  const limit = t + 8 * 86_400_000;
  while (m < limit) {
    if (!isQuiet(m, quiet)) return m;
    m += 60_000;
  }
  return t; // every minute is quiet (e.g. 00:00-23:59 daily with overlaps): send rather than never
}

/**
 * The sends of one track for a request pending since `pendingSince`: the first at
 * `pendingSince + afterMs`, then every `repeatMs` (at most `maxRepeats`). Sends due inside quiet
 * hours move to the end of the quiet period; several moved to the same instant go out once.
 */
export function planSends(t: TrackTiming, pendingSince: number, quiet: readonly QuietWindow[]): PlannedSend[] {
  const out: PlannedSend[] = [];
  const count = t.escalation || t.repeatMs === undefined ? 1 : 1 + t.maxRepeats;
  let last = -Infinity;
  for (let i = 0; i < count; i++) {
    const due = pendingSince + t.afterMs + i * (t.repeatMs ?? 0);
    const at = t.quiet ? quietEnd(due, quiet) : due;
    if (at <= last) continue; // collapsed into the previous send (quiet hours)
    out.push({ at, due, reason: t.escalation ? 'escalation' : i === 0 ? 'first' : 'reminder', index: out.length });
    last = at;
  }
  return out;
}
