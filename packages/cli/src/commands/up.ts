import type { Command } from 'commander';
import { action } from '../util/errors.js';
import { CliError } from '../util/errors.js';

/** `aep up`: start relay + web inbox (the main job) (not yet implemented). */
export function register(program: Command): void {
  program
    .command('up')
    .description('start relay + web inbox (the main job)')
    .action(action(() => {
      throw new CliError('AEP_CLI_NOT_IMPLEMENTED', 'aep up is not implemented yet');
    }));
}
