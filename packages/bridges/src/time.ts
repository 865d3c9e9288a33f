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

/** An instant as whole seconds since the epoch (negative before 1970) and 0-999 999 999 nanoseconds. */
export interface EpochTime {
  seconds: number;
  nanos: number;
}

/**
 * The instant of an RFC 3339 date-time, exactly, as integer seconds + nanoseconds, or `null`
 * when the text is not an RFC 3339 date-time with an offset. Fraction digits beyond the ninth
 * are truncated toward the past (floor), whatever their number; a leap second (`:60`) counts as
 * the first second of the next minute, as POSIX time does. Integer seconds fit a double exactly
 * for every 4-digit year (|s| < 2^38), so no float rounding can occur.
 */
export function rfc3339ToEpochTime(text: string): EpochTime | null {
  if (typeof text !== 'string' || !isDateTime(text)) return null;
  const year = num(text, 0, 4);
  const month = num(text, 5, 2);
  const day = num(text, 8, 2);
  const hour = num(text, 11, 2);
  const minute = num(text, 14, 2);
  const second = num(text, 17, 2);
  let i = 19;
  let nanos = 0;
  if (text.charCodeAt(i) === 46) {
    i++;
    let k = 0;
    for (; i < text.length; i++, k++) {
      const c = text.charCodeAt(i) - 48;
      if (c < 0 || c > 9) break;
      if (k < 9) nanos = nanos * 10 + c;
    }
    for (; k < 9; k++) nanos *= 10;
  }
  let offsetMin = 0;
  const z = text.charCodeAt(i);
  if (z === 43 || z === 45) {
    offsetMin = num(text, i + 1, 2) * 60 + num(text, i + 4, 2);
    if (z === 45) offsetMin = -offsetMin;
  }
  return { seconds: daysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offsetMin * 60, nanos };
}

/** Nanoseconds since 1970-01-01T00:00:00Z of an RFC 3339 date-time as a bigint (see {@link rfc3339ToEpochTime}), or `null`. */
export function rfc3339ToEpochNanos(text: string): bigint | null {
  const t = rfc3339ToEpochTime(text);
  return t === null ? null : BigInt(t.seconds) * NS_PER_S + BigInt(t.nanos);
}

/** Largest uint64 in seconds + nanoseconds (OTLP `time_unix_nano` is fixed64): 18446744073.709551615 s. */
const U64_MAX_S = 18446744073;
const U64_MAX_NS = 709551615;

/** `time_unix_nano` as the decimal string OTLP/JSON uses, or `null` when outside uint64. */
export function unixNanoString(t: EpochTime | bigint): string | null {
  if (typeof t === 'bigint') return t < 0n || t > (1n << 64n) - 1n ? null : t.toString();
  if (t.seconds < 0 || t.seconds > U64_MAX_S || (t.seconds === U64_MAX_S && t.nanos > U64_MAX_NS)) return null;
  if (t.seconds === 0) return String(t.nanos);
  return `${t.seconds}${String(t.nanos).padStart(9, '0')}`;
}

/** Integer epoch milliseconds (floor), for OCSF `time` (AEP-0005 §4.3). */
export function epochMillis(t: EpochTime | bigint): number {
  if (typeof t === 'bigint') {
    let ms = t / NS_PER_MS; // truncates toward zero
    if (t < 0n && ms * NS_PER_MS !== t) ms -= 1n;
    return Number(ms);
  }
  return t.seconds * 1000 + Math.floor(t.nanos / 1_000_000);
}
