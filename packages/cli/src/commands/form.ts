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
    .description('AEP-0006 forms and answers: validate or gate values, map a text answer (AEP-0008), build a request at a capture level');

  form
    .command('validate')
    .description('check form values against the fields: the AEP-0002 §5.3 MUST-reject rules plus project hardening')
    .option(
      '--must-only',
      'report only the spec MUST rules (form.required-missing, form.choice-forged, form.values-not-object), not the hardening rules',
      false,
    )
    .addHelpText(
      'after',
      `${INPUT_HELP}
Output: one JSON line {"valid":true|false,"issues":[{"rule","path","message","section"},...]}.
Exit codes: 0 valid, 1 invalid (an emitter would nack with reason "invalid"), 2 unreadable input.`,
    )
    .action(
      action(async (opts: { mustOnly: boolean }) => {
        const { fields, values } = await readFormInput();
        const { validateFormAnswer } = await import('@aep/protocol');
        const issues = validateFormAnswer(fields, values, { strict: !opts.mustOnly });
        process.stdout.write(JSON.stringify({ valid: issues.length === 0, issues }) + '\n');
        if (issues.length > 0) process.exitCode = EXIT.INVALID;
      }),
    );

  form
    .command('gate')
    .description('gate form values at a capture ceiling (AEP-0006, AEP-0002 §5.3): structural entries kept, free text only at redacted+')
    .requiredOption('--ceiling <level>', 'capture ceiling: none | metadata | redacted | full (required)')
    .addHelpText(
      'after',
      `${INPUT_HELP}
Output: the gated values object as one JSON line. Keys without a field are dropped; number, boolean
and closed-choice entries are kept at every level (at "none" removing the whole data object is the
emitter's job); string and "other" free-text entries only at redacted and full.
Exit codes: 0 ok, 2 usage (unknown ceiling) or unreadable input.`,
    )
    .action(
      action(async (opts: { ceiling: string }) => {
        const ceiling = parseCeiling(opts.ceiling);
        const { fields, values } = await readFormInput();
        const { gateFormValues } = await import('@aep/protocol');
        process.stdout.write(JSON.stringify(gateFormValues(fields, values, ceiling)) + '\n');
      }),
    );

  form
    .command('map-text')
    .description("map a text-only answer to one of a request's options (AEP-0008 §1); never grants a permission from unmatched text")
    .option(
      '--refusing-option <id>',
      "id of the request's refusing option (default: the first option whose id is deny/reject/no/decline/refuse/disallow/block)",
    )
    .option(
      '--permission-unmatched <mode>',
      'unmatched text on a permission request: refuse (apply the refusing option, keep the text as reason) | invalid (nack)',
      'refuse',
    )
    .option('--other-unmatched <mode>', 'unmatched text on other kinds: text (a text answer) | invalid (nack)', 'text')
    .option(
      '--capture <level>',
      'print the answer as recorded on attention.answered at this capture level (text only at redacted+, through the §9.4 pipeline at redacted); default: the applied answer ungated',
    )
    .addHelpText(
      'after',
      `
Input (stdin): {"request":{attention.requested data},"text":"…"}.
Output: one JSON line {"option"?,"text"?,"invalid"?}: what to apply and record on attention.answered.
Exit codes: 0 mapped or recorded as text, 1 the answer would be nacked (invalid), 2 usage or unreadable input.`,
    )
    .action(
      action(async (opts: { refusingOption?: string; permissionUnmatched: string; otherUnmatched: string; capture?: string }) => {
        const capture = opts.capture !== undefined ? parseCeiling(opts.capture) : undefined;
        if (opts.permissionUnmatched !== 'refuse' && opts.permissionUnmatched !== 'invalid') {
          throw new CliError(
            'AEP_CLI_BAD_OPTION',
            `--permission-unmatched must be refuse or invalid; got ${JSON.stringify(opts.permissionUnmatched)}`,
            EXIT.USAGE,
          );
        }
        if (opts.otherUnmatched !== 'text' && opts.otherUnmatched !== 'invalid') {
          throw new CliError('AEP_CLI_BAD_OPTION', `--other-unmatched must be text or invalid; got ${JSON.stringify(opts.otherUnmatched)}`, EXIT.USAGE);
        }
        const doc = await readJsonObject('{"request":{...},"text":"..."}');
        if (typeof doc['text'] !== 'string') throw new CliError('AEP_CLI_BAD_INPUT', '"text" must be a string', EXIT.USAGE);
        const { mapTextAnswer, gateAnswer } = await import('@aep/protocol');
        const r = mapTextAnswer(doc['request'], doc['text'], {
          ...(opts.refusingOption !== undefined ? { refusingOption: opts.refusingOption } : {}),
          permissionUnmatched: opts.permissionUnmatched,
          otherUnmatched: opts.otherUnmatched,
        });
        process.stdout.write(JSON.stringify(r.invalid || capture === undefined ? r : gateAnswer(r, capture)) + '\n');
        if (r.invalid) process.exitCode = EXIT.INVALID;
      }),
    );

  form
    .command('request')
    .description(
      'build attention.requested data at a capture level (AEP-0003 §9.2): synthesized prompt and label placeholders at metadata, §9.4 pipeline at redacted',
    )
    .requiredOption('--capture <level>', 'capture level of the event: none | metadata | redacted | full (required)')
    .option('--agent <name>', 'the emitting agent, used in the synthesized prompt', 'agent')
    .option('--subject <id>', 'the event subject (an identifier), used in the synthesized prompt')
    .option('--placeholder <kind>', 'label placeholder at metadata: id | index (1-based)', 'id')
    .option('--home <dir>', 'home directory rewritten to "~" by the pipeline at redacted (default: none; generic home prefixes are always rewritten)')
    .addHelpText(
      'after',
      `
Input (stdin): {"kind","prompt","options"?,"fields"?,"expires_at"?,"respond_via"?,"context"?} with real text.
Output: the data object as one JSON line, or "null" at capture none (the event carries no data).
Exit codes: 0 ok, 2 usage or unreadable input.`,
    )
    .action(
      action(async (opts: { capture: string; agent: string; subject?: string; placeholder: string; home?: string }) => {
        const capture = parseCeiling(opts.capture);
        if (opts.placeholder !== 'id' && opts.placeholder !== 'index') {
          throw new CliError('AEP_CLI_BAD_OPTION', `--placeholder must be id or index; got ${JSON.stringify(opts.placeholder)}`, EXIT.USAGE);
        }
        const doc = await readJsonObject('{"kind":…,"prompt":…}');
        if (typeof doc['kind'] !== 'string' || typeof doc['prompt'] !== 'string') {
          throw new CliError('AEP_CLI_BAD_INPUT', '"kind" and "prompt" must be strings (AEP-0002 §5.3)', EXIT.USAGE);
        }
        const { buildAttentionRequestData } = await import('@aep/protocol');
        const data = buildAttentionRequestData(doc as never, capture, {
          agent: opts.agent,
          ...(opts.subject !== undefined ? { subject: opts.subject } : {}),
          placeholder: opts.placeholder,
          redaction: opts.home !== undefined ? { home: opts.home } : {},
        });
        process.stdout.write(JSON.stringify(data ?? null) + '\n');
      }),
    );
}

/** Reads one JSON object from stdin; exit 2 (`AEP_CLI_BAD_JSON`/`AEP_CLI_BAD_INPUT`) otherwise. */
async function readJsonObject(shape: string): Promise<Record<string, unknown>> {
  const text = await readAll();
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new CliError('AEP_CLI_BAD_JSON', `stdin is not valid JSON (expected ${shape})`, EXIT.USAGE);
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc))
    throw new CliError('AEP_CLI_BAD_INPUT', `stdin must be a JSON object ${shape}`, EXIT.USAGE);
  return doc as Record<string, unknown>;
}
