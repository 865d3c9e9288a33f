// A small JSON parser that remembers where every value starts, so a rules file can be validated
// with errors naming the line, the column and the JSON pointer of what is wrong
// ("rules.json:12:14 /rules/0/after: …"). Same grammar as JSON.parse (RFC 8259); duplicate keys
// are an error (a later one would silently win with JSON.parse).

/** A parse result: the value and the position of each pointer. */
export interface Located {
  value: unknown;
  /** JSON pointer (RFC 6901) -> 1-based line and column of the value. */
  at: Map<string, { line: number; col: number }>;
}

/** A syntax error with its position. */
export class JsonPosError extends Error {
  constructor(
    message: string,
    readonly line: number,
    readonly col: number,
  ) {
    super(message);
    this.name = 'JsonPosError';
  }
}

/** Escape one pointer segment (RFC 6901 §3). */
export function pointerSegment(s: string | number): string {
  return String(s).replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Parse `text` as JSON, recording positions. Throws `JsonPosError`. */
export function parseWithPositions(text: string): Located {
  let i = 0;
  const at = new Map<string, { line: number; col: number }>();
  const starts = [0];
  for (let j = 0; j < text.length; j++) if (text[j] === '\n') starts.push(j + 1);
  const pos = (k: number) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= k) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, col: k - starts[lo]! + 1 };
  };
  const err = (msg: string, k = i): never => {
    const p = pos(k);
    throw new JsonPosError(msg, p.line, p.col);
  };
  const ws = () => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  const str = (): string => {
    const start = i;
    i++; // opening quote
    let out = '';
    for (;;) {
      if (i >= text.length) err('unterminated string', start);
      const c = text[i]!;
      if (c === '"') {
        i++;
        return out;
      }
      if (c === '\\') {
        const e = text[i + 1];
        const map: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
        if (e !== undefined && map[e] !== undefined) {
          out += map[e];
          i += 2;
          continue;
        }
        if (e === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
          out += String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16));
          i += 6;
          continue;
        }
        err('invalid escape in string');
      }
      if (c.charCodeAt(0) < 0x20) err('control character in string');
      out += c;
      i++;
    }
  };
  const value = (ptr: string): unknown => {
    ws();
    at.set(ptr, pos(i));
    const c = text[i];
    if (c === '{') {
      i++;
      const o: Record<string, unknown> = {};
      ws();
      if (text[i] === '}') {
        i++;
        return o;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') err('expected a string key');
        const keyAt = i;
        const k = str();
        if (Object.prototype.hasOwnProperty.call(o, k)) err(`duplicate key "${k}"`, keyAt);
        ws();
        if (text[i] !== ':') err('expected ":"');
        i++;
        o[k] = value(`${ptr}/${pointerSegment(k)}`);
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return o;
        }
        err('expected "," or "}"');
      }
    }
    if (c === '[') {
      i++;
      const a: unknown[] = [];
      ws();
      if (text[i] === ']') {
        i++;
        return a;
      }
      for (;;) {
        a.push(value(`${ptr}/${a.length}`));
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return a;
        }
        err('expected "," or "]"');
      }
    }
    if (c === '"') return str();
    const m = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(i));
    if (m && m[0] !== '' && m[0] !== '-') {
      i += m[0].length;
      return Number(m[0]);
    }
    for (const [w, v] of [
      ['true', true],
      ['false', false],
      ['null', null],
    ] as const) {
      if (text.startsWith(w, i)) {
        i += w.length;
        return v;
      }
    }
    return err(i >= text.length ? 'unexpected end of input' : `unexpected character ${JSON.stringify(c)}`);
  };
  const v = value('');
  ws();
  if (i < text.length) err('unexpected text after the JSON value');
  return { value: v, at };
}
