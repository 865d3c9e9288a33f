// Epoch times from the event's RFC 3339 text (AEP-0005 §3.2, §4.3). Brief 07 §3.1 [pin]: exact
// integer arithmetic, never floats — `Date.parse` keeps milliseconds only and a double cannot
// hold nanoseconds since 1970 (2^53 ns is about 104 days). The text grammar is the envelope's
// (`isDateTime` of @aep/protocol: `T`/`t`/space, `Z`/`z` or ±HH:MM, a fraction of any length).
import { isDateTime } from '@aep/protocol';

const NS_PER_S = 1_000_000_000n;
const NS_PER_MS = 1_000_000n;

/** Days from 1970-01-01 to the civil date (proleptic Gregorian; H. Hinnant's days_from_civil). */
function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const mp = (m + 9) % 12;
  const doy = Math.floor((153 * mp + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

const num = (s: string, i: number, n: number): number => {
  let v = 0;
  for (let k = 0; k < n; k++) v = v * 10 + (s.charCodeAt(i + k) - 48);
  return v;
};

/**
 * Nanoseconds since 1970-01-01T00:00:00Z of an RFC 3339 date-time, exactly, as a bigint (negative
 * before 1970), or `null` when the text is not an RFC 3339 date-time with an offset. Fraction
 * digits beyond the ninth are truncated toward the past (floor), whatever their number; a leap
 * second (`:60`) counts as the first second of the next minute, as POSIX time does.
 */
export function rfc3339ToEpochNanos(text: string): bigint | null {
  if (typeof text !== 'string' || !isDateTime(text)) return null;
  const year = num(text, 0, 4);
  const month = num(text, 5, 2);
  const day = num(text, 8, 2);
  const hour = num(text, 11, 2);
  const minute = num(text, 14, 2);
  const second = num(text, 17, 2);
  let i = 19;
  let frac = 0n;
  if (text.charCodeAt(i) === 46) {
    i++;
    const start = i;
    while (i < text.length && text.charCodeAt(i) >= 48 && text.charCodeAt(i) <= 57) i++;
    const digits = text.slice(start, Math.min(i, start + 9)).padEnd(9, '0');
    frac = BigInt(digits);
  }
  let offsetMin = 0;
  const z = text.charCodeAt(i);
  if (z === 43 || z === 45) {
    offsetMin = num(text, i + 1, 2) * 60 + num(text, i + 4, 2);
    if (z === 45) offsetMin = -offsetMin;
  }
  // Integer seconds fit a double exactly for every 4-digit year (|s| < 2^38).
  const seconds = daysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offsetMin * 60;
  return BigInt(seconds) * NS_PER_S + frac;
}

/** Largest uint64 (OTLP `time_unix_nano` is fixed64). */
const U64_MAX = (1n << 64n) - 1n;

/** `time_unix_nano` as the decimal string OTLP/JSON uses, or `null` when outside uint64. */
export function unixNanoString(ns: bigint): string | null {
  return ns < 0n || ns > U64_MAX ? null : ns.toString();
}

/** Integer epoch milliseconds (floor), for OCSF `time` (AEP-0005 §4.3). */
export function epochMillis(ns: bigint): number {
  let ms = ns / NS_PER_MS; // truncates toward zero
  if (ns < 0n && ms * NS_PER_MS !== ns) ms -= 1n;
  return Number(ms);
}
