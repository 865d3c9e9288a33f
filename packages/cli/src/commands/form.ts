import type { Command } from 'commander';
import { action, CliError } from '../util/errors.js';
import { EXIT } from '../util/exit.js';
import { readAll } from '../util/lines.js';
import { parseCeiling } from './downlevel.js';

/** Reads `{"fields":[...],"values":{...}}` from stdin; exit 2 (`AEP_CLI_BAD_INPUT`/`AEP_CLI_BAD_JSON`) otherwise. */
async function readFormInput(): Promise<{ fields: unknown[]; values: unknown }> {
  const text = await readAll();
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new CliError('AEP_CLI_BAD_JSON', 'stdin is not valid JSON (expected {"fields":[...],"values":{...}})', EXIT.USAGE);
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
    throw new CliError('AEP_CLI_BAD_INPUT', 'stdin must be a JSON object {"fields":[...],"values":{...}}', EXIT.USAGE);
  }
  const d = doc as Record<string, unknown>;
  if (!Array.isArray(d['fields'])) throw new CliError('AEP_CLI_BAD_INPUT', '"fields" must be an array of field_spec objects (AEP-0002 §5.2)', EXIT.USAGE);
  return { fields: d['fields'], values: d['values'] };
}

const INPUT_HELP = `
Input (stdin): {"fields":[field_spec,...],"values":{field id: answer,...}}, the request's fields and
an answer's values (AEP-0006).`;

/** `aep form`: validate or gate AEP-0006 form answers. */
export function register(program: Command): void {
  const form = program
    .command('form')
    .description('validate or gate AEP-0006 form answers (stdin: {"fields":[...],"values":{...}})');

  form
    .command('validate')
    .description('check form values against the fields: the AEP-0002 §5.3 MUST-reject rules plus project hardening')
    .option('--must-only', 'report only the spec MUST rules (form.required-missing, form.choice-forged, form.values-not-object), not the hardening rules', false)
    .addHelpText('after', `${INPUT_HELP}
Output: one JSON line {"valid":true|false,"issues":[{"rule","path","message","section"},...]}.
Exit codes: 0 valid, 1 invalid (an emitter would nack with reason "invalid"), 2 unreadable input.`)
    .action(action(async (opts: { mustOnly: boolean }) => {
      const { fields, values } = await readFormInput();
      const { validateFormAnswer } = await import('@aep/protocol');
      const issues = validateFormAnswer(fields, values, { strict: !opts.mustOnly });
      process.stdout.write(JSON.stringify({ valid: issues.length === 0, issues }) + '\n');
      if (issues.length > 0) process.exitCode = EXIT.INVALID;
    }));

  form
    .command('gate')
    .description('gate form values at a capture ceiling (AEP-0006, brief 03 §5.2): structural entries kept, free text only at redacted+')
    .requiredOption('--ceiling <level>', 'capture ceiling: none | metadata | redacted | full (required)')
    .addHelpText('after', `${INPUT_HELP}
Output: the gated values object as one JSON line. Keys without a field are dropped; number, boolean
and closed-choice entries are kept at every level (at "none" removing the whole data object is the
emitter's job); string and "other" free-text entries only at redacted and full.
Exit codes: 0 ok, 2 usage (unknown ceiling) or unreadable input.`)
    .action(action(async (opts: { ceiling: string }) => {
      const ceiling = parseCeiling(opts.ceiling);
      const { fields, values } = await readFormInput();
      const { gateFormValues } = await import('@aep/protocol');
      process.stdout.write(JSON.stringify(gateFormValues(fields, values, ceiling)) + '\n');
    }));
}
