// AEP-0008 §1: a text-only answer against a request that offered `options` (receiver side,
// AEP-0008). Steps 1-4; the only MUST is that unmatched text never grants a permission.

/** Result of {@link mapTextAnswer}: what to apply and record on `attention.answered`, or `invalid` (nack). */
export interface TextAnswerResult {
  /** The option applied (record it as `answer.option`). */
  option?: string;
  /** Text to record as `answer.text` (the stated reason, or a plain text answer). */
  text?: string;
  /** True: nack the command with `control.rejected{reason:"invalid"}`; the request stays pending. */
  invalid?: boolean;
}

/** Option ids treated as the refusing option of a `permission` request unless `refusingOption` is given (case-insensitive). */
export const REFUSING_OPTION_IDS: readonly string[] = ['deny', 'reject', 'no', 'decline', 'refuse', 'disallow', 'block'];

/** Options of {@link mapTextAnswer}. */
export interface MapTextAnswerOptions {
  /**
   * The id of the request's refusing option (only the emitter that minted the ids knows it).
   * Default: the first option whose id is one of {@link REFUSING_OPTION_IDS}, ignoring case.
   */
  refusingOption?: string;
  /**
   * Unmatched text on a `permission` request: `refuse` (default: apply the refusing option and
   * keep the text as the reason) or `invalid` (nack). Without a refusing option it is always `invalid`.
   */
  permissionUnmatched?: 'refuse' | 'invalid';
  /** Unmatched text on other kinds (AEP-0008 leaves it open): `text` (default: a text answer) or `invalid`. */
  otherUnmatched?: 'text' | 'invalid';
}

interface Opt {
  id: string;
  label: string | undefined;
}

function optionsOf(requestData: unknown): Opt[] {
  if (requestData === null || typeof requestData !== 'object') return [];
  const options = (requestData as Record<string, unknown>)['options'];
  if (!Array.isArray(options)) return [];
  const out: Opt[] = [];
  for (const o of options as unknown[]) {
    if (o === null || typeof o !== 'object') continue;
    const r = o as Record<string, unknown>;
    if (typeof r['id'] === 'string') out.push({ id: r['id'], label: typeof r['label'] === 'string' ? r['label'] : undefined });
  }
  return out;
}

/**
 * Maps a text-only answer to one of the request's options (AEP-0008 §1):
 * 1. trimmed text equals an option `id` ignoring case → that option (an exact-case id match wins
 *    when several ids differ only by case; otherwise several case-insensitive matches do not map);
 * 2. else trimmed text equals the `label` of exactly one option ignoring case → that option;
 * 3. a match is recorded as `{option}` only (the word is the decision, not also kept as text);
 * 4. no match on `kind:"permission"`: never the granting choice — the refusing option with the
 *    text kept as the reason (`{option, text}`; the caller drops `text` below `redacted`), or
 *    `{invalid:true}` (configured, or when no refusing option can be identified).
 * No match on other kinds: `{text}` (or `{invalid:true}` with `otherUnmatched:"invalid"`).
 * A request without options is not covered by the rule: `{text}`. Never throws.
 */
export function mapTextAnswer(requestData: unknown, text: string, opts: MapTextAnswerOptions = {}): TextAnswerResult {
  const options = optionsOf(requestData);
  const kind = requestData !== null && typeof requestData === 'object' ? (requestData as Record<string, unknown>)['kind'] : undefined;
  const raw = typeof text === 'string' ? text : '';
  if (options.length === 0) return raw === '' ? { invalid: true } : { text: raw };

  const t = raw.trim();
  const lower = t.toLowerCase();
  if (t !== '') {
    const exact = options.filter((o) => o.id === t);
    if (exact.length === 1) return { option: exact[0]!.id };
    const byId = options.filter((o) => o.id.toLowerCase() === lower);
    if (byId.length === 1) return { option: byId[0]!.id };
    const byLabel = options.filter((o) => o.label !== undefined && o.label.trim().toLowerCase() === lower);
    if (byLabel.length === 1) return { option: byLabel[0]!.id };
  }

  if (kind === 'permission') {
    const refusing =
      opts.refusingOption !== undefined
        ? options.find((o) => o.id === opts.refusingOption)
        : options.find((o) => REFUSING_OPTION_IDS.includes(o.id.toLowerCase()));
    if (!refusing || opts.permissionUnmatched === 'invalid') return { invalid: true };
    return t === '' ? { option: refusing.id } : { option: refusing.id, text: raw };
  }
  if (opts.otherUnmatched === 'invalid' || t === '') return { invalid: true };
  return { text: raw };
}
