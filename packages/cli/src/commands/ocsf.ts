import type { Command } from 'commander';
import { action } from '../util/errors.js';
import { parseCeiling } from './downlevel.js';
import { envelopeProblem, mapBridgeLines } from './otlp.js';

/** `aep ocsf`: AEP events as OCSF 1.8.0 records, offline (AEP-0005 §4). */
export function register(program: Command): void {
  program
    .command('ocsf')
    .description('AEP events as OCSF 1.8.0 records (AEP-0005 §4): JSONL in -> one record (or null) per line')
    .argument('[files...]', 'JSONL inputs (default: stdin; "-" = stdin)')
    .option('--max-capture <level>', 'projection ceiling: an event whose capture is above it projects with no unmapped.data (default metadata)')
    .addHelpText(
      'after',
      `
Each input line is an AEP event; each output line is its OCSF record, or null when its type has
no OCSF class (only the session, tool and attention lifecycles project: Authentication 3002,
Process Activity 1007, Detection Finding 2004; control, progress, presence, messages and x.*
give null by design). disposition_id only where the event asserts the outcome (tool.denied
Blocked, a dismissed resolution or a timeout No Action), with metadata.profiles
["security_control"]. unmapped.aep carries every envelope attribute verbatim; unmapped.data the
payload when it survives --max-capture. A line that is not a valid AEP envelope gives null and
one stderr line naming the rule; the rest still map.

Exit codes: 0 ok, 1 some line could not be mapped, 2 usage / unreadable input.

Examples:
  aep ocsf events.jsonl > findings.jsonl
  aep tail --json --count 100 | aep ocsf --max-capture redacted`,
    )
    .action(
      action(async (files: string[], opts: { maxCapture?: string }) => {
        const maxCapture = opts.maxCapture === undefined ? undefined : parseCeiling(opts.maxCapture);
        const { toOcsfRecord } = await import('@aep/bridges');
        const problem = await envelopeProblem();
        await mapBridgeLines('ocsf', files, (value) => {
          const bad = problem(value);
          if (bad !== undefined) return { out: null, error: bad };
          const r = toOcsfRecord(value, maxCapture ? { maxCapture } : {});
          if (!r.ok) return { out: null, error: `${r.issue.code}: ${r.issue.message}` };
          return { out: r.value, warnings: r.diagnostics.filter((d) => d.rule !== 'capture.above-max').map((d) => d.message) };
        });
      }),
    );
}
