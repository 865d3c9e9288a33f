import type { Command } from 'commander';
import { action } from '../util/errors.js';
import { CliError } from '../util/errors.js';

/** `aep match`: evaluate an attr-match filter against events (not yet implemented). */
export function register(program: Command): void {
  program
    .command('match')
    .description('evaluate an attr-match filter against events')
    .action(action(() => {
      throw new CliError('AEP_CLI_NOT_IMPLEMENTED', 'aep match is not implemented yet');
    }));
}
