import { createReadStream, fstatSync, read as readFd } from 'node:fs';
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
 * Every input is read into two buffers that take turns: the unfinished last line of a fill is
 * copied to the front of the other buffer, and the next read fills the rest. A file (and stdin
 * redirected from one) is read ahead: its next read runs in Node's thread pool while the consumer
 * checks the lines of the last one, so reading costs the consumer no waiting (issue 19: ~50 reads
 * of 1 MiB per 50 MB, each a round trip through the thread pool). A stream is read only once the
 * consumer asks for more (a read pending on a pipe could not be abandoned). Buffers double only
 * when a single line does not fit; they are reused, not allocated per read: a fresh 1 MiB buffer
 * per read (what `createReadStream` does) costs a fresh mapping each time, ~20,000 page faults and
 * ~0.15 s of system time per 50 MB.
 */
export async function* readLineSpans(inputs: readonly string[], stdin: Readable = process.stdin, opts: LineSpanOptions = {}): AsyncGenerator<LineSpans> {
  const list = inputs.length === 0 ? ['-'] : inputs;
  const table: SpanTable = { starts: new Int32Array(4096), ends: new Int32Array(4096), rest: 0 };
  const size = Math.max(1, opts.bufferSize ?? 1 << 20);
  const bufs: [Buffer, Buffer] = [Buffer.allocUnsafeSlow(size), Buffer.allocUnsafeSlow(size)];
  for (const file of list) {
    let input: Reader;
    if (file !== '-') input = await fileReader(file);
    else input = stdin === process.stdin && stdinIsFile() ? stdinReader() : streamReader(stdin);
    yield* inputSpans(file, input, table, bufs);
  }
}

/** Reads of one input into a caller's buffer, at its current position; 0 bytes = its end. */
interface Reader {
  read(buf: Buffer, offset: number, length: number): Promise<number>;
  /** True when a read may be started before the consumer is done with the last one (files). */
  ahead: boolean;
  close(): Promise<void>;
}

/** A file, opened now: open errors (ENOENT, EISDIR, EACCES) surface here, before the first line. */
async function fileReader(file: string): Promise<Reader> {
  const handle = await open(file, 'r');
  return {
    read: async (buf, offset, length) => (await handle.read(buf, offset, length, null)).bytesRead,
    ahead: true,
    close: () => handle.close(),
  };
}

/** True when the process's stdin is a regular file (`aep validate < events.jsonl`). */
function stdinIsFile(): boolean {
  try {
    return fstatSync(0).isFile();
  } catch {
    return false;
  }
}

/**
 * Stdin redirected from a file, read like a file (ahead, into the same buffers) instead of
 * through `process.stdin`'s 64 KiB chunks, each a fresh buffer to fault in and copy (~90 ms per
 * 50 MB, issue 19). Fd 0 stays open: it is the process's.
 */
function stdinReader(): Reader {
  return {
    read: (buf, offset, length) => new Promise<number>((resolve, reject) => readFd(0, buf, offset, length, null, (err, n) => (err ? reject(err) : resolve(n)))),
    ahead: true,
    close: () => Promise.resolve(),
  };
}

/** A stream's chunks (stdin), copied into the caller's buffer; a chunk larger than the room asked for goes over several reads. */
function streamReader(stream: Readable): Reader {
  const chunks = stream[Symbol.asyncIterator]() as AsyncIterator<unknown>;
  let chunk: Buffer | undefined;
  let at = 0;
  let done = false;
  return {
    read: async (buf, offset, length) => {
      while (chunk === undefined || at === chunk.length) {
        if (done) return 0;
        const next = await chunks.next();
        if (next.done === true) {
          done = true;
          return 0;
        }
        const raw = next.value;
        chunk = typeof raw === 'string' ? Buffer.from(raw) : (raw as Buffer); // an empty chunk is not the end
        at = 0;
      }
      const n = chunk.copy(buf, offset, at, Math.min(chunk.length, at + length));
      at += n;
      return n;
    },
    ahead: false,
    // Left early (the consumer stopped or threw): release stdin as `for await` would.
    close: async () => {
      if (!done) await chunks.return?.();
    },
  };
}

/** The spans of one input, read into `bufs` (two buffers, kept for the next input). */
async function* inputSpans(file: string, input: Reader, table: SpanTable, bufs: [Buffer, Buffer]): AsyncGenerator<LineSpans> {
  let [cur, next] = bufs;
  /** The read in flight, into `cur` after `carry` bytes of an unfinished line. */
  let reading: Promise<number> | undefined = input.read(cur, 0, cur.length);
  let carry = 0;
  let lineNo = 0;
  try {
    for (;;) {
      const got: number = await reading!;
      reading = undefined;
      const end: number = carry + got;
      if (got === 0) {
        // The end of the input: what is left is its last line (no terminator).
        if (carry > 0) {
          const first = lineNo + 1;
          lineNo = span(cur, 0, carry, 0, lineNo, table);
          yield { file, buf: cur, firstLineNo: first, count: 1, starts: table.starts, ends: table.ends };
        }
        return;
      }
      // Only the new bytes can hold a terminator (the carried ones were searched already), and
      // the search must not run into the stale bytes past `end`.
      const k = splitLines(end === cur.length ? cur : cur.subarray(0, end), carry, lineNo, table);
      const first = lineNo + 1;
      lineNo += k;
      // The unfinished line goes first into the other buffer, then its next read (started before
      // these lines are handed out when the input allows it).
      const rest: number = end - table.rest;
      if (rest + 1 > next.length) next = Buffer.allocUnsafeSlow(Math.max(next.length * 2, rest * 2));
      if (rest > 0) cur.copy(next, 0, table.rest, end);
      if (input.ahead) reading = input.read(next, rest, next.length - rest);
      if (k > 0) yield { file, buf: cur, firstLineNo: first, count: k, starts: table.starts, ends: table.ends };
      if (!input.ahead) reading = input.read(next, rest, next.length - rest);
      carry = rest;
      const done = cur;
      cur = next;
      next = done;
    }
  } finally {
    // Left early (the consumer stopped or threw) with a read in flight: let it finish first.
    if (reading !== undefined) await reading.catch(() => undefined);
    bufs[0] = cur;
    bufs[1] = next;
    await input.close();
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
