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
