import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
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

/**
 * Streams the lines of each input in order, in constant memory (one line at a time).
 * `inputs` empty or `['-']` means stdin. Open errors surface as a rejected iteration with the
 * original errno error so commands can map them to exit 2.
 */
export async function* readLines(inputs: readonly string[], stdin: Readable = process.stdin): AsyncGenerator<InputLine> {
  const list = inputs.length === 0 ? ['-'] : inputs;
  for (const file of list) {
    const stream: Readable = file === '-' ? stdin : createReadStream(file);
    if (file !== '-') {
      // Surface ENOENT/EISDIR before the first line.
      await new Promise<void>((resolve, reject) => {
        stream.once('open', () => resolve());
        stream.once('error', reject);
      });
    }
    const rl = createInterface({ input: stream, crlfDelay: Infinity });
    let lineNo = 0;
    for await (let text of rl) {
      lineNo++;
      if (lineNo === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      const crlf = text.endsWith('\r');
      if (crlf) text = text.slice(0, -1);
      yield { file, lineNo, text, crlf };
    }
  }
}

/** Reads a whole stream (stdin by default) as UTF-8 text. */
export async function readAll(stream: Readable = process.stdin): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}
