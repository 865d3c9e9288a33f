import type { Command } from 'commander';
import { action, CliError } from '../util/errors.js';
import { EXIT } from '../util/exit.js';
import type { LineSpans } from '../util/lines.js';
import type * as ProtocolModule from '@aep/protocol';

interface ValidateCliOptions {
  json?: boolean;
  emitter?: boolean;
  stream?: boolean;
  dedupeWindow?: string;
}

/** One reported problem, located in its input. */
interface Located {
  file: string;
  line: number;
  id: string | null;
  rule: string;
  path: string;
  message: string;
  section: string;
}

const HELP = `
Reads AEP 0.1 events as JSONL (one JSON object per line) and reports every problem, one line
each, on stdout:

  FILE:LINE ID RULE message (SECTION)

ID is the event's id ("-" when it has none). All inputs are read in order as ONE stream, so the
cross-event rules (same (source, id) with different content, (epoch, seq) regressions and
duplicate positions per (source, session), run and session terminals, the attention lifecycle,
one ack per command, the AEP-0006 form answer rules, capture honesty of answer values) apply
across files. Input is streamed line by line: memory stays bounded by live session state plus
the dedupe window, so multi-GB files work. Rule ids and their spec sections: docs/rules.md.

Consumer tolerance (default) vs emitter strictness (--emitter):
  By default the file is judged as a consumer must read it (AEP-0001 §6, §10): unregistered
  members of known categories (e.g. progress.some_future_member) and unknown extension
  attributes are accepted, and blank lines are skipped.
  With --emitter the file is judged as an emitter must write it: an unregistered core-category
  type is rejected (type.unregistered: emitters emit only registered core types or x.{vendor}.*
  types), and so are blank lines (jsonl.blank-line).
  Both modes reject everything that breaks the envelope schema, the payload schema of a
  registered type, capture honesty or a stream rule.

Input handling: a leading UTF-8 byte order mark is removed and accepted; CRLF line ends are
accepted in both modes; a line that is not JSON (including binary garbage) is reported as
jsonl.not-json and validation continues; very long lines and deeply nested JSON are handled
(nesting beyond what the parser accepts is a jsonl.not-json line); an empty file is a valid,
empty stream. Memory: the last --dedupe-window (source, id) fingerprints, and per session up to
10,000 closed runs, acks and attention requests, are remembered; a repeat older than that is
not recognized as a redelivery.

Exit codes: 0 every event valid, 1 any problem found, 2 usage error or unreadable input.

--json prints one machine report instead (streamed, so it also works on huge inputs):
  {"issues":[{"file","line","id","rule","path","message","section"},...],
   "ok":true|false,"counts":{"lines","events","blank","invalid","issues","rules":{rule:n}}}`;

// Control characters and lone surrogates would garble a terminal; JSON.parse messages quote
// fragments of the input, which may be binary garbage.
function printable(s: string, max = 160): string {
  let out = '';
  for (const ch of s.length > max ? s.slice(0, max) + '…' : s) {
    const c = ch.codePointAt(0)!;
    out += c < 0x20 || c === 0x7f || (c >= 0x80 && c < 0xa0) || (c >= 0xd800 && c <= 0xdfff) ? `\\u${c.toString(16).padStart(4, '0')}` : ch;
  }
  return out;
}

/** `aep validate`: validate AEP JSONL streams (AEP-0001, AEP-0002, AEP-0006). */
export function register(program: Command): void {
  program
    .command('validate')
    .description('validate AEP JSONL streams: envelope, payloads, capture, stream and form rules')
    .argument('[files...]', 'JSONL inputs, read in order as one stream (default: stdin; "-" = stdin)')
    .option('--json', 'print one machine-readable JSON report instead of one line per problem (default: off)')
    .option('--emitter', 'emitter strictness: also reject unregistered core types and blank lines (default: consumer tolerance)')
    .option('--no-stream', 'check each event on its own, skipping the cross-event rules (default: stream rules on)')
    .option('--dedupe-window <n>', 'how many (source, id) fingerprints to remember for dedupe and id conflicts', '1000000')
    .addHelpText('after', HELP)
    .action(
      action(async (files: string[], opts: ValidateCliOptions) => {
        const window = Number(opts.dedupeWindow ?? '1000000');
        if (!Number.isInteger(window) || window < 1) {
          throw new CliError('AEP_CLI_BAD_OPTION', `--dedupe-window must be a positive integer, got "${opts.dedupeWindow}"`, EXIT.USAGE);
        }
        const inputs = files.length === 0 ? ['-'] : files;
        const { stat } = await import('node:fs/promises');
        let bytes = 0;
        for (const f of inputs) {
          if (f === '-') continue;
          let st;
          try {
            st = await stat(f);
          } catch (err) {
            throw new CliError('AEP_CLI_UNREADABLE', `cannot read ${f}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`, EXIT.USAGE);
          }
          if (st.isDirectory()) throw new CliError('AEP_CLI_UNREADABLE', `cannot read ${f}: it is a directory`, EXIT.USAGE);
          if (st.isFile()) bytes += st.size;
        }
        if (inputs.filter((f) => f === '-').length > 1) throw new CliError('AEP_CLI_BAD_OPTION', 'stdin ("-") can be given only once', EXIT.USAGE);
        const ok = await runValidate(inputs, { json: opts.json === true, emitter: opts.emitter === true, stream: opts.stream !== false, window, bytes });
        process.exitCode = ok ? EXIT.OK : EXIT.INVALID;
      }),
    );
}

interface RunOptions {
  json: boolean;
  emitter: boolean;
  stream: boolean;
  window: number;
  /** Size of the regular files among the inputs (0 when unknown), to size the stream rules' tables up front. */
  bytes: number;
}

type Protocol = typeof ProtocolModule;
type RuleName = keyof Protocol['RULES'];

/** Buffered output past which the line loop yields to flush (constant memory). */
const FLUSH_AT = 65536;

/**
 * The per-line work of `aep validate`, synchronous and closure-free (hot path: one call per
 * line, state in fields); the async driver only reads batches and flushes the output buffer.
 */
class LineChecker {
  readonly counts = { lines: 0, events: 0, blank: 0, invalid: 0, issues: 0, rules: {} as Record<string, number> };
  buf = '';
  private first = true;
  private index = 0;
  private readonly sv: InstanceType<Protocol['StreamValidator']> | null;
  private readonly eventOpts: { emitter: boolean };
  /** Reused for every line; `bytes[start..end)` is the line the text was decoded from (raw fingerprints). */
  private readonly hints: { envelopeValid: boolean; raw: string; bytes: Uint8Array | undefined; start: number; end: number } = {
    envelopeValid: true,
    raw: '',
    bytes: undefined,
    start: 0,
    end: 0,
  };

  constructor(
    private readonly p: Protocol,
    private readonly o: RunOptions,
  ) {
    this.sv = o.stream ? new p.StreamValidator({ dedupeWindow: o.window, rawFingerprints: true }) : null;
    this.eventOpts = { emitter: o.emitter };
    if (o.json) this.buf += '{"issues":[';
  }

  private report(file: string, line: number, id: string | null, rule: string, path: string, message: string, section: string): void {
    const counts = this.counts;
    counts.issues++;
    counts.rules[rule] = (counts.rules[rule] ?? 0) + 1;
    if (this.o.json) {
      const x: Located = { file, line, id, rule, path, message, section };
      this.buf += (this.first ? '' : ',') + JSON.stringify(x);
      this.first = false;
    } else {
      this.buf += `${file}:${line} ${id ?? '-'} ${rule} ${path ? path + ': ' : ''}${message} (${section})\n`;
    }
  }

  private fail(file: string, line: number, rule: RuleName, message: string): void {
    this.report(file, line, null, rule, '', message, this.p.RULES[rule].section);
  }

  /**
   * Checks lines `from..` of a chunk; returns where it stopped (output buffer full) or the count.
   * Each line is decoded right before it is checked, so only one line string is alive at a time.
   */
  run(spans: LineSpans, from: number): number {
    const { file, buf, starts, ends, count, firstLineNo } = spans;
    if (this.index === 0 && from === 0 && this.sv !== null && this.o.bytes > 0) {
      // The first lines tell how long lines are: expect the files' size in such lines.
      const avg = Math.max(1, (ends[count - 1]! - starts[0]!) / count);
      this.sv.reserve(this.o.bytes / avg);
    }
    const hints = this.hints;
    hints.bytes = buf;
    for (let k = from; k < count; k++) {
      const start = starts[k]!;
      const end = ends[k]!;
      hints.start = start;
      hints.end = end;
      this.line(file, firstLineNo + k, buf.toString('utf8', start, end));
      if (this.buf.length > FLUSH_AT) {
        hints.bytes = undefined;
        return k + 1;
      }
    }
    hints.bytes = undefined;
    return count;
  }

  private line(file: string, lineNo: number, text: string): void {
    const counts = this.counts;
    counts.lines++;
    const c0 = text.charCodeAt(0);
    if (
      text.length === 0 ||
      ((c0 === 32 || c0 === 9 || c0 === 13 || c0 === 0xa0 || c0 === 0x3000 || c0 === 0xfeff || (c0 >= 0x2000 && c0 <= 0x200a)) && text.trim() === '')
    ) {
      counts.blank++;
      if (this.o.emitter) {
        this.fail(file, lineNo, 'jsonl.blank-line', 'blank line');
        counts.invalid++;
      }
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      this.fail(file, lineNo, 'jsonl.not-json', `line is not JSON: ${printable(err instanceof Error ? err.message : String(err))}`);
      counts.invalid++;
      return;
    }
    counts.events++;
    let lineBad = false;
    let envelopeValid = true;
    const issues = this.p.validateEvent(value, this.eventOpts);
    for (let k = 0; k < issues.length; k++) {
      const i = issues[k]!;
      lineBad = true;
      if (i.rule.startsWith('envelope.')) envelopeValid = false;
      this.report(file, lineNo, idOf(value), i.rule, i.path, printable(i.message, 400), i.section);
    }
    if (this.sv !== null) {
      const hints = this.hints;
      hints.envelopeValid = envelopeValid;
      hints.raw = text;
      const more = this.sv.push(value, this.index, hints);
      hints.raw = '';
      for (let k = 0; k < more.length; k++) {
        const i = more[k]!;
        lineBad = true;
        this.report(file, lineNo, idOf(value), i.rule, i.path, printable(i.message, 400), i.section);
      }
    }
    this.index++;
    if (lineBad) counts.invalid++;
  }

  /** Closes the JSON report (call once, after the last line). */
  finish(ok: boolean): void {
    if (this.o.json) this.buf += `],"ok":${ok},"counts":${JSON.stringify(this.counts)}}\n`;
  }
}

/** The printable id of a parsed line (computed only when something is reported). */
function idOf(value: unknown): string | null {
  const idv = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>)['id'] : undefined;
  return typeof idv === 'string' && idv.length > 0 ? printable(idv, 80).replace(/\s/g, '_') : null;
}

async function runValidate(inputs: string[], o: RunOptions): Promise<boolean> {
  const p = await import('@aep/protocol');
  const { readLineSpans } = await import('../util/lines.js');
  const checker = new LineChecker(p, o);

  // Buffered stdout with backpressure: constant memory whatever the number of issues.
  const flush = async (): Promise<void> => {
    if (checker.buf === '') return;
    const chunk = checker.buf;
    checker.buf = '';
    if (!process.stdout.write(chunk)) await new Promise<void>((resolve) => process.stdout.once('drain', resolve));
  };

  try {
    for await (const spans of readLineSpans(inputs)) {
      for (let k = checker.run(spans, 0); k < spans.count; k = checker.run(spans, k)) await flush();
      if (checker.buf.length > FLUSH_AT) await flush();
    }
  } catch (err) {
    await flush();
    const code = (err as NodeJS.ErrnoException).code;
    throw new CliError('AEP_CLI_UNREADABLE', `cannot read input: ${code ?? (err instanceof Error ? err.message : String(err))}`, EXIT.USAGE);
  }
  const counts = checker.counts;
  const ok = counts.issues === 0;
  checker.finish(ok);
  await flush();
  if (!o.json) {
    process.stderr.write(
      `aep validate: ${counts.events} events in ${counts.lines} lines: ${ok ? 'all valid' : `${counts.invalid} invalid lines, ${counts.issues} problems`}\n`,
    );
  }
  return ok;
}
