import type { Command } from 'commander';
import { action } from '../util/errors.js';
import { CliError } from '../util/errors.js';

/** `aep respond`: answer an attention request (not yet implemented). */
export function register(program: Command): void {
  program
    .command('respond')
    .description('answer an attention request')
    .action(action(() => {
      throw new CliError('AEP_CLI_NOT_IMPLEMENTED', 'aep respond is not implemented yet');
    }));
}
