import type { Command } from 'commander';
import { action } from '../util/errors.js';
import { CliError } from '../util/errors.js';

/** `aep answer`: answer an attention request interactively (not yet implemented). */
export function register(program: Command): void {
  program
    .command('answer')
    .description('answer an attention request interactively')
    .action(action(() => {
      throw new CliError('AEP_CLI_NOT_IMPLEMENTED', 'aep answer is not implemented yet');
    }));
}
