// NDJSON bodies of `POST /events` (AEP-0003 §3.2, §5) and JSONL lines
// (AEP-0003 §3.1): one Event per line, `\n` terminated. Pure string functions.
//
// Reading is lenient where the brief allows it: a line may end in CRLF (the `\r` is not part
// of the Event, AEP-0003 §5 "NDJSON line minus its `\n`/`\r\n`") and whitespace-only lines
// are skipped; line numbers stay physical (0-based) so a refusal names the line the sender
// wrote (AEP-0003 §3.2: `line` = 0-based index). Writing is strict: LF only, no blank lines,
// a trailing `\n` (what the live checker sends, AEP-0003 §10).
import { AepError } from './errors.js';

/** Media type of an NDJSON batch (AEP-0003 §3.2). */
export const NDJSON_CONTENT_TYPE = 'application/x-ndjson';

/** One non-blank line of an NDJSON body. */
export interface NdjsonLine {
  /** 0-based physical line index in the body (blank lines count). */
  line: number;
  /** The line without its `\n` / `\r\n`. */
  text: string;
}

/** JSON insignificant whitespace plus what `String.prototype.trim` removes. */
function isBlank(s: string): boolean {
  return s.trim() === '';
}

/**
 * Splits an NDJSON body into its non-blank lines (CRLF tolerated, whitespace-only lines
 * skipped). Does not parse the JSON: callers parse each `text` and report `line` on failure.
 */
export function splitNdjson(body: string): NdjsonLine[] {
  const out: NdjsonLine[] = [];
  let start = 0;
  let line = 0;
  const n = body.length;
  while (start <= n) {
    let end = body.indexOf('\n', start);
    if (end < 0) end = n;
    let stop = end;
    if (stop > start && body.charCodeAt(stop - 1) === 13) stop--;
    const text = body.slice(start, stop);
    if (text.length > 0 && !isBlank(text)) out.push({ line, text });
    line++;
    start = end + 1;
  }
  return out;
}

/** The result of {@link parseNdjson}: every value, or the first line that is not JSON. */
export type NdjsonParse = { ok: true; values: { line: number; text: string; value: unknown }[] } | { ok: false; line: number; detail: string };

/** Splits and parses an NDJSON body; stops at the first line that is not valid JSON. */
export function parseNdjson(body: string): NdjsonParse {
  const values: { line: number; text: string; value: unknown }[] = [];
  for (const l of splitNdjson(body)) {
    let value: unknown;
    try {
      value = JSON.parse(l.text) as unknown;
    } catch (e) {
      return { ok: false, line: l.line, detail: `line ${l.line} is not valid JSON: ${(e as Error).message}` };
    }
    values.push({ line: l.line, text: l.text, value });
  }
  return { ok: true, values };
}

/**
 * Encodes already-serialized lines as an NDJSON body: joined with `\n`, trailing `\n`. Throws
 * `AepError('AEP_NDJSON_LINE')` for a line holding CR or LF, or an empty/blank line (AEP-0003 §3.1:
 * one Event per line, no blank lines).
 */
export function encodeNdjsonLines(lines: readonly string[]): string {
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    if (l.indexOf('\n') >= 0 || l.indexOf('\r') >= 0)
      throw new AepError('AEP_NDJSON_LINE', `NDJSON line ${i} holds a line break: one Event per line (AEP-0003 §3.1)`);
    if (isBlank(l)) throw new AepError('AEP_NDJSON_LINE', `NDJSON line ${i} is blank: no blank lines (AEP-0003 §3.1)`);
  }
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

/** Encodes values (Events) as an NDJSON body: `JSON.stringify` of each (one line by construction). */
export function encodeNdjson(values: readonly unknown[]): string {
  return encodeNdjsonLines(
    values.map((v, i) => {
      const s = JSON.stringify(v);
      if (typeof s !== 'string') throw new AepError('AEP_NDJSON_LINE', `NDJSON value ${i} is not serializable as JSON`);
      return s;
    }),
  );
}
