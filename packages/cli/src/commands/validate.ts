import type { Command } from 'commander';
import { action } from '../util/errors.js';
import { CliError } from '../util/errors.js';

/** `aep validate`: validate AEP JSONL streams (not yet implemented). */
export function register(program: Command): void {
  program
    .command('validate')
    .description('validate AEP JSONL streams')
    .action(action(() => {
      throw new CliError('AEP_CLI_NOT_IMPLEMENTED', 'aep validate is not implemented yet');
    }));
}
