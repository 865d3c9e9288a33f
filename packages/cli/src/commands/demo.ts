import type { Command } from 'commander';
import { action } from '../util/errors.js';
import { CliError } from '../util/errors.js';

/** `aep demo`: demo emitters (not yet implemented). */
export function register(program: Command): void {
  program
    .command('demo')
    .description('demo emitters')
    .action(action(() => {
      throw new CliError('AEP_CLI_NOT_IMPLEMENTED', 'aep demo is not implemented yet');
    }));
}
