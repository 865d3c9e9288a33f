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

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;
const DAYS = [0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * RFC 3339 `date-time` (§5.6) with a mandatory zone offset or `Z`. AEP-0001 §5.1: `time` is an
 * RFC 3339 timestamp with offset. Checks field ranges (month, day of month incl. leap years,
 * hour, minute, second up to 60 for a leap second, offset). See docs/decisions.md.
 */
export function isDateTime(str: string): boolean {
  const m = DATE_TIME.exec(str);
  if (m === null) return false;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const maxDay = month === 2 && !leap ? 28 : (DAYS[month] ?? 0);
  if (day > maxDay) return false;
  if (Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6]) > 60) return false;
  if (m[7] !== undefined && (Number(m[8]) > 23 || Number(m[9]) > 59)) return false;
  return true;
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
