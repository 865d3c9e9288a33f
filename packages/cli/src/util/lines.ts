import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';

export interface InputLine {
  /** File name as given on the command line, or `-` for stdin. */
  file: string;
  /** 1-based line number within that file. */
  lineNo: number;
  /** The line without its terminator (`\n` or `\r\n`); a leading UTF-8 BOM on line 1 is removed. */
  text: string;
  /** True when the line ended with `\r\n` (reported by some commands, tolerated by all). */
  crlf: boolean;
}

const NL = 0x0a;
const CR = 0x0d;

/**
 * Streams the lines of each input in order, in constant memory (one chunk plus the current
 * line), as batches: one array per chunk read, so the per-line cost stays a plain loop rather
 * than an async-iterator step. Lines are split on the `\n` byte (never inside a UTF-8 sequence),
 * so a multi-MB line costs one decode. `inputs` empty or `['-']` means stdin. Open errors
 * surface as a rejected iteration with the original errno error (commands map them to exit 2).
 */
export async function* readLineBatches(inputs: readonly string[], stdin: Readable = process.stdin): AsyncGenerator<InputLine[]> {
  const list = inputs.length === 0 ? ['-'] : inputs;
  for (const file of list) {
    const stream: Readable = file === '-' ? stdin : createReadStream(file, { highWaterMark: 1 << 20 });
    if (file !== '-') {
      // Surface ENOENT/EISDIR before the first line.
      await new Promise<void>((resolve, reject) => {
        stream.once('open', () => resolve());
        stream.once('error', reject);
      });
    }
    let lineNo = 0;
    let pending: Buffer[] = [];
    const make = (buf: Buffer, start: number, end: number): InputLine => {
      let e = end;
      const crlf = e > start && buf[e - 1] === CR;
      if (crlf) e--;
      let s = start;
      lineNo++;
      if (lineNo === 1 && e - s >= 3 && buf[s] === 0xef && buf[s + 1] === 0xbb && buf[s + 2] === 0xbf) s += 3;
      return { file, lineNo, text: buf.toString('utf8', s, e), crlf };
    };
    for await (const raw of stream) {
      const chunk: Buffer = typeof raw === 'string' ? Buffer.from(raw) : (raw as Buffer);
      const batch: InputLine[] = [];
      let start = 0;
      let nl = chunk.indexOf(NL, start);
      while (nl !== -1) {
        if (pending.length > 0) {
          pending.push(chunk.subarray(start, nl));
          const joined = Buffer.concat(pending);
          pending = [];
          batch.push(make(joined, 0, joined.length));
        } else {
          batch.push(make(chunk, start, nl));
        }
        start = nl + 1;
        nl = chunk.indexOf(NL, start);
      }
      if (start < chunk.length) pending.push(chunk.subarray(start));
      if (batch.length > 0) yield batch;
    }
    if (pending.length > 0) {
      const joined = Buffer.concat(pending);
      pending = [];
      if (joined.length > 0) yield [make(joined, 0, joined.length)];
    }
  }
}

/**
 * The lines of one chunk read, as byte ranges into `buf` (no string per line yet): line `k` is
 * `buf[starts[k]..ends[k])`, already without its terminator (`\n` or `\r\n`) and without a
 * leading UTF-8 BOM on line 1, exactly the `text` {@link readLineBatches} would decode, and its
 * number is `firstLineNo + k`. For throughput commands (`aep validate`, issue 19): a consumer
 * that decodes one line at a time keeps one line string alive instead of a whole chunk's worth,
 * so the young-generation GC has nothing to copy.
 */
export interface LineSpans {
  file: string;
  buf: Buffer;
  firstLineNo: number;
  count: number;
  starts: Int32Array;
  ends: Int32Array;
}

/** {@link readLineBatches} as byte ranges (same files, same lines, same order; see {@link LineSpans}). */
export async function* readLineSpans(inputs: readonly string[], stdin: Readable = process.stdin): AsyncGenerator<LineSpans> {
  const list = inputs.length === 0 ? ['-'] : inputs;
  let starts = new Int32Array(4096);
  let ends = new Int32Array(4096);
  for (const file of list) {
    const stream: Readable = file === '-' ? stdin : createReadStream(file, { highWaterMark: 1 << 20 });
    if (file !== '-') {
      await new Promise<void>((resolve, reject) => {
        stream.once('open', () => resolve());
        stream.once('error', reject);
      });
    }
    let lineNo = 0;
    let pending: Buffer[] = [];
    // One range per line; the arrays are reused (a consumer finishes a chunk before the next).
    const span = (buf: Buffer, start: number, end: number, k: number): void => {
      let e = end;
      if (e > start && buf[e - 1] === CR) e--;
      let s = start;
      lineNo++;
      if (lineNo === 1 && e - s >= 3 && buf[s] === 0xef && buf[s + 1] === 0xbb && buf[s + 2] === 0xbf) s += 3;
      if (k === starts.length) {
        const ns = new Int32Array(k * 2);
        ns.set(starts);
        starts = ns;
        const ne = new Int32Array(k * 2);
        ne.set(ends);
        ends = ne;
      }
      starts[k] = s;
      ends[k] = e;
    };
    for await (const raw of stream) {
      const chunk: Buffer = typeof raw === 'string' ? Buffer.from(raw) : (raw as Buffer);
      let start = 0;
      let nl = chunk.indexOf(NL, start);
      if (nl !== -1 && pending.length > 0) {
        // The line carried over from the previous chunk is its own one-line batch.
        pending.push(chunk.subarray(0, nl));
        const joined = Buffer.concat(pending);
        pending = [];
        const first = lineNo + 1;
        span(joined, 0, joined.length, 0);
        yield { file, buf: joined, firstLineNo: first, count: 1, starts, ends };
        start = nl + 1;
        nl = chunk.indexOf(NL, start);
      }
      const first = lineNo + 1;
      let k = 0;
      while (nl !== -1) {
        span(chunk, start, nl, k++);
        start = nl + 1;
        nl = chunk.indexOf(NL, start);
      }
      if (start < chunk.length) pending.push(chunk.subarray(start));
      if (k > 0) yield { file, buf: chunk, firstLineNo: first, count: k, starts, ends };
    }
    if (pending.length > 0) {
      const joined = Buffer.concat(pending);
      pending = [];
      if (joined.length > 0) {
        const first = lineNo + 1;
        span(joined, 0, joined.length, 0);
        yield { file, buf: joined, firstLineNo: first, count: 1, starts, ends };
      }
    }
  }
}

/** Line-at-a-time view of {@link readLineBatches} (convenient where throughput does not matter). */
export async function* readLines(inputs: readonly string[], stdin: Readable = process.stdin): AsyncGenerator<InputLine> {
  for await (const batch of readLineBatches(inputs, stdin)) yield* batch;
}

/** Reads a whole stream (stdin by default) as UTF-8 text. */
export async function readAll(stream: Readable = process.stdin): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}
