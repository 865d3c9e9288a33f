// Runtime helpers for the generated standalone validators (src/generated/validators.ts).
// ajv's standalone output calls `require(...)` for its runtime and for formats; the generator
// (scripts/codegen/generate.ts) rewrites those calls into an ESM import of this module, so the
// protocol package stays browser-safe (no `require`, no `node:` imports).

/**
 * Length of a string in Unicode code points (JSON Schema `minLength`/`maxLength` count code
 * points, not UTF-16 units). Same semantics as ajv's `runtime/ucs2length`.
 */
export function ucs2length(str: string): number {
  const len = str.length;
  let length = 0;
  let pos = 0;
  while (pos < len) {
    length++;
    const value = str.charCodeAt(pos++);
    if (value >= 0xd800 && value <= 0xdbff && pos < len) {
      const extra = str.charCodeAt(pos);
      if ((extra & 0xfc00) === 0xdc00) pos++;
    }
  }
  return length;
}

const DAYS = [0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Two ASCII digits at `i` as a number, or -1. */
function two(s: string, i: number): number {
  const a = s.charCodeAt(i) - 48;
  const b = s.charCodeAt(i + 1) - 48;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1;
}

/**
 * RFC 3339 `date-time` (§5.6) with a mandatory zone offset or `Z`. AEP-0001 §5.1: `time` is an
 * RFC 3339 timestamp with offset. Checks field ranges (month, day of month incl. leap years,
 * hour, minute, second up to 60 for a leap second, offset). Hand-written (no regex): it runs on
 * every event. See docs/decisions.md.
 */
export function isDateTime(str: string): boolean {
  const n = str.length;
  if (n < 20) return false;
  const y1 = two(str, 0);
  const y2 = two(str, 2);
  if (y1 < 0 || y2 < 0 || str.charCodeAt(4) !== 45 || str.charCodeAt(7) !== 45) return false;
  const month = two(str, 5);
  const day = two(str, 8);
  const t = str.charCodeAt(10);
  if (t !== 84 && t !== 116 && t !== 32) return false; // T, t or space (RFC 3339 §5.6 note)
  const hour = two(str, 11);
  const minute = two(str, 14);
  const second = two(str, 17);
  if (str.charCodeAt(13) !== 58 || str.charCodeAt(16) !== 58) return false;
  if (month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 60) return false;
  const year = y1 * 100 + y2;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (day > (month === 2 && !leap ? 28 : (DAYS[month] ?? 0))) return false;
  let i = 19;
  if (str.charCodeAt(i) === 46) {
    // fraction: one or more digits
    i++;
    const start = i;
    while (i < n) {
      const c = str.charCodeAt(i);
      if (c < 48 || c > 57) break;
      i++;
    }
    if (i === start) return false;
  }
  const z = str.charCodeAt(i);
  if (z === 90 || z === 122) return i + 1 === n; // Z or z
  if ((z !== 43 && z !== 45) || i + 6 !== n || str.charCodeAt(i + 3) !== 58) return false;
  const oh = two(str, i + 1);
  const om = two(str, i + 4);
  return oh >= 0 && oh <= 23 && om >= 0 && om <= 59;
}

// An absolute URI (RFC 3986 §4.3): a scheme, `:`, then no whitespace, controls or characters that
// may never appear literally in a URI.
// eslint-disable-next-line no-control-regex -- control characters are exactly what we exclude
const URI = /^[A-Za-z][A-Za-z0-9+.-]*:[^\s\x00-\x1f\x7f"<>\\^`{|}]*$/;

/** Absolute URI check for the envelope `source` (AEP-0001 §5.1, `format: uri`). */
export function isUri(str: string): boolean {
  return URI.test(str);
}

/** Format functions referenced by the generated validators (ajv `code.formats`). */
export const formats: Readonly<Record<string, (s: string) => boolean>> = {
  'date-time': isDateTime,
  uri: isUri,
};
