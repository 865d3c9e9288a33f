import type { Command } from 'commander';
import { action } from '../util/errors.js';
import { CliError } from '../util/errors.js';

/** `aep tail`: follow the event stream (not yet implemented). */
export function register(program: Command): void {
  program
    .command('tail')
    .description('follow the event stream')
    .action(action(() => {
      throw new CliError('AEP_CLI_NOT_IMPLEMENTED', 'aep tail is not implemented yet');
    }));
}
