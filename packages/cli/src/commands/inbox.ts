import type { Command } from 'commander';
import { action } from '../util/errors.js';
import { CliError } from '../util/errors.js';

/** `aep inbox`: list pending attention requests (not yet implemented). */
export function register(program: Command): void {
  program
    .command('inbox')
    .description('list pending attention requests')
    .action(action(() => {
      throw new CliError('AEP_CLI_NOT_IMPLEMENTED', 'aep inbox is not implemented yet');
    }));
}
