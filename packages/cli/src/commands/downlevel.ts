import type { Command } from 'commander';
import { action, CliError } from '../util/errors.js';
import { EXIT } from '../util/exit.js';
import { readLineBatches } from '../util/lines.js';

const LEVELS = ['none', 'metadata', 'redacted', 'full'] as const;

/** Validates a `--ceiling` value (exit 2, `AEP_CLI_BAD_CEILING`, for anything but the four levels). */
export function parseCeiling(value: unknown): (typeof LEVELS)[number] {
  if (typeof value === 'string' && (LEVELS as readonly string[]).includes(value)) return value as (typeof LEVELS)[number];
  throw new CliError(
    'AEP_CLI_BAD_CEILING',
    `unknown capture level ${JSON.stringify(value)}: expected one of none, metadata, redacted, full (AEP-0001 §8.2)`,
    EXIT.USAGE,
  );
}

/** Buffered stdout writer that honours backpressure and stops quietly when the reader goes away (EPIPE). */
export function stdoutWriter(): { write(s: string): Promise<void>; flush(): Promise<void> } {
  let buf = '';
  let closed = false;
  process.stdout.on('error', () => {
    closed = true;
  });
  const flush = async (): Promise<void> => {
    if (buf === '' || closed) {
      buf = '';
      return;
    }
    const chunk = buf;
    buf = '';
    if (!process.stdout.write(chunk)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          process.stdout.off('drain', done);
          process.stdout.off('error', done);
          process.stdout.off('close', done);
          resolve();
        };
        process.stdout.once('drain', done);
        process.stdout.once('error', done);
        process.stdout.once('close', done);
      });
    }
  };
  return {
    async write(s: string) {
      buf += s;
      if (buf.length >= 65536) await flush();
    },
    flush,
  };
}

/** One JSONL output line replacing an input line that could not be processed (documented in docs/cli.md). */
export function errorLine(code: string, file: string, lineNo: number, message: string): string {
  // The message never quotes the input line: a failed line may carry text above the ceiling.
  return JSON.stringify({ error: code, file, line: lineNo, message });
}

/**
 * Maps JSONL inputs line by line: exactly one output line per input line. A blank line gives a
 * blank line; a line that is not JSON gives an `AEP_CLI_BAD_JSON` error line and counts as a
 * failure; otherwise `fn(value, raw)` returns the output line (or an error line via `fail`).
 * Returns the number of failed lines. Unreadable inputs raise `AEP_CLI_UNREADABLE` (exit 2).
 */
export async function mapJsonl(
  files: readonly string[],
  fn: (value: unknown, raw: string, fail: (code: string, message: string) => string) => string,
): Promise<{ lines: number; failed: number }> {
  const out = stdoutWriter();
  let lines = 0;
  let failed = 0;
  try {
    for await (const batch of readLineBatches(files))
      for (const line of batch) {
        lines++;
        if (line.text.trim() === '') {
          await out.write('\n');
          continue;
        }
        const fail = (code: string, message: string) => {
          failed++;
          return errorLine(code, line.file, line.lineNo, message);
        };
        let value: unknown;
        try {
          value = JSON.parse(line.text);
        } catch {
          await out.write(fail('AEP_CLI_BAD_JSON', `line ${line.lineNo} is not valid JSON (AEP-0003 §3.1: one JSON object per line)`) + '\n');
          continue;
        }
        await out.write(fn(value, line.text, fail) + '\n');
      }
  } catch (err) {
    await out.flush();
    const e = err as NodeJS.ErrnoException;
    if (e && typeof e.code === 'string' && e.syscall)
      throw new CliError('AEP_CLI_UNREADABLE', `cannot read input: ${e.code} ${e.path ?? ''}`.trim(), EXIT.USAGE);
    throw err;
  }
  await out.flush();
  return { lines, failed };
}

/** `aep downlevel`: down-level JSONL events to a capture ceiling (AEP-0001 §8.2, AEP-0003 §6.4). */
export function register(program: Command): void {
  program
    .command('downlevel')
    .description('down-level JSONL events to a capture ceiling, as a mechanical relay hop does (AEP-0001 §8.2)')
    .argument('[files...]', 'JSONL inputs (default: stdin; "-" = stdin)')
    .requiredOption('--ceiling <level>', 'capture ceiling: none | metadata | redacted | full (required)')
    .addHelpText(
      'after',
      `
Writes exactly one line per input line, LF-terminated (a CRLF input line is echoed without its CR).
An event at or below the ceiling is echoed byte for byte;
otherwise it is rewritten (capture lowered, gated fields removed, [metadata*] fields degraded; a
"full" event under a "redacted" ceiling lands on "metadata"). A blank line gives a blank line.
A line that is not JSON, or not a JSON object, is replaced by an error line
{"error":"AEP_CLI_BAD_JSON"|"AEP_CLI_NOT_AN_OBJECT","file":…,"line":N,"message":…} and the command
continues. The error line never quotes the input.

Exit codes: 0 all lines processed, 1 some line failed, 2 usage (unknown ceiling, unreadable file).`,
    )
    .action(
      action(async (files: string[], opts: { ceiling: string }) => {
        const ceiling = parseCeiling(opts.ceiling);
        const { downlevel } = await import('@aep/protocol');
        const { lines, failed } = await mapJsonl(files, (value, raw, fail) => {
          if (value === null || typeof value !== 'object' || Array.isArray(value)) {
            return fail('AEP_CLI_NOT_AN_OBJECT', 'an AEP event is a JSON object (AEP-0001 §5)');
          }
          const out = downlevel(value, ceiling);
          return out === value ? raw : JSON.stringify(out);
        });
        if (failed > 0) {
          process.stderr.write(`aep: AEP_CLI_BAD_JSON: ${failed} of ${lines} lines were not JSON objects (replaced by error lines)\n`);
          process.exitCode = EXIT.INVALID;
        }
      }),
    );
}
