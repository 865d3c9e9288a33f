// Text shown to a person who decides on it (docs/security.md "What a person approving sees"):
// characters that are invisible, reorder the display or act on a terminal are made visible,
// never interpreted. Newlines are kept as newlines (multi-line input stays multi-line).

/** How one invisible or dangerous code point is shown. */
function picture(cp: number): string {
  if (cp < 0x20) return String.fromCodePoint(0x2400 + cp); // C0 controls -> Control Pictures (␀ … ␟)
  if (cp === 0x7f) return '\u2421'; // DEL -> ␡
  return `\u27e8U+${cp.toString(16).toUpperCase().padStart(4, '0')}\u27e9`; // ⟨U+202E⟩
}

/**
 * True for a code point that `visibleText` rewrites: C0/C1 controls except LF, DEL, bidi
 * embeddings/overrides/isolates and marks, zero-width and invisible formatting characters,
 * line/paragraph separators, the tag block and variation selectors.
 */
export function isInvisibleCodePoint(cp: number): boolean {
  if (cp === 0x0a) return false;
  if (cp < 0x20 || cp === 0x7f) return true;
  if (cp >= 0x80 && cp <= 0x9f) return true; // C1 controls (incl. CSI 0x9B)
  if (cp === 0x00ad || cp === 0x034f || cp === 0x061c || cp === 0x115f || cp === 0x1160) return true;
  if (cp === 0x17b4 || cp === 0x17b5 || cp === 0x180e || cp === 0x3164 || cp === 0xffa0) return true;
  if (cp >= 0x200b && cp <= 0x200f) return true; // ZW space/joiners, LRM, RLM
  if (cp >= 0x2028 && cp <= 0x202e) return true; // LS, PS, bidi embeddings and overrides
  if (cp >= 0x2060 && cp <= 0x206f) return true; // word joiner, invisible operators, isolates
  if (cp === 0xfeff) return true; // BOM / ZW no-break space
  if (cp >= 0xfe00 && cp <= 0xfe0f) return true; // variation selectors
  if (cp >= 0xfff9 && cp <= 0xfffb) return true; // interlinear annotation
  if (cp >= 0xe0000 && cp <= 0xe007f) return true; // tag characters ("ASCII smuggling")
  if (cp >= 0xe0100 && cp <= 0xe01ef) return true; // variation selectors supplement
  if (cp >= 0xd800 && cp <= 0xdfff) return true; // lone surrogates
  return false;
}

/**
 * `text` with every invisible, control or bidi character replaced by a visible stand-in
 * (`␛`, `␉`, `␍`, `⟨U+202E⟩` …). Newlines are kept. The mapping is for display only: never
 * send the result back as the value that was approved.
 */
export function visibleText(text: string): string {
  let out = '';
  let last = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // Fast path: printable ASCII and LF.
    if ((c >= 0x20 && c < 0x7f) || c === 0x0a) continue;
    let cp = c;
    let width = 1;
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        cp = ((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000;
        width = 2;
      }
    }
    if (isInvisibleCodePoint(cp)) {
      out += text.slice(last, i) + picture(cp);
      last = i + width;
    }
    i += width - 1;
  }
  return last === 0 ? text : out + text.slice(last);
}

/** True when `visibleText(text)` would change anything. */
export function hasInvisible(text: string): boolean {
  return visibleText(text) !== text;
}
