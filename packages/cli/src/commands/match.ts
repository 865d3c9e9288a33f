import type { Command } from 'commander';
import { action, CliError } from '../util/errors.js';
import { EXIT } from '../util/exit.js';
import { mapJsonl } from './downlevel.js';

/** `aep match`: evaluate an attr-match filter against JSONL events (AEP-0003 §6). */
export function register(program: Command): void {
  program
    .command('match')
    .description('evaluate an attr-match filter against JSONL events (AEP-0003 §6)')
    .argument('[files...]', 'JSONL inputs (default: stdin; "-" = stdin)')
    .requiredOption('--filter <json>', 'the attr-match filter, a JSON object, e.g. \'{"type":"attention.*"}\' (required)')
    .addHelpText(
      'after',
      `
Writes one {"match":true|false} line per input line. Events need not be valid envelopes; a JSON
value that is not an object never matches. Defaults are applied before matching (severity info,
capture metadata, epoch 0). A blank line gives a blank line. A line that is not JSON is replaced by
{"error":"AEP_CLI_BAD_JSON","file":…,"line":N,"message":…} and the command continues.

An invalid filter (forbidden key such as "seq", bare "*", glob outside type, empty array,
bad severity comparison, null/object/float values) is refused as a whole, naming the rule
(invalid-filter.*): fail closed, never match-all.

Exit codes: 0 all lines processed, 1 some line was not JSON, 2 usage (invalid filter, unreadable file).`,
    )
    .action(
      action(async (files: string[], opts: { filter: string }) => {
        let parsed: unknown;
        try {
          parsed = JSON.parse(opts.filter);
        } catch {
          throw new CliError('AEP_CLI_BAD_FILTER', '--filter is not valid JSON (an attr-match filter is a JSON object, AEP-0003 §6.1)', EXIT.USAGE);
        }
        const { compileFilter } = await import('@aep/protocol');
        const compiled = compileFilter(parsed);
        if (!compiled.ok) {
          throw new CliError(
            'AEP_CLI_BAD_FILTER',
            `invalid attr-match filter (AEP-0003 §6.2, fail closed): ${compiled.issues.map((i) => `${i.path || '/'}: ${i.message}`).join('; ')}`,
            EXIT.USAGE,
          );
        }
        const TRUE = '{"match":true}';
        const FALSE = '{"match":false}';
        const { lines, failed } = await mapJsonl(files, (value) => (compiled.match(value) ? TRUE : FALSE));
        if (failed > 0) {
          process.stderr.write(`aep: AEP_CLI_BAD_JSON: ${failed} of ${lines} lines were not JSON (replaced by error lines)\n`);
          process.exitCode = EXIT.INVALID;
        }
      }),
    );
}
