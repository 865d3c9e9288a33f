import { homedir } from 'node:os';
import type { Command } from 'commander';
import { action, CliError } from '../util/errors.js';
import { EXIT } from '../util/exit.js';
import { readAll } from '../util/lines.js';

interface RedactCliOptions {
  home?: string | false;
  secretValue: string[];
  secretEnv: string[];
  secretName: string[];
  pii: boolean;
  json?: boolean;
}

const collect = (v: string, prev: string[]) => [...prev, v];

/** `aep redact`: run the AEP-0003 §9.4 redaction pipeline over stdin. */
export function register(program: Command): void {
  program
    .command('redact')
    .description('run the AEP-0003 §9.4 redaction pipeline over stdin (secrets, configured secrets, home paths, PII)')
    .option('--home <dir>', 'home directory whose prefix becomes "~" (default: the current user\'s home directory)')
    .option('--no-home', "do not rewrite the current user's home prefix (generic /home/<user>, /Users/<user>, C:\\Users\\<user> are still rewritten)")
    .option(
      '--secret-value <value>',
      'a secret value to replace literally; repeatable (values shorter than 4 characters are ignored; prefer --secret-env, argv is visible to other users)',
      collect,
      [],
    )
    .option('--secret-env <NAME>', 'an environment variable whose value is a secret, and whose name is a secret key name; repeatable', collect, [])
    .option('--secret-name <NAME>', 'a configuration key whose values are secret (NAME=…, "NAME": …); repeatable', collect, [])
    .option('--no-pii', 'do not redact e-mail addresses and phone numbers (PII redaction is on by default)')
    .option(
      '--json',
      'read stdin as one JSON value and redact every string in it (credential-named keys are redacted whatever their value); default: stdin is plain text',
      false,
    )
    .addHelpText(
      'after',
      `
Reads all of stdin as one blob and writes the redacted result to stdout (text mode keeps the input's
line endings; --json prints one JSON line). Steps, in order: (a) secrets -> [REDACTED:secret]
(PEM blocks, AWS key ids, Bearer tokens, credential assignments, JWTs, vendor tokens); (b) configured
secret names/values; (c) home prefixes -> ~; (d) e-mail addresses and phone numbers -> [REDACTED:pii].

Exit codes: 0 ok, 2 usage or unreadable input (--json with stdin that is not JSON: AEP_CLI_BAD_JSON).`,
    )
    .action(
      action(async (opts: RedactCliOptions) => {
        const { redact, redactValue } = await import('@aep/protocol');
        const secretValues = [...opts.secretValue];
        const secretNames = [...opts.secretName];
        for (const name of opts.secretEnv) {
          const v = process.env[name];
          if (v === undefined) throw new CliError('AEP_CLI_BAD_OPTION', `--secret-env ${name}: no such environment variable`, EXIT.USAGE);
          secretValues.push(v);
          secretNames.push(name);
        }
        const home = opts.home === false ? undefined : (opts.home ?? homedir());
        const ro = { home, secretValues, secretNames, pii: opts.pii };
        const input = await readAll();
        if (opts.json) {
          let value: unknown;
          try {
            value = JSON.parse(input);
          } catch {
            throw new CliError('AEP_CLI_BAD_JSON', 'stdin is not valid JSON (--json expects exactly one JSON value)', EXIT.USAGE);
          }
          process.stdout.write(JSON.stringify(redactValue(value, ro)) + '\n');
          return;
        }
        process.stdout.write(redact(input, ro));
      }),
    );
}
