import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
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
 * so the young-generation GC has nothing to copy. `buf`, `starts` and `ends` are reused by the
 * next fill: read what you need before asking for the next value.
 */
export interface LineSpans {
  file: string;
  buf: Buffer;
  firstLineNo: number;
  count: number;
  starts: Int32Array;
  ends: Int32Array;
}

/** The line ranges of one fill (reused; see {@link LineSpans}) and where its unfinished line starts. */
interface SpanTable {
  starts: Int32Array;
  ends: Int32Array;
  rest: number;
}

/**
 * Records the complete lines of `filled` (terminators searched from `from`; the bytes before it
 * hold none) as ranges 0.. of `t`; `t.rest` is where the unfinished last line starts. Returns
 * the number of lines. A plain function, so that the per-line loop is compiled on its own and
 * not as part of the async generator (issue 19: the generator's optimized compile was the
 * largest of the run).
 */
function splitLines(filled: Buffer, from: number, lineNo: number, t: SpanTable): number {
  let k = 0;
  let start = 0;
  for (let nl = filled.indexOf(NL, from); nl !== -1; nl = filled.indexOf(NL, start)) {
    lineNo = span(filled, start, nl, k++, lineNo, t);
    start = nl + 1;
  }
  t.rest = start;
  return k;
}

/**
 * Records line `k` of a fill, `b[start..end)` without its terminator (`\n` or `\r\n`) and, on
 * line 1, without a UTF-8 BOM; returns the new line number.
 */
function span(b: Buffer, start: number, end: number, k: number, lineNo: number, t: SpanTable): number {
  let e = end;
  if (e > start && b[e - 1] === CR) e--;
  let s = start;
  lineNo++;
  if (lineNo === 1 && e - s >= 3 && b[s] === 0xef && b[s + 1] === 0xbb && b[s + 2] === 0xbf) s += 3;
  if (k === t.starts.length) {
    const ns = new Int32Array(k * 2);
    ns.set(t.starts);
    t.starts = ns;
    const ne = new Int32Array(k * 2);
    ne.set(t.ends);
    t.ends = ne;
  }
  t.starts[k] = s;
  t.ends[k] = e;
  return lineNo;
}

/** Options of {@link readLineSpans} (tests use a small buffer to exercise every boundary). */
export interface LineSpanOptions {
  /** Initial size of the read buffer in bytes (default 1 MiB); it grows only for a longer line. */
  bufferSize?: number;
}

/**
 * {@link readLineBatches} as byte ranges (same files, same lines, same order; see {@link LineSpans}).
 *
 * One read buffer serves the whole run: a file is read straight into it, a stream's chunks are
 * copied into it, and the unfinished last line of a fill is moved to its front before the next
 * one (the buffer doubles only when a single line does not fit). A fresh 1 MiB buffer per read
 * (what `createReadStream` does) costs a fresh mapping each time: ~20,000 page faults and
 * ~0.15 s of system time per 50 MB (issue 19).
 */
export async function* readLineSpans(inputs: readonly string[], stdin: Readable = process.stdin, opts: LineSpanOptions = {}): AsyncGenerator<LineSpans> {
  const list = inputs.length === 0 ? ['-'] : inputs;
  const table: SpanTable = { starts: new Int32Array(4096), ends: new Int32Array(4096), rest: 0 };
  let buf = Buffer.allocUnsafeSlow(Math.max(1, opts.bufferSize ?? 1 << 20));
  for (const file of list) {
    // Open errors (ENOENT, EISDIR, EACCES) surface here, before the first line.
    const handle = file === '-' ? undefined : await open(file, 'r');
    const chunks = file === '-' ? (stdin[Symbol.asyncIterator]() as AsyncIterator<unknown>) : undefined;
    let finished = false;
    try {
      let lineNo = 0;
      /** Bytes of an unfinished line at `buf[0..carry)`. */
      let carry = 0;
      for (;;) {
        if (carry === buf.length) {
          const bigger = Buffer.allocUnsafeSlow(buf.length * 2);
          buf.copy(bigger, 0, 0, carry);
          buf = bigger;
        }
        // Fill buf[carry..) with the next bytes; `got === 0` is the end of this input.
        let got = 0;
        if (handle !== undefined) {
          got = (await handle.read(buf, carry, buf.length - carry, null)).bytesRead;
        } else {
          const next = await chunks!.next();
          if (next.done !== true) {
            const raw = next.value;
            const chunk: Buffer = typeof raw === 'string' ? Buffer.from(raw) : (raw as Buffer);
            if (chunk.length > buf.length - carry) {
              let size = buf.length * 2;
              while (size - carry < chunk.length) size *= 2;
              const bigger = Buffer.allocUnsafeSlow(size);
              buf.copy(bigger, 0, 0, carry);
              buf = bigger;
            }
            got = chunk.copy(buf, carry);
            if (got === 0) continue; // an empty chunk is not the end
          }
        }
        const end = carry + got;
        if (got === 0) {
          // The end of the input: what is left is its last line (no terminator).
          if (carry > 0) {
            const first = lineNo + 1;
            lineNo = span(buf, 0, carry, 0, lineNo, table);
            yield { file, buf, firstLineNo: first, count: 1, starts: table.starts, ends: table.ends };
          }
          finished = true;
          break;
        }
        const first = lineNo + 1;
        // Only the new bytes can hold a terminator (the carried ones were searched already), and
        // the search must not run into the stale bytes past `end`.
        const k = splitLines(end === buf.length ? buf : buf.subarray(0, end), carry, lineNo, table);
        lineNo += k;
        const start = table.rest;
        const { starts, ends } = table;
        if (k > 0) yield { file, buf, firstLineNo: first, count: k, starts, ends };
        // The consumer is done with this fill: keep the unfinished line for the next one.
        carry = end - start;
        if (carry > 0 && start > 0) buf.copy(buf, 0, start, end);
      }
    } finally {
      await handle?.close();
      // Left early (the consumer stopped or threw): release stdin as `for await` would.
      if (!finished) await chunks?.return?.();
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
