import type { Command } from 'commander';
import { action } from '../util/errors.js';
import { CliError } from '../util/errors.js';

/** `aep downlevel`: down-level events to a capture ceiling (not yet implemented). */
export function register(program: Command): void {
  program
    .command('downlevel')
    .description('down-level events to a capture ceiling')
    .action(action(() => {
      throw new CliError('AEP_CLI_NOT_IMPLEMENTED', 'aep downlevel is not implemented yet');
    }));
}
