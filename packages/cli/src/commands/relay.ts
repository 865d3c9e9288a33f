import type { Command } from 'commander';
import { action } from '../util/errors.js';
import { CliError } from '../util/errors.js';

/** `aep relay`: run the AEP relay (not yet implemented). */
export function register(program: Command): void {
  program
    .command('relay')
    .description('run the AEP relay')
    .action(action(() => {
      throw new CliError('AEP_CLI_NOT_IMPLEMENTED', 'aep relay is not implemented yet');
    }));
}
