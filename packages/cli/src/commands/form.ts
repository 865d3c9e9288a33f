import type { Command } from 'commander';
import { action } from '../util/errors.js';
import { CliError } from '../util/errors.js';

/** `aep form`: validate or gate AEP-0006 form answers (not yet implemented). */
export function register(program: Command): void {
  program
    .command('form')
    .description('validate or gate AEP-0006 form answers')
    .action(action(() => {
      throw new CliError('AEP_CLI_NOT_IMPLEMENTED', 'aep form is not implemented yet');
    }));
}
