import type { Command } from 'commander';
import { action } from '../util/errors.js';
import { CliError } from '../util/errors.js';

/** `aep claude-code`: Claude Code adapter (not yet implemented). */
export function register(program: Command): void {
  program
    .command('claude-code')
    .description('Claude Code adapter')
    .action(action(() => {
      throw new CliError('AEP_CLI_NOT_IMPLEMENTED', 'aep claude-code is not implemented yet');
    }));
}
